#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::ir {

// The protocol-neutral shape of a model call. Ingress codecs decode their wire format into
// it, upstream codecs encode it into the provider's; one IR, N codecs (docs/architecture.md).
// Everything is owned (no views into the caller's bytes), so a Request may outlive the body.

enum class Role : std::uint8_t { kSystem, kUser, kAssistant, kTool };

enum class PartKind : std::uint8_t {
  kText,
  kImage,              // `source` is a URL or base64 data (see `image_is_url`)
  kToolCall,           // assistant asks for a tool: `id`, `name`, `arguments` (JSON text)
  kToolResult,         // answer to a tool call: `id` = the call's id, `parts` = its content
  kReasoning,          // model reasoning text ("thinking"), `signature` when the provider signs it
  kRedactedReasoning,  // opaque reasoning the provider encrypted: `signature` holds the data
};

// One piece of message content. A flat struct rather than a variant: most parts use one or
// two fields, and codecs read them by kind.
struct ContentPart {
  PartKind kind = PartKind::kText;
  std::string text;        // kText, kReasoning
  std::string id;          // kToolCall: call id; kToolResult: id of the call it answers
  std::string name;        // kToolCall: tool name; kReasoning, kRedactedReasoning: the upstream
                           // protocol that signed `signature`, when known (reasoning_seal.h)
  std::string arguments;   // kToolCall: arguments as a JSON text (an object), "{}" when empty
  std::string source;      // kImage: URL, or base64 payload when !image_is_url
  std::string media_type;  // kImage with base64 data: "image/png", ...
  bool image_is_url = false;
  std::string detail;              // kImage: OpenAI "detail" (auto/low/high), when given
  std::string signature;           // kReasoning: signature; kRedactedReasoning: data
  std::vector<ContentPart> parts;  // kToolResult: text / image parts of the result
  bool is_error = false;           // kToolResult: the tool failed
  bool cache_breakpoint = false;   // Anthropic cache_control {"type":"ephemeral"} on this part
  std::string cache_ttl;           // cache_control.ttl when given ("5m", "1h")

  static ContentPart make_text(std::string t) {
    ContentPart p;
    p.text = std::move(t);
    return p;
  }
};

struct Message {
  Role role = Role::kUser;
  std::vector<ContentPart> content;
  std::string name;  // OpenAI participant name, when given
};

struct Tool {
  std::string name;
  std::string description;
  std::string parameters;  // JSON Schema as JSON text; "{\"type\":\"object\"}" when absent
  bool cache_breakpoint = false;
};

enum class ToolChoiceMode : std::uint8_t { kUnset, kAuto, kNone, kRequired, kNamed };

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kUnset;
  std::string name;                        // kNamed
  bool disable_parallel_tool_use = false;  // Anthropic's flag; OpenAI parallel_tool_calls=false
};

// Extended thinking / reasoning controls.
struct Reasoning {
  bool enabled = false;
  std::optional<std::uint32_t> budget_tokens;  // Anthropic thinking.budget_tokens
  std::string effort;                          // OpenAI reasoning_effort: low/medium/high
  std::string summary;  // OpenAI Responses reasoning.summary (auto/concise/detailed), when given
};

// What shape the answer's text must have (structured output): OpenAI chat `response_format`,
// Responses `text.format`, Gemini `responseMimeType` with a schema, Anthropic
// `output_config.format`. kText (the default) puts no constraint on the answer.
struct ResponseFormat {
  enum class Kind : std::uint8_t { kText, kJsonObject, kJsonSchema };
  Kind kind = Kind::kText;
  std::string name;            // kJsonSchema: the schema's name (OpenAI's), "" when not given
  std::string schema;          // kJsonSchema: a JSON Schema as compact JSON text (an object)
  std::string description;     // kJsonSchema: what the answer is for, when given
  std::optional<bool> strict;  // kJsonSchema: OpenAI's strict schema adherence, when given
};

// The OpenAI reasoning effort for a token budget, for targets that take an effort but no budget
// (Chat Completions, Responses): <= 2048 low, <= 8192 medium, else high, the values every
// OpenAI reasoning model accepts.
std::string_view effort_for_budget(std::uint32_t budget);

// What an embeddings call (protocol::Operation::kEmbeddings) asks for. Only texts: token-id
// inputs are tokenizer-specific and only ever passed through to an upstream of the caller's
// protocol.
struct Embed {
  std::vector<std::string> inputs;  // in order; one vector comes back for each
  std::optional<std::uint32_t> dimensions;
  // What the vectors are for, for upstreams that embed documents and queries differently
  // (Cohere's input_type: search_document, search_query, classification, clustering); ""
  // when the caller did not say.
  std::string input_type;
};

struct Request {
  std::string model;
  std::vector<ContentPart> system;  // system prompt, text parts in order
  std::vector<Message> messages;
  std::vector<Tool> tools;
  ToolChoice tool_choice;
  std::optional<std::uint32_t> max_tokens;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::uint32_t> top_k;
  std::vector<std::string> stop;
  bool stream = false;
  std::string user;  // end-user id: OpenAI `user`, Anthropic metadata.user_id
  Reasoning reasoning;
  ResponseFormat response_format;
  Embed embed;  // embeddings calls only; the chat members above are empty then
  // The caller's provider_options bag as compact JSON, "" when none (pipeline/provider_options.h
  // applies it to the upstream body; the IR holds it so the answer cache keys on it).
  std::string provider_options;
};

}  // namespace sluice::ir
