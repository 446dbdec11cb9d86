#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "codec/upstream_events.h"
#include "protocol/bedrock_converse/stream_decoder.h"
#include "protocol/registry.h"

namespace sluice::protocol::bedrock_converse {
namespace {
namespace json = boost::json;
using Kind = ir::StreamEventKind;

// One event-stream message as the relay hands it over: `:event-type` (or, for an exception,
// `:exception-type`) and the JSON payload.
struct Message {
  std::string event;
  std::string data;
};

// The messages of a recorded stream (tests/fixtures/bedrock/*.events.json: headers and payload
// of each binary message, decoded from the .eventstream.bin beside it).
std::vector<Message> recorded(std::string_view name) {
  const std::string text = test::read_fixture("bedrock", name);
  EXPECT_FALSE(text.empty()) << name;
  std::vector<Message> out;
  const json::value doc = json::parse(text);
  for (const json::value& m : doc.as_array()) {
    const json::object& headers = m.at("headers").as_object();
    const bool exception = headers.at(":message-type").as_string() == "exception";
    out.push_back(
        {std::string(headers.at(exception ? ":exception-type" : ":event-type").as_string()),
         json::serialize(m.at("payload"))});
  }
  return out;
}

std::vector<ir::StreamEvent> decode(const std::vector<Message>& messages, bool end = true) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  for (const Message& m : messages) {
    codec::SseEvent ev;
    ev.event = m.event;
    ev.data = m.data;
    ev.has_data = true;
    decoder.on_event(ev, out);
  }
  if (end) {
    decoder.on_end(out);
    EXPECT_TRUE(decoder.finished());
  }
  return out;
}

// The kinds in order, consecutive deltas of one kind (and tool index) collapsed into one.
std::vector<std::string> shape(const std::vector<ir::StreamEvent>& events) {
  static constexpr const char* kNames[] = {
      "start",    "text",  "reasoning", "signature", "redacted", "tool_start",
      "tool_arg", "usage", "finish",    "error",     "done",
  };
  std::vector<std::string> out;
  const ir::StreamEvent* last = nullptr;
  for (const ir::StreamEvent& e : events) {
    const bool delta = e.kind == Kind::kTextDelta || e.kind == Kind::kReasoningDelta ||
                       e.kind == Kind::kToolCallDelta;
    if (delta && last != nullptr && last->kind == e.kind && last->index == e.index) {
      continue;
    }
    out.push_back(kNames[static_cast<int>(e.kind)]);
    last = &e;
  }
  return out;
}

std::string joined(const std::vector<ir::StreamEvent>& events, Kind kind) {
  std::string out;
  for (const ir::StreamEvent& e : events) {
    if (e.kind == kind) {
      out += e.text;
    }
  }
  return out;
}

const ir::StreamEvent* first(const std::vector<ir::StreamEvent>& events, Kind kind) {
  for (const ir::StreamEvent& e : events) {
    if (e.kind == kind) {
      return &e;
    }
  }
  return nullptr;
}

// The recorded binary body fed to the relay's event reader `step` bytes at a time (0 = whole),
// each event decoded as it comes out.
std::vector<ir::StreamEvent> decode_bytes(std::string_view bytes, std::size_t step) {
  codec::UpstreamEvents events(1 << 20);
  events.set_framing(codec::UpstreamEvents::Framing::kEventStream);
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  codec::SseEvent ev;
  if (step == 0) {
    step = bytes.size();
  }
  for (std::size_t pos = 0; pos < bytes.size(); pos += step) {
    events.feed(bytes.substr(pos, step));
    codec::UpstreamEvents::Status status;
    while ((status = events.next(ev)) == codec::UpstreamEvents::Status::kEvent) {
      decoder.on_event(ev, out);
    }
    EXPECT_EQ(status, codec::UpstreamEvents::Status::kNeedMore);
  }
  EXPECT_NE(events.finish(ev), codec::UpstreamEvents::Status::kMalformed);
  decoder.on_end(out);
  return out;
}

std::string describe(const std::vector<ir::StreamEvent>& events) {
  std::string out;
  for (const ir::StreamEvent& e : events) {
    out += std::to_string(static_cast<int>(e.kind)) + "|" + std::to_string(e.index) + "|" + e.text +
           "|" + e.id + "|" + e.name + "|" + std::to_string(static_cast<int>(e.finish)) + "|" +
           std::to_string(e.usage.input_tokens) + "," + std::to_string(e.usage.output_tokens) +
           "\n";
  }
  return out;
}

TEST(ConverseStream, RecordedBytesAtEverySplitPointGiveTheSameEvents) {
  for (std::string_view name : {"converse-stream-text", "converse-stream-claude-text",
                                "converse-stream-reasoning", "converse-stream-tool-use"}) {
    SCOPED_TRACE(std::string(name));
    const std::string bytes = test::read_fixture("bedrock", std::string(name) + ".eventstream.bin");
    ASSERT_FALSE(bytes.empty());
    const std::string want = describe(decode(recorded(std::string(name) + ".events.json")));
    for (std::size_t step = 0; step <= 64; step = step == 0 ? 1 : step + 1) {
      const auto got = decode_bytes(bytes, step);
      ASSERT_EQ(describe(got), want) << "split every " << step << " bytes";
    }
    EXPECT_EQ(describe(decode_bytes(bytes, bytes.size() - 1)), want);
  }
}

TEST(ConverseStream, UnmodeledErrorMessageIsAnError) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  codec::SseEvent ev;
  ev.event = "messageStart";
  ev.data = R"({"role":"assistant"})";
  decoder.on_event(ev, out);
  ev.event = "error";
  ev.id = "InternalFailure";
  ev.data = "An internal error occurred.";
  decoder.on_event(ev, out);
  ASSERT_EQ(out.back().kind, Kind::kError);
  EXPECT_EQ(out.back().error.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(out.back().error.message(), "An internal error occurred.");
  EXPECT_EQ(out.back().error.code(), "InternalFailure");
  EXPECT_TRUE(decoder.finished());
}

TEST(ConverseStream, TextStreamEndsWithUsageFinishDoneFromMetadata) {
  const auto events = decode(recorded("converse-stream-text.events.json"));
  EXPECT_EQ(shape(events), (std::vector<std::string>{"start", "text", "usage", "finish", "done"}));
  EXPECT_EQ(joined(events, Kind::kTextDelta).substr(0, 31), "The capital of France is Paris.");
  const ir::StreamEvent* usage = first(events, Kind::kUsage);
  ASSERT_NE(usage, nullptr);
  EXPECT_EQ(usage->usage, (ir::Usage{.input_tokens = 13, .output_tokens = 82}));
  EXPECT_EQ(first(events, Kind::kFinish)->finish, ir::FinishReason::kStop);
}

TEST(ConverseStream, ClaudeStreamReadsTheRequestedStopSequenceField) {
  const auto events = decode(recorded("converse-stream-claude-text.events.json"));
  EXPECT_EQ(shape(events), (std::vector<std::string>{"start", "text", "usage", "finish", "done"}));
  EXPECT_EQ(joined(events, Kind::kTextDelta), "OK.");
  EXPECT_EQ(first(events, Kind::kUsage)->usage,
            (ir::Usage{.input_tokens = 12, .output_tokens = 5}));
  EXPECT_EQ(first(events, Kind::kFinish)->finish, ir::FinishReason::kStop);
  EXPECT_EQ(first(events, Kind::kFinish)->text, "") << "stop_sequence is null";
}

TEST(ConverseStream, ReasoningDeltasThenSignatureThenText) {
  const auto events = decode(recorded("converse-stream-reasoning.events.json"));
  EXPECT_EQ(shape(events), (std::vector<std::string>{"start", "reasoning", "signature", "text",
                                                     "usage", "finish", "done"}));
  EXPECT_TRUE(joined(events, Kind::kReasoningDelta).starts_with("The user has greeted me with"));
  EXPECT_TRUE(joined(events, Kind::kReasoningSignature).starts_with("Eu0CCkgIBxAB"));
  EXPECT_EQ(joined(events, Kind::kTextDelta),
            "Hello! It's nice to meet you. How can I help you today?");
  EXPECT_EQ(first(events, Kind::kUsage)->usage,
            (ir::Usage{.input_tokens = 36, .output_tokens = 73}));
}

TEST(ConverseStream, ToolUseStartsWithIdAndNameThenArgumentFragments) {
  const auto events = decode(recorded("converse-stream-tool-use.events.json"));
  EXPECT_EQ(shape(events), (std::vector<std::string>{"start", "text", "tool_start", "tool_arg",
                                                     "usage", "finish", "done"}));
  const ir::StreamEvent* start = first(events, Kind::kToolCallStart);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->index, 0u) << "tool index, not contentBlockIndex (1)";
  EXPECT_EQ(start->id, "tooluse_lAG_zP8QRHmSYOwZzzaCqA");
  EXPECT_EQ(start->name, "get_temperature");
  EXPECT_EQ(joined(events, Kind::kToolCallDelta), R"({"city":"Paris"})");
  EXPECT_EQ(first(events, Kind::kFinish)->finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(first(events, Kind::kUsage)->usage,
            (ir::Usage{.input_tokens = 471, .output_tokens = 91}));
}

TEST(ConverseStream, EveryRecordedStreamKeepsTheIrOrder) {
  for (std::string_view name :
       {"converse-stream-text.events.json", "converse-stream-claude-text.events.json",
        "converse-stream-reasoning.events.json", "converse-stream-tool-use.events.json"}) {
    SCOPED_TRACE(std::string(name));
    const auto events = decode(recorded(name));
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.front().kind, Kind::kStart);
    EXPECT_EQ(events.back().kind, Kind::kDone);
    std::size_t finishes = 0;
    bool after_finish = false;
    for (const ir::StreamEvent& e : events) {
      ASSERT_NE(e.kind, Kind::kError) << e.error.message();
      if (after_finish) {
        EXPECT_EQ(e.kind, Kind::kDone) << "only kDone follows kFinish";
      }
      if (e.kind == Kind::kFinish) {
        ++finishes;
        after_finish = true;
      }
    }
    EXPECT_EQ(finishes, 1u);
  }
}

