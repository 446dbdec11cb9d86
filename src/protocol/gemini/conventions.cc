#include "protocol/gemini/conventions.h"

#include <array>
#include <span>

#include "codec/json_writer.h"

namespace sluice::protocol::gemini {

namespace {

bool add(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  out = a + b;
  return out >= a;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return add(a, b, out) ? out : UINT64_MAX;
}

bool one_of(std::string_view value, std::span<const std::string_view> names) {
  for (std::string_view n : names) {
    if (n == value) {
      return true;
    }
  }
  return false;
}

}  // namespace

Result<ir::Usage> from_wire_usage(const WireUsage& usage) {
  ir::Usage u;
  if (!add(usage.prompt, usage.tool_use_prompt, u.input_tokens) ||
      !add(usage.candidates, usage.thoughts, u.output_tokens)) {
    return Error(ErrorKind::kUpstreamProtocol, "usage cannot be converted: token counts overflow");
  }
  u.cache_read_tokens = usage.cached_content;
  u.reasoning_tokens = usage.thoughts;
  return u;
}

WireUsage to_wire_usage(const ir::Usage& usage, bool& clamped) {
  WireUsage w;
  w.prompt = usage.input_tokens;
  w.cached_content = usage.cache_read_tokens;
  if (w.cached_content > w.prompt) {
    w.cached_content = w.prompt;
    clamped = true;
  }
  w.thoughts = usage.reasoning_tokens;
  if (w.thoughts > usage.output_tokens) {
    w.thoughts = usage.output_tokens;
    clamped = true;
  }
  w.candidates = usage.output_tokens - w.thoughts;
  w.total = saturating_add(usage.input_tokens, usage.output_tokens);
  return w;
}

void append_usage_json(std::string& out, const WireUsage& usage) {
  codec::JsonWriter w(out);
  w.raw(R"({"promptTokenCount":)")
      .number(usage.prompt)
      .raw(R"(,"candidatesTokenCount":)")
      .number(usage.candidates)
      .raw(R"(,"totalTokenCount":)")
      .number(usage.total);
  if (usage.cached_content > 0) {
    w.raw(R"(,"cachedContentTokenCount":)").number(usage.cached_content);
  }
  if (usage.thoughts > 0) {
    w.raw(R"(,"thoughtsTokenCount":)").number(usage.thoughts);
  }
  w.ch('}');
}

ir::FinishReason finish_reason(std::string_view reason, bool called_functions) {
  static constexpr std::array<std::string_view, 8> kFiltered = {"SAFETY",
                                                                "RECITATION",
                                                                "BLOCKLIST",
                                                                "PROHIBITED_CONTENT",
                                                                "SPII",
                                                                "IMAGE_SAFETY",
                                                                "IMAGE_PROHIBITED_CONTENT",
                                                                "IMAGE_RECITATION"};
  if (reason.empty()) {
    return ir::FinishReason::kUnset;
  }
  if (reason == "STOP") {
    return called_functions ? ir::FinishReason::kToolCalls : ir::FinishReason::kStop;
  }
  if (reason == "MAX_TOKENS") {
    return ir::FinishReason::kLength;
  }
  if (one_of(reason, kFiltered)) {
    return ir::FinishReason::kContentFilter;
  }
  return ir::FinishReason::kOther;
}

ir::FinishReason block_reason(std::string_view reason) {
  static constexpr std::array<std::string_view, 4> kFiltered = {
      "SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY"};
  return one_of(reason, kFiltered) ? ir::FinishReason::kContentFilter : ir::FinishReason::kOther;
}

std::string_view finish_reason_name(ir::FinishReason finish) {
  switch (finish) {
    case ir::FinishReason::kStop:
    case ir::FinishReason::kToolCalls:
    case ir::FinishReason::kStopSequence:
      return "STOP";
    case ir::FinishReason::kLength:
      return "MAX_TOKENS";
    case ir::FinishReason::kContentFilter:
    case ir::FinishReason::kRefusal:
      return "SAFETY";
    case ir::FinishReason::kPauseTurn:
    case ir::FinishReason::kOther:
    case ir::FinishReason::kUnset:
      return "OTHER";
  }
  return "OTHER";
}

std::string answer_call_id(std::string_view response_id, std::size_t index) {
  std::string out = "call_";
  if (!response_id.empty()) {
    out.append(response_id);
    out.push_back('_');
  }
  out.append(std::to_string(index));
  return out;
}

std::string request_call_id(std::size_t content, std::size_t part) {
  return "call_" + std::to_string(content) + "_" + std::to_string(part);
}

}  // namespace sluice::protocol::gemini
