#include "protocol/bedrock_converse/conventions.h"

#include "protocol/tool_ids.h"
#include "protocol/wire_json.h"

namespace sluice::protocol::bedrock_converse {

namespace {

// ToolUseId's pattern in the service model: [a-zA-Z0-9_.:-]+.
bool id_char(char c) { return is_id_word_char(c) || c == '.' || c == ':'; }

constexpr std::size_t kMaxIdLength = 64;
constexpr std::size_t kHashedIdKeep = kMaxIdLength - 17;  // "_" + 16 hex digits

}  // namespace

Result<ir::Usage> from_wire_usage(const WireUsage& usage) {
  return protocol::wire::usage_from_uncached(usage.input_tokens, usage.cache_read_input_tokens,
                                             usage.cache_write_input_tokens, usage.output_tokens);
}

ir::FinishReason finish_reason(std::string_view stop_reason) {
  if (stop_reason == "end_turn") {
    return ir::FinishReason::kStop;
  }
  if (stop_reason == "tool_use") {
    return ir::FinishReason::kToolCalls;
  }
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") {
    return ir::FinishReason::kLength;
  }
  if (stop_reason == "stop_sequence") {
    return ir::FinishReason::kStopSequence;
  }
  if (stop_reason == "guardrail_intervened" || stop_reason == "content_filtered") {
    return ir::FinishReason::kContentFilter;
  }
  if (stop_reason.empty()) {
    return ir::FinishReason::kUnset;
  }
  return ir::FinishReason::kOther;
}

std::string tool_use_id(std::string_view id) {
  if (id.empty()) {
    return {};
  }
  bool clean = id.size() <= kMaxIdLength;
  for (char c : id) {
    clean = clean && id_char(c);
  }
  if (clean) {
    return std::string(id);
  }
  std::string out;
  out.reserve(kMaxIdLength);
  for (char c : id.substr(0, kHashedIdKeep)) {
    out.push_back(id_char(c) ? c : '_');
  }
  append_id_hash(out, id);
  return out;
}

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  for (char c : name) {
    if (!is_id_word_char(c)) {
      return false;
    }
  }
  return true;
}

std::string_view image_format(std::string_view media_type) {
  if (media_type == "image/png") {
    return "png";
  }
  if (media_type == "image/jpeg") {
    return "jpeg";
  }
  if (media_type == "image/gif") {
    return "gif";
  }
  if (media_type == "image/webp") {
    return "webp";
  }
  return {};
}

bool is_claude_model(std::string_view model) {
  return model.find("anthropic.") != std::string_view::npos;
}

}  // namespace sluice::protocol::bedrock_converse