TEST(ConverseStream, CacheCountsFromMetadataJoinTheInput) {
  const auto events = decode({
      {"messageStart", R"({"p":"ab","role":"assistant"})"},
      {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"21"},"p":"x"})"},
      {"contentBlockStop", R"({"contentBlockIndex":0,"p":"x"})"},
      {"messageStop", R"({"p":"x","stopReason":"end_turn"})"},
      {"metadata",
       R"({"metrics":{"latencyMs":9},"p":"x","usage":{"inputTokens":2,"outputTokens":5,)"
       R"("cacheReadInputTokens":1322,"cacheWriteInputTokens":7,"totalTokens":1336}})"},
  });
  EXPECT_EQ(first(events, Kind::kUsage)->usage, (ir::Usage{.input_tokens = 1331,
                                                           .output_tokens = 5,
                                                           .cache_read_tokens = 1322,
                                                           .cache_write_tokens = 7}));
}

TEST(ConverseStream, StopSequenceRidesOnTheFinish) {
  const auto events = decode({
      {"messageStart", R"({"role":"assistant"})"},
      {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"1 2 3"}})"},
      {"messageStop", R"({"additionalModelResponseFields":{"delta":{"stop_sequence":"4"}},)"
                      R"("stopReason":"stop_sequence"})"},
      {"metadata", R"({"metrics":{"latencyMs":1},"usage":{"inputTokens":1,"outputTokens":3}})"},
  });
  const ir::StreamEvent* finish = first(events, Kind::kFinish);
  ASSERT_NE(finish, nullptr);
  EXPECT_EQ(finish->finish, ir::FinishReason::kStopSequence);
  EXPECT_EQ(finish->text, "4");
}

