#include "protocol/bedrock_converse/conventions.h"

namespace sluice::protocol::bedrock_converse {

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// ToolUseId's pattern in the service model: [a-zA-Z0-9_.:-]+.
bool id_char(char c) { return name_char(c) || c == '.' || c == ':'; }

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool add(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  out = a + b;
  return out >= a;
}

constexpr std::size_t kMaxIdLength = 64;
constexpr std::size_t kHashedIdKeep = kMaxIdLength - 17;  // "_" + 16 hex digits

}  // namespace

Result<ir::Usage> from_wire_usage(const WireUsage& usage) {
  ir::Usage u;
  std::uint64_t partial = 0;
  if (!add(usage.input_tokens, usage.cache_read_input_tokens, partial) ||
      !add(partial, usage.cache_write_input_tokens, u.input_tokens)) {
    return Error(ErrorKind::kUpstreamProtocol, "usage cannot be converted: token counts overflow");
  }
  u.output_tokens = usage.output_tokens;
  u.cache_read_tokens = usage.cache_read_input_tokens;
  u.cache_write_tokens = usage.cache_write_input_tokens;
  return u;
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
  static constexpr char kHex[] = "0123456789abcdef";
  const std::uint64_t h = fnv1a(id);
  out.push_back('_');
  for (int shift = 60; shift >= 0; shift -= 4) {
    out.push_back(kHex[(h >> shift) & 0xF]);
  }
  return out;
}

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  for (char c : name) {
    if (!name_char(c)) {
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
