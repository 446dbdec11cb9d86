#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "ir/stream_event.h"
#include "protocol/openai_responses/stream_decoder.h"
#include "protocol/openai_responses/stream_encoder.h"

// Helpers shared by this folder's tests: decoding fixtures into IR events, encoding IR events,
// and what a stream of IR events amounts to.
namespace sluice::protocol::openai_responses::testing {

inline std::string fixture(std::string_view name) {
  return test::read_fixture("openai-responses", name);
}

// The recorded streams, every one of them.
inline const std::vector<std::string>& stream_fixtures() {
  static const std::vector<std::string> kNames = {
      "stream-text.sse",
      "stream-text-2025-03-no-sequence-number.sse",
      "stream-function-call.sse",
      "stream-reasoning-function-call.sse",
      "stream-reasoning-summary-text.sse",
      "stream-web-search-cached-tokens.sse",
      "stream-error-insufficient-quota.sse",
  };
  return kNames;
}

// Feeds `bytes` through StreamDecoder `step` bytes at a time (0 = whole; 1 = a split at every
// byte), then ends the input.
inline std::vector<ir::StreamEvent> decode_stream(std::string_view bytes, std::size_t step = 0) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  test::for_each_sse_event(bytes, step,
                           [&](const codec::SseEvent& ev) { decoder.on_event(ev, out); });
  decoder.on_end(out);
  return out;
}

inline std::string encode_stream(const std::vector<ir::StreamEvent>& events,
                                 std::int64_t created = 1700000000) {
  StreamEncoder encoder(created);
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  return out;
}

inline std::string describe(const ir::StreamEvent& e) {
  std::ostringstream s;
  s << static_cast<int>(e.kind) << "|" << e.index << "|" << e.text << "|" << e.id << "|" << e.name
    << "|" << e.model << "|" << static_cast<int>(e.finish) << "|" << e.usage.input_tokens << ","
    << e.usage.output_tokens << "," << e.usage.cache_read_tokens << ","
    << e.usage.cache_write_tokens << "," << e.usage.reasoning_tokens << "|" << e.error.message()
    << "|" << e.error.code() << "|" << e.error.http_status();
  return s.str();
}

inline std::vector<std::string> describe(const std::vector<ir::StreamEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(describe(e));
  }
  return out;
}

// What an IR stream amounts to for a client.
struct Summary {
  std::string id;
  std::string model;
  std::string text;
  std::string reasoning;
  std::vector<std::string> signatures;
  std::vector<std::string> redacted;
  struct Call {
    std::string id;
    std::string name;
    std::string arguments;
    bool operator==(const Call&) const = default;
  };
  std::vector<Call> calls;
  std::optional<ir::Usage> usage;
  ir::FinishReason finish = ir::FinishReason::kUnset;
  bool done = false;
  std::optional<Error> error;
};

inline Summary summarize(const std::vector<ir::StreamEvent>& events) {
  Summary s;
  for (const ir::StreamEvent& e : events) {
    switch (e.kind) {
      case ir::StreamEventKind::kStart:
        s.id = e.id;
        s.model = e.model;
        break;
      case ir::StreamEventKind::kTextDelta:
        s.text += e.text;
        break;
      case ir::StreamEventKind::kReasoningDelta:
        s.reasoning += e.text;
        break;
      case ir::StreamEventKind::kReasoningSignature:
        s.signatures.push_back(e.text);
        break;
      case ir::StreamEventKind::kRedactedReasoning:
        s.redacted.push_back(e.text);
        break;
      case ir::StreamEventKind::kToolCallStart:
        if (e.index == s.calls.size()) {
          s.calls.push_back({e.id, e.name, ""});
        }
        break;
      case ir::StreamEventKind::kToolCallDelta:
        if (e.index < s.calls.size()) {
          s.calls[e.index].arguments += e.text;
        }
        break;
      case ir::StreamEventKind::kUsage:
        s.usage = e.usage;
        break;
      case ir::StreamEventKind::kFinish:
        s.finish = e.finish;
        break;
      case ir::StreamEventKind::kError:
        s.error = e.error;
        break;
      case ir::StreamEventKind::kDone:
        s.done = true;
        break;
    }
  }
  return s;
}

// The ordering contract of ir/stream_event.h.
inline void expect_ir_contract(const std::vector<ir::StreamEvent>& events) {
  ASSERT_FALSE(events.empty());
  bool started = false;
  int finishes = 0;
  std::uint32_t tools = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const ir::StreamEvent& e = events[i];
    if (e.kind == ir::StreamEventKind::kError || e.kind == ir::StreamEventKind::kDone) {
      EXPECT_EQ(i + 1, events.size()) << "kError / kDone must be last";
      if (e.kind == ir::StreamEventKind::kDone) {
        EXPECT_EQ(finishes, 1) << "kDone without one kFinish";
      }
      continue;
    }
    if (e.kind == ir::StreamEventKind::kStart) {
      EXPECT_FALSE(started) << "kStart twice";
      EXPECT_EQ(i, 0u) << "kStart not first";
      started = true;
      continue;
    }
    EXPECT_TRUE(started) << "event before kStart";
    if (e.kind == ir::StreamEventKind::kFinish) {
      ++finishes;
    }
    if (e.kind == ir::StreamEventKind::kToolCallStart) {
      EXPECT_EQ(e.index, tools++) << "tool calls out of order";
    }
    if (e.kind == ir::StreamEventKind::kToolCallDelta) {
      EXPECT_LT(e.index, tools) << "tool delta before its start";
    }
  }
}

}  // namespace sluice::protocol::openai_responses::testing