TEST(ConverseStream, EndAfterMessageStopWithoutMetadataStillCompletes) {
  auto messages = recorded("converse-stream-text.events.json");
  messages.pop_back();  // metadata
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  for (const Message& m : messages) {
    decoder.decode(m.event, m.data, out);
  }
  EXPECT_FALSE(decoder.finished()) << "the finish waits for the usage";
  EXPECT_TRUE(decoder.answered());
  EXPECT_EQ(first(out, Kind::kFinish), nullptr);
  decoder.on_end(out);
  EXPECT_EQ(shape(out), (std::vector<std::string>{"start", "text", "finish", "done"}));
}

TEST(ConverseStream, MetadataBeforeMessageStopStillPutsUsageFirst) {
  const auto events = decode({
      {"messageStart", R"({"role":"assistant"})"},
      {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"hi"}})"},
      {"metadata", R"({"metrics":{"latencyMs":1},"usage":{"inputTokens":1,"outputTokens":1}})"},
      {"messageStop", R"({"stopReason":"max_tokens"})"},
  });
  EXPECT_EQ(shape(events), (std::vector<std::string>{"start", "text", "usage", "finish", "done"}));
  EXPECT_EQ(first(events, Kind::kFinish)->finish, ir::FinishReason::kLength);
}

TEST(ConverseStream, EndBeforeMessageStopIsAnError) {
  auto messages = recorded("converse-stream-text.events.json");
  messages.resize(5);
  const auto events = decode(messages);
  ASSERT_EQ(events.back().kind, Kind::kError);
  EXPECT_EQ(events.back().error.kind(), ErrorKind::kUpstreamProtocol);
}

