#include "protocol/anthropic/conventions.h"

#include <string>

#include "codec/json_compact.h"
#include "codec/json_writer.h"
#include "protocol/tool_ids.h"
#include "protocol/wire_json.h"

namespace sluice::protocol::anthropic {
namespace json = boost::json;

namespace {

bool add(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  out = a + b;
  return out >= a;
}

}  // namespace

Result<WireUsage> to_wire_usage(const ir::Usage& usage) {
  std::uint64_t cached = 0;
  if (!add(usage.cache_read_tokens, usage.cache_write_tokens, cached) ||
      cached > usage.input_tokens) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "usage cannot be converted: input_tokens " + std::to_string(usage.input_tokens) +
                     " is smaller than cache_read " + std::to_string(usage.cache_read_tokens) +
                     " + cache_write " + std::to_string(usage.cache_write_tokens));
  }
  WireUsage w;
  w.input_tokens = usage.input_tokens - cached;
  w.cache_creation_input_tokens = usage.cache_write_tokens;
  w.cache_read_input_tokens = usage.cache_read_tokens;
  w.output_tokens = usage.output_tokens;
  return w;
}

WireUsage to_wire_usage_clamped(const ir::Usage& usage, bool& clamped) {
  if (auto exact = to_wire_usage(usage)) {
    return *exact;
  }
  clamped = true;
  WireUsage w;
  w.input_tokens = 0;
  w.cache_creation_input_tokens = usage.cache_write_tokens;
  w.cache_read_input_tokens = usage.cache_read_tokens;
  w.output_tokens = usage.output_tokens;
  return w;
}

Result<ir::Usage> from_wire_usage(const WireUsage& usage) {
  return protocol::wire::usage_from_uncached(usage.input_tokens, usage.cache_read_input_tokens,
                                             usage.cache_creation_input_tokens,
                                             usage.output_tokens);
}

void append_usage_json(std::string& out, const WireUsage& usage) {
  codec::JsonWriter w(out);
  w.ch('{')
      .key("input_tokens")
      .number(usage.input_tokens)
      .ch(',')
      .key("cache_creation_input_tokens")
      .number(usage.cache_creation_input_tokens)
      .ch(',')
      .key("cache_read_input_tokens")
      .number(usage.cache_read_input_tokens)
      .ch(',')
      .key("output_tokens")
      .number(usage.output_tokens)
      .ch('}');
}

std::string tool_use_id(std::string_view id) {
  if (id.empty()) {
    return {};
  }
  bool clean = true;
  for (char c : id) {
    clean = clean && is_id_word_char(c);
  }
  constexpr std::string_view kPrefix = "toolu_";
  if (clean && id.starts_with(kPrefix)) {
    return std::string(id);
  }
  std::string out;
  out.reserve(kPrefix.size() + id.size() + 17);
  out.append(kPrefix);
  for (char c : id) {
    out.push_back(is_id_word_char(c) ? c : '_');
  }
  if (!clean) {
    append_id_hash(out, id);
  }
  return out;
}

std::string tool_use_id_or(std::string_view id, std::string_view fallback_seed) {
  return tool_use_id(id.empty() ? fallback_seed : id);
}

std::string message_id(std::string_view id) {
  if (id.starts_with("msg_")) {
    return std::string(id);
  }
  std::string out = "msg_";
  out.append(id);
  return out;
}

std::string_view stop_reason(ir::FinishReason finish) {
  switch (finish) {
    case ir::FinishReason::kLength:
      return "max_tokens";
    case ir::FinishReason::kToolCalls:
      return "tool_use";
    case ir::FinishReason::kStopSequence:
      return "stop_sequence";
    case ir::FinishReason::kPauseTurn:
      return "pause_turn";
    case ir::FinishReason::kRefusal:
    case ir::FinishReason::kContentFilter:
      return "refusal";
    case ir::FinishReason::kStop:
    case ir::FinishReason::kUnset:
    case ir::FinishReason::kOther:
      return "end_turn";
  }
  return "end_turn";
}

ir::FinishReason finish_reason(std::string_view stop_reason) {
  if (stop_reason == "end_turn") {
    return ir::FinishReason::kStop;
  }
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") {
    return ir::FinishReason::kLength;
  }
  if (stop_reason == "tool_use") {
    return ir::FinishReason::kToolCalls;
  }
  if (stop_reason == "stop_sequence") {
    return ir::FinishReason::kStopSequence;
  }
  if (stop_reason == "pause_turn") {
    return ir::FinishReason::kPauseTurn;
  }
  if (stop_reason == "refusal") {
    return ir::FinishReason::kRefusal;
  }
  if (stop_reason.empty()) {
    return ir::FinishReason::kUnset;
  }
  return ir::FinishReason::kOther;
}

void append_compact_json(std::string& out, const json::value& value) {
  codec::append_compact_json(out, value);
}

}  // namespace sluice::protocol::anthropic
