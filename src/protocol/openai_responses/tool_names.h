#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// The names a Responses caller's tools have in the IR, for one translated request. Responses
// groups tools under a `namespace` tool and has freeform `custom` tools; the IR (and every other
// protocol) has only top-level function tools, so request_decoder.h flattens them and the
// encoders (response.h, stream_encoder.h) restore the caller's names from the same mapping.
// Computed from the request's own tools: nothing is kept between requests. Value type; not
// thread-safe to mutate, safe to read from one thread at a time.
namespace sluice::protocol::openai_responses {

struct CallerTool {
  std::string flat;     // the IR name: what the upstream sees and calls
  std::string space;    // the namespace ("" for a top-level tool)
  std::string name;     // the tool's name inside its namespace (or top level)
  bool custom = false;  // freeform: the IR arguments are {"input": "<the text>"}
};

class ToolNames {
 public:
  // At most 64 characters of [A-Za-z0-9_-]: the tool names Anthropic, Bedrock Converse, OpenAI
  // Chat and Gemini all accept.
  static constexpr std::size_t kMaxName = 64;

  // Registers the tools in request order, before assign(). Top-level tools keep their names.
  void add(std::string space, std::string name, bool custom);
  // Gives every namespaced tool its IR name: `<namespace>__<name>` (trailing '_' of the
  // namespace and leading '_' of the name trimmed, as Codex joins them), unless that is not
  // [A-Za-z0-9_-]{1,64} or another tool already has it (top-level names first, then namespaced
  // ones in order); then the join with other characters replaced by '_', cut to 47 characters,
  // and `_` + 16 hex digits of a hash of namespace and name. Deterministic: the same tools give
  // the same names, so a later turn's history matches.
  void assign();

  // The caller's tool an IR name stands for, or null (a name no tool of this request has).
  const CallerTool* find(std::string_view flat) const;
  // The IR name of tool `name` in namespace `space` (a previous turn's call): the assigned one
  // when the request has that tool, else the same rule applied against this request's names.
  std::string flat_name(std::string_view space, std::string_view name) const;
  // Whether any IR name differs from the caller's or stands for a custom tool, i.e. whether the
  // encoders have anything to restore.
  bool restores() const;
  const std::vector<CallerTool>& tools() const { return tools_; }

 private:
  bool taken(std::string_view flat, std::size_t upto) const;
  std::string make_flat(std::string_view space, std::string_view name, std::size_t upto) const;

  std::vector<CallerTool> tools_;
};

// The text a custom tool call carries, from the IR arguments: the "input" string of the JSON
// object, else its only string member, else the arguments as they are.
std::string custom_tool_input(std::string_view arguments);

}  // namespace sluice::protocol::openai_responses