TEST(ConverseStream, ExceptionsBecomeErrorsWithTheirRetryability) {
  struct Case {
    const char* type;
    int status;
    bool retryable;
  };
  const Case cases[] = {
      {"throttlingException", 429, true},     {"serviceUnavailableException", 503, true},
      {"internalServerException", 500, true}, {"modelStreamErrorException", 502, true},
      {"validationException", 400, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type);
    auto messages = recorded("converse-stream-text.events.json");
    messages.resize(3);
    messages.push_back({c.type, R"({"message":"Something went wrong."})"});
    messages.push_back({"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"x"}})"});
    const auto events = decode(messages);
    ASSERT_EQ(events.back().kind, Kind::kError) << "the exception is last; nothing follows";
    const Error& e = events.back().error;
    EXPECT_EQ(e.kind(), ErrorKind::kUpstreamStatus);
    EXPECT_EQ(e.http_status(), c.status);
    EXPECT_EQ(e.retryable(), c.retryable);
    EXPECT_EQ(e.message(), "Something went wrong.");
    EXPECT_EQ(first(events, Kind::kFinish), nullptr);
  }
}

TEST(ConverseStream, ExceptionBeforeAnythingElseIsStillAnError) {
  const auto events = decode({{"throttlingException", R"({"message":"Too many requests"})"}});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::kError);
  EXPECT_EQ(events[0].error.http_status(), 429);
  EXPECT_EQ(events[0].error.code(), "ThrottlingException");
}

TEST(ConverseStream, RedactedReasoningDeltaIsPassedOn) {
  const auto events = decode({
      {"messageStart", R"({"role":"assistant"})"},
      {"contentBlockDelta",
       R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"AAEC"}}})"},
      {"contentBlockStop", R"({"contentBlockIndex":0})"},
      {"messageStop", R"({"stopReason":"end_turn"})"},
      {"metadata", R"({"metrics":{"latencyMs":1},"usage":{"inputTokens":1,"outputTokens":1}})"},
  });
  const ir::StreamEvent* redacted = first(events, Kind::kRedactedReasoning);
  ASSERT_NE(redacted, nullptr);
  EXPECT_EQ(redacted->text, "AAEC");
}

TEST(ConverseStream, WhatTheIrCannotCarryIsAnErrorNeverADrop) {
  const std::vector<std::vector<Message>> broken = {
      {{"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"x"}})"}},
      {{"messageStart", R"({"role":"assistant"})"}, {"messageStart", R"({"role":"assistant"})"}},
      {{"messageStart", "not json"}},
      {{"messageStart", R"({"role":"assistant"})"},
       {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"citation":{}}})"}},
      {{"messageStart", R"({"role":"assistant"})"},
       {"contentBlockStart", R"({"contentBlockIndex":0,"start":{"image":{}}})"}},
      {{"messageStart", R"({"role":"assistant"})"},
       {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"x"}})"},
       {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}}})"}},
      {{"messageStart", R"({"role":"assistant"})"},
       {"contentBlockDelta", R"({"contentBlockIndex":99999,"delta":{"text":"x"}})"}},
      {{"messageStart", R"({"role":"assistant"})"},
       {"messageStop", R"({"stopReason":"end_turn"})"},
       {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"late"}})"}},
      {{"messageStart", R"({"role":"assistant"})"},
       {"metadata", R"({"usage":{"inputTokens":-1,"outputTokens":1}})"}},
  };
  for (std::size_t i = 0; i < broken.size(); ++i) {
    SCOPED_TRACE(i);
    const auto events = decode(broken[i], false);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, Kind::kError);
    EXPECT_EQ(events.back().error.kind(), ErrorKind::kUpstreamProtocol);
  }
}

TEST(ConverseStream, UnknownEventTypesAndFieldsAreDriftNotErrors) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  decoder.decode("messageStart", R"({"p":"abc","role":"assistant","brandNew":1})", out);
  decoder.decode("somethingNew", R"({"x":1})", out);
  decoder.decode("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"a"},"p":"q"})",
                 out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].kind, Kind::kTextDelta);
  EXPECT_EQ(decoder.unknown_fields(), 2u) << "brandNew and somethingNew; p is known padding";
}

TEST(ConverseStream, TheRegistryMakesThisDecoder) {
  const UpstreamCodec* codec = find_upstream(kConverseProtocol, Operation::kChat);
  ASSERT_NE(codec, nullptr);
  auto decoder = codec->make_stream_decoder();
  ASSERT_NE(decoder, nullptr);
  std::vector<ir::StreamEvent> out;
  for (const Message& m : recorded("converse-stream-claude-text.events.json")) {
    codec::SseEvent ev;
    ev.event = m.event;
    ev.data = m.data;
    decoder->on_event(ev, out);
  }
  EXPECT_TRUE(decoder->finished());
  EXPECT_EQ(out.back().kind, Kind::kDone);
}

}  // namespace
}  // namespace sluice::protocol::bedrock_converse
