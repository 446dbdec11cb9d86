#pragma once

// What every protocol's generated reply has in common: the words, the tool call, the token
// arithmetic, the request fields they are derived from and the shape of a lazy stream. Each
// responder (chat_responder, anthropic_responder, gemini_responder, responses_responder)
// only writes these in its provider's wire format.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include "event_source.h"
#include "faults.h"

namespace sluice::mock {

class PromptCache;

// Identity and size of one generated reply.
struct ReplySpec {
  std::uint64_t number = 0;  // the request number: ids are "<prefix><number>"
  std::int64_t created = 0;  // unix seconds
  std::uint32_t words = 8;   // x-mock-events: the text is "Mock reply w1 .. w<words>"
  bool omit_done = false;    // x-mock-omit-done: the stream ends without its terminator
  std::optional<StreamError> stream_error;  // x-mock-stream-error (Anthropic, Bedrock)
  std::optional<std::string> tool_name;     // x-mock-tool-name: the tool a tool call calls
  std::string tool_arguments;               // x-mock-tool-arguments; empty: kToolArguments
  // x-mock-prompt-cache: the simulated provider whose prompt cache the request meets (chat
  // completions only); null: no cache, cached_tokens 0.
  PromptCache* prompt_cache = nullptr;
  std::string_view prompt_cache_scope;
  bool bag_of_words_embeddings = false;  // x-mock-embeddings: bag-of-words
  // x-mock-latency-ms + x-mock-first-byte-ms: what a reply that reports its own latency
  // (Bedrock's metrics.latencyMs) says.
  std::uint32_t latency_ms = 0;
};

// The arguments of every mock tool call, and the three pieces a stream sends them in:
// arbitrary cuts, as providers stream arguments, not tokens.
inline constexpr std::string_view kToolArguments = R"({"mock":true})";
inline constexpr std::array<std::string_view, 3> kToolArgumentFragments = {R"({")", R"(mock":)",
                                                                           "true}"};

// The arguments of a reply's tool call: x-mock-tool-arguments, or kToolArguments.
std::string_view tool_arguments(const ReplySpec& spec);

// The three pieces a stream sends `arguments` in: kToolArgumentFragments for the default
// arguments, otherwise cuts near a third and two thirds (at UTF-8 character boundaries).
std::array<std::string_view, 3> tool_argument_fragments(std::string_view arguments);

// Output tokens of a reply: words + 2 for text, 3 for a tool call.
std::uint32_t output_tokens(bool tool_call, std::uint32_t words);

// Appends the text of a reply, "Mock reply w1 w2 .. wN" (plain ASCII: no JSON escaping
// needed).
void append_reply_text(std::string& out, std::uint32_t words);

// Appends the i-th (1-based) streamed piece of that text: "Mock reply w1", then " w2", ...
// The pieces concatenate to the text.
void append_reply_piece(std::string& out, std::uint32_t i);

// The prompt token estimate: characters / 4 + 1.
std::uint32_t estimate_tokens(std::size_t chars);

// Characters of text in a content value: a string's length, or the sum of the string
// "text" members of an array's objects (OpenAI content parts, Anthropic blocks, Gemini
// parts). Anything else counts 0.
std::size_t text_chars(const boost::json::value& content);

// Members of a given type, or null when absent or of another type.
const boost::json::string* string_member(const boost::json::object& obj, std::string_view key);
const boost::json::array* array_member(const boost::json::object& obj, std::string_view key);
const boost::json::object* object_member(const boost::json::object& obj, std::string_view key);

// A request's tool choice, as far as the mock cares.
struct ToolChoice {
  bool forbidden = false;                  // it rules tool calls out ("none")
  std::optional<std::string_view> forced;  // it names the tool to call
  bool required = false;                   // it demands some call ("required", "any", ANY)
};

// Reads a tool's name from one entry of a "tools" array; nullopt when it has none.
using ToolNameReader = std::optional<std::string_view> (*)(const boost::json::value& tool);

// The string "name" member of an object value (Anthropic and Responses tools, and their
// tool choices).
std::optional<std::string_view> name_member(const boost::json::value& v);

// The name of the first entry of root["tools"] as `name_of` reads it, or "tool" when it has
// none; nullopt when "tools" is absent, not an array or empty.
std::optional<std::string_view> first_tool(const boost::json::object& root, ToolNameReader name_of);

// Which tool a reply calls. nullopt (a text reply) when there is no tool, when the choice
// forbids calls, or when the conversation ends with a tool result (`answered`: the model
// has what it asked for and answers in words) and the choice neither names a tool nor
// requires a call; otherwise the forced tool, or else `first`.
std::optional<std::string> choose_tool(std::optional<std::string_view> first,
                                       const ToolChoice& choice, bool answered);

// A lazily generated stream in three phases: `prelude` events before the content
// (EventKind::kPrelude), `counted` content events (kCounted: these are what stall-after
// and disconnect-after count) and `trailer` events after them (kTrailer). A responder
// derives from it and writes each event.
class PhasedStream : public EventSource {
 public:
  bool next(std::string& out, EventKind& kind) final;

 protected:
  void set_phases(std::uint32_t prelude, std::uint32_t counted, std::uint32_t trailer);
  std::uint32_t counted() const { return counted_; }
  // Position of the event being written in the whole stream, from 0 (sequence numbers).
  std::uint32_t index() const { return position_; }

  // `i` counts from 0 within each phase.
  virtual void prelude_event(std::uint32_t i, std::string& out) = 0;
  virtual void counted_event(std::uint32_t i, std::string& out) = 0;
  virtual void trailer_event(std::uint32_t i, std::string& out) = 0;

 private:
  std::uint32_t prelude_ = 0;
  std::uint32_t counted_ = 0;
  std::uint32_t trailer_ = 0;
  std::uint32_t position_ = 0;
};

// Starts an SSE event whose name is its JSON payload's "type", as Anthropic and the
// Responses API send them: appends `event: <type>\ndata: {"type":"<type>"`. The caller
// appends the remaining members and closes the object, then calls end_sse_event.
void begin_typed_event(std::string& out, std::string_view type);

// Ends an SSE event: the line end and the blank line ("\n\n").
void end_sse_event(std::string& out);

}  // namespace sluice::mock
