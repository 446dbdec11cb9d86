#include "protocol/openai_chat/conventions.h"

#include <limits>

#include "codec/json_writer.h"

namespace sluice::protocol::openai_chat {

ir::FinishReason finish_reason_from_openai(std::string_view reason) {
  if (reason == "stop") {
    return ir::FinishReason::kStop;
  }
  if (reason == "length") {
    return ir::FinishReason::kLength;
  }
  if (reason == "tool_calls" || reason == "function_call") {
    return ir::FinishReason::kToolCalls;
  }
  if (reason == "content_filter") {
    return ir::FinishReason::kContentFilter;
  }
  return ir::FinishReason::kOther;
}

std::string_view finish_reason_to_openai(ir::FinishReason finish) {
  switch (finish) {
    case ir::FinishReason::kLength:
      return "length";
    case ir::FinishReason::kToolCalls:
      return "tool_calls";
    case ir::FinishReason::kContentFilter:
    case ir::FinishReason::kRefusal:
      return "content_filter";
    case ir::FinishReason::kStop:
    case ir::FinishReason::kStopSequence:
    case ir::FinishReason::kPauseTurn:
    case ir::FinishReason::kOther:
    case ir::FinishReason::kUnset:
      break;
  }
  return "stop";
}

void append_usage_json(std::string& out, const ir::Usage& usage) {
  const std::uint64_t total =
      usage.output_tokens > std::numeric_limits<std::uint64_t>::max() - usage.input_tokens
          ? std::numeric_limits<std::uint64_t>::max()
          : usage.input_tokens + usage.output_tokens;
  codec::JsonWriter w(out);
  w.raw(R"({"prompt_tokens":)")
      .number(usage.input_tokens)
      .raw(R"(,"completion_tokens":)")
      .number(usage.output_tokens)
      .raw(R"(,"total_tokens":)")
      .number(total)
      .raw(R"(,"prompt_tokens_details":{"cached_tokens":)")
      .number(usage.cache_read_tokens)
      .raw(R"(},"completion_tokens_details":{"reasoning_tokens":)")
      .number(usage.reasoning_tokens)
      .raw("}}");
}

std::string completion_id(std::string_view id) {
  constexpr std::string_view kPrefix = "chatcmpl-";
  if (id.starts_with(kPrefix)) {
    return std::string(id);
  }
  std::string out;
  out.reserve(kPrefix.size() + id.size());
  out.append(kPrefix).append(id);
  return out;
}

}  // namespace sluice::protocol::openai_chat
