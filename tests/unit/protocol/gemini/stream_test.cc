#include <map>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "gemini_test_support.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/gemini/stream_encoder.h"
#include "protocol/gemini/stream_sniffer.h"

namespace sluice::protocol::gemini {
namespace {
namespace json = boost::json;
using test::decode_split;
using test::decode_stream;
using test::describe;
using test::fixture;
using test::fold;
using K = ir::StreamEventKind;

std::string encode(const std::vector<ir::StreamEvent>& events, StreamEncoder* enc = nullptr) {
  StreamEncoder local;
  StreamEncoder& encoder = enc != nullptr ? *enc : local;
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  return out;
}

ir::StreamEvent event(K kind, std::string text = {}, std::uint32_t index = 0) {
  ir::StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  e.index = index;
  return e;
}

// The JSON of every `data:` chunk of a Gemini stream; also checks the framing.
std::vector<json::object> chunks(std::string_view bytes) {
  std::vector<json::object> out;
  while (!bytes.empty()) {
    EXPECT_TRUE(bytes.starts_with("data: ")) << bytes.substr(0, 80);
    const std::size_t end = bytes.find("\r\n\r\n");
    EXPECT_NE(end, std::string_view::npos);
    if (!bytes.starts_with("data: ") || end == std::string_view::npos) {
      break;
    }
    out.push_back(json::parse(bytes.substr(6, end - 6)).as_object());
    bytes.remove_prefix(end + 4);
  }
  return out;
}

const std::vector<const char*> kStreams = {"stream-text.sse",
                                           "stream-text-thoughts-usage.sse",
                                           "stream-thought-summaries.sse",
                                           "stream-function-call.sse",
                                           "stream-function-call-thought-signature.sse",
                                           "vertex-stream-text.sse"};

class StreamFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(StreamFixture, DecodesToACompleteStream) {
  const auto events = decode_stream(fixture(GetParam()));
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().kind, K::kStart);
  EXPECT_EQ(events.back().kind, K::kDone) << describe(events.back());
  int finishes = 0;
  for (const auto& e : events) {
    EXPECT_NE(e.kind, K::kError) << e.error.message();
    finishes += e.kind == K::kFinish ? 1 : 0;
  }
  EXPECT_EQ(finishes, 1);
}

TEST_P(StreamFixture, EverySplitPointGivesTheSameEvents) {
  const std::string bytes = fixture(GetParam());
  const auto whole = describe(decode_stream(bytes));
  for (std::size_t at = 0; at <= bytes.size(); ++at) {
    ASSERT_EQ(describe(decode_split(bytes, at)), whole) << "split at " << at;
  }
  for (std::size_t step : {1, 2, 3, 7, 64}) {
    EXPECT_EQ(describe(decode_stream(bytes, step)), whole) << "step " << step;
  }
}

TEST_P(StreamFixture, EncodeThenDecodeKeepsWhatTheClientSees) {
  const auto events = decode_stream(fixture(GetParam()));
  StreamEncoder encoder;
  const std::string out = encode(events, &encoder);
  EXPECT_TRUE(encoder.finished());
  EXPECT_FALSE(encoder.error().has_value());
  EXPECT_EQ(encoder.usage_clamped(), 0u);
  const auto again = decode_stream(out);
  EXPECT_EQ(fold(again), fold(events));
  // Framed as the API frames it; the last chunk has the finish reason and the usage.
  const auto parsed = chunks(out);
  ASSERT_FALSE(parsed.empty());
  const json::object& last = parsed.back();
  EXPECT_TRUE(last.at("candidates").as_array()[0].as_object().contains("finishReason"));
  EXPECT_TRUE(last.contains("usageMetadata"));
}

// Gemini upstream -> Anthropic caller: the Anthropic events say the same.
TEST_P(StreamFixture, TranslatesToAnthropicEvents) {
  const auto events = decode_stream(fixture(GetParam()));
  anthropic::StreamEncoder encoder;
  std::string out;
  for (const auto& e : events) {
    encoder.encode(e, out);
  }
  ASSERT_TRUE(encoder.finished());
  ASSERT_FALSE(encoder.error().has_value());
  anthropic::StreamDecoder back;
  std::vector<ir::StreamEvent> read;
  sluice::test::for_each_sse_event(out, 0, [&](const codec::SseEvent& ev) {
    EXPECT_EQ(ev.raw.find("\r"), std::string_view::npos);
    back.on_event(ev, read);
  });
  back.on_end(read);
  ASSERT_EQ(read.back().kind, K::kDone) << describe(read.back());
  const test::Folded want = fold(events);
  const test::Folded got = fold(read);
  EXPECT_EQ(got.text, want.text);
  EXPECT_EQ(got.reasoning, want.reasoning);
  EXPECT_EQ(got.signatures, want.signatures);
  EXPECT_EQ(got.finish, want.finish);
  ASSERT_EQ(got.calls.size(), want.calls.size());
  for (std::size_t i = 0; i < want.calls.size(); ++i) {
    const std::string w = want.calls[i];
    // name|arguments are kept; the id gains Anthropic's toolu_ prefix.
    EXPECT_EQ(got.calls[i], "toolu_" + w) << i;
  }
  // Anthropic has no reasoning count: everything else is the same.
  ir::Usage usage = want.usage;
  usage.reasoning_tokens = 0;
  EXPECT_EQ(got.usage, usage);
}

INSTANTIATE_TEST_SUITE_P(Gemini, StreamFixture, ::testing::ValuesIn(kStreams));

TEST(StreamDecoder, TextStreamEventByEvent) {
  const auto events = decode_stream(fixture("stream-text.sse"));
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(events[0].kind, K::kStart);
  EXPECT_EQ(events[0].id, "w1peaMz6INOvnvgPgYfPiQY");
  EXPECT_EQ(events[0].model, "gemini-2.0-flash-exp");
  EXPECT_EQ(events[1].kind, K::kUsage);  // usage before the chunk's content
  EXPECT_EQ(events[1].usage, (ir::Usage{15, 0, 0, 0, 0}));
  EXPECT_EQ(events[2].kind, K::kTextDelta);
  EXPECT_EQ(events[2].text, "The");
  EXPECT_EQ(events[3].text, " capital of France");  // same usage: no second kUsage
  EXPECT_EQ(events[4].kind, K::kUsage);
  EXPECT_EQ(events[4].usage, (ir::Usage{13, 8, 0, 0, 0}));
  EXPECT_EQ(events[5].text, " is Paris.\n");
  EXPECT_EQ(events[6].kind, K::kFinish);
  EXPECT_EQ(events[6].finish, ir::FinishReason::kStop);
  EXPECT_EQ(events[7].kind, K::kDone);
}

TEST(StreamDecoder, ThoughtsAreOutsideTheCandidates) {
  // usageMetadata {promptTokenCount 18, candidatesTokenCount 80, thoughtsTokenCount 35}.
  const test::Folded f = fold(decode_stream(fixture("stream-text-thoughts-usage.sse")));
  EXPECT_EQ(f.usage.input_tokens, 18u);
  EXPECT_EQ(f.usage.output_tokens, 80u + 35u);
  EXPECT_EQ(f.usage.reasoning_tokens, 35u);
  EXPECT_EQ(f.usage.cache_read_tokens, 0u);
}

TEST(StreamDecoder, ThoughtSummariesAndTheirSignature) {
  const auto events = decode_stream(fixture("stream-thought-summaries.sse"));
  const test::Folded f = fold(events);
  EXPECT_EQ(f.reasoning.rfind("**Clarifying User Goals**", 0), 0u);
  EXPECT_EQ(f.text.rfind("This is a great question!", 0), 0u);
  EXPECT_EQ(f.signatures.rfind("CiIB0e2Kb6Syj1a961EfbWv4W5C8RgAA", 0), 0u);
  // The signature comes after the last thought and before the first answer text.
  std::size_t sig = 0;
  std::size_t first_text = 0;
  std::size_t last_thought = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == K::kReasoningSignature) {
      sig = i;
    } else if (events[i].kind == K::kTextDelta && first_text == 0) {
      first_text = i;
    } else if (events[i].kind == K::kReasoningDelta) {
      last_thought = i;
    }
  }
  EXPECT_LT(last_thought, sig);
  EXPECT_LT(sig, first_text);
  EXPECT_EQ(f.usage.reasoning_tokens, 787u);
}

TEST(StreamDecoder, FunctionCallIsOneStartAndOneDeltaWithAPositionalId) {
  const auto events = decode_stream(fixture("stream-function-call.sse"));
  std::vector<ir::StreamEvent> calls;
  for (const auto& e : events) {
    if (e.kind == K::kToolCallStart || e.kind == K::kToolCallDelta) {
      calls.push_back(e);
    }
  }
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].index, 0u);
  EXPECT_EQ(calls[0].id, "call_1lpeaMTxIpW1nvgP-O3vwQY_0");
  EXPECT_EQ(calls[0].name, "get_capital");
  EXPECT_EQ(calls[1].text, R"({"country":"France"})");
  EXPECT_EQ(fold(events).finish, ir::FinishReason::kToolCalls) << "STOP after a call";
}

TEST(StreamDecoder, SignatureOfAFunctionCallComesBeforeIt) {
  const auto events = decode_stream(fixture("stream-function-call-thought-signature.sse"));
  ASSERT_GE(events.size(), 5u);
  EXPECT_EQ(events[1].kind, K::kUsage);
  EXPECT_EQ(events[2].kind, K::kReasoningSignature);
  EXPECT_EQ(events[2].text.rfind("EpwICpkIAXLI2nxlU6gsWZaZ", 0), 0u);
  EXPECT_EQ(events[3].kind, K::kToolCallStart);
  EXPECT_EQ(events[3].name, "get_country");
  EXPECT_EQ(events[4].text, "{}");
  const test::Folded f = fold(events);
  EXPECT_EQ(f.finish, ir::FinishReason::kToolCalls) << "the final chunk has no call but STOP";
  EXPECT_EQ(f.usage, (ir::Usage{29, 10 + 202, 0, 0, 202}));
}

TEST(StreamDecoder, VertexStreamedArgumentsAreAnErrorNotADrop) {
  const auto events = decode_stream(fixture("vertex-stream-function-call-partial-args.sse"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, K::kError);
  EXPECT_NE(events.back().error.message().find("partialArgs"), std::string::npos);
  EXPECT_EQ(events.back().error.kind(), ErrorKind::kUpstreamProtocol);
}

TEST(StreamDecoder, EndOfBodyBeforeTheFinishReasonIsAnError) {
  std::string bytes = fixture("stream-text.sse");
  bytes = bytes.substr(0, bytes.rfind("data: "));
  const auto events = decode_stream(bytes);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, K::kError);
  EXPECT_EQ(events.back().error.message(), "upstream stream ended before a finishReason");
  for (const auto& e : events) {
    EXPECT_NE(e.kind, K::kFinish);
    EXPECT_NE(e.kind, K::kDone);
  }
}

TEST(StreamDecoder, ErrorObjectsInTheStream) {
  const std::string error =
      R"({"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}})";
  // As a data event, and as the bare (pretty-printed) JSON the API writes into a stream.
  for (const std::string& bytes :
       {"data: " + error + "\r\n\r\n",
        std::string("{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource "
                    "exhausted\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n")}) {
    const auto events = decode_stream(bytes);
    ASSERT_EQ(events.size(), 1u) << bytes;
    EXPECT_EQ(events[0].kind, K::kError);
    EXPECT_EQ(events[0].error.kind(), ErrorKind::kUpstreamStatus);
    EXPECT_EQ(events[0].error.http_status(), 429);
    EXPECT_EQ(events[0].error.code(), "RESOURCE_EXHAUSTED");
    EXPECT_EQ(events[0].error.message(), "Resource exhausted");
  }
}

TEST(StreamDecoder, UntranslatableChunksAreExplicitErrors) {
  const char* kCases[] = {
      R"({"candidates":[{"content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"executableCode":{"code":"1+1"}}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"functionCall":{"args":{}}}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]})",
      R"(not json)",
  };
  for (const char* data : kCases) {
    const auto events = decode_stream(std::string("data: ") + data + "\r\n\r\n");
    ASSERT_FALSE(events.empty()) << data;
    EXPECT_EQ(events.back().kind, K::kError) << data;
    int errors = 0;
    for (const auto& e : events) {
      errors += e.kind == K::kError ? 1 : 0;
    }
    EXPECT_EQ(errors, 1) << data;
  }
  // Content after the finish reason.
  const auto late = decode_stream(
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},\"finishReason\":"
      "\"STOP\"}]}\r\n\r\ndata: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\"}]}}]}"
      "\r\n\r\n");
  EXPECT_EQ(late.back().kind, K::kError);
  EXPECT_NE(late.back().error.message().find("after the finishReason"), std::string::npos);
}

// proto3 JSON as the API reads it, whichever way the decoder reads a chunk (its SAX pass takes
// text chunks; anything else goes to the DOM): a repeated field's last value wins, camelCase
// wins over snake_case, snake_case alone is read, null is absent, escapes are unescaped.
TEST(StreamDecoder, ProtoJsonRulesHoldForEveryChunk) {
  struct Case {
    const char* data;
    const char* text;
    const char* signatures;
    const char* id;
    ir::FinishReason finish;
    std::uint64_t input;
  };
  const Case cases[] = {
      {R"({"candidates":[{"content":{"parts":[{"text":"a"}],"parts":[{"text":"b","text":"c"}]},)"
       R"("finishReason":"STOP"}]})",
       "c", "", "", ir::FinishReason::kStop, 0},
      {R"({"candidates":[{"content":{"parts":[{"thought_signature":"s1","text":"x",)"
       R"("thoughtSignature":"s2"}]},"finishReason":"STOP"}]})",
       "x", "s2;", "", ir::FinishReason::kStop, 0},
      {R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"finish_reason":"MAX_TOKENS"}],)"
       R"("usage_metadata":{"prompt_token_count":4},"response_id":"r9"})",
       "x", "", "r9", ir::FinishReason::kLength, 4},
      {R"({"candidates":[{"content":{"parts":[{"text":"x","thought":null,"thoughtSignature":null}]},)"
       R"("finishReason":null,"index":0}],"usageMetadata":null,"responseId":null})",
       "x", "", "", ir::FinishReason::kUnset, 0},
      {R"({"candidates":[{"content":{"parts":[{"te\u0078t":"caf\u00e9 \"q\"\n"}]},)"
       R"("finishReason":"STOP"}],"respon\u0073eId":"r\u0031"})",
       "caf\xc3\xa9 \"q\"\n", "", "r1", ir::FinishReason::kStop, 0},
  };
  for (const Case& c : cases) {
    const test::Folded f = fold(decode_stream(std::string("data: ") + c.data + "\r\n\r\n"));
    EXPECT_EQ(f.text, c.text) << c.data;
    EXPECT_EQ(f.signatures, c.signatures) << c.data;
    EXPECT_EQ(f.id, c.id) << c.data;
    EXPECT_EQ(f.finish, c.finish) << c.data;
    EXPECT_EQ(f.usage.input_tokens, c.input) << c.data;
    EXPECT_EQ(f.error, c.finish == ir::FinishReason::kUnset) << c.data;  // ended early
  }
}

// Schema drift counts each unknown name once over the stream, whether its chunk was read by the
// SAX pass (text) or the DOM (a function call).
TEST(StreamDecoder, UnknownFieldsCountOnceWhicheverPassReadsTheChunk) {
  StreamDecoder decoder;
  std::vector<ir::StreamEvent> out;
  sluice::test::for_each_sse_event(
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"newPart\":1}]},"
      "\"newCandidate\":{}}],\"newRoot\":[1,{\"deep\":2}]}\r\n\r\n"
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\"}}]},"
      "\"newCandidate\":2,\"finishReason\":\"STOP\"}],\"newRoot\":3,\"otherRoot\":4}\r\n\r\n",
      0, [&](const codec::SseEvent& ev) { decoder.on_event(ev, out); });
  decoder.on_end(out);
  EXPECT_EQ(out.back().kind, K::kDone);
  EXPECT_EQ(decoder.unknown_fields(), 4u);  // newPart, newCandidate, newRoot, otherRoot
}

TEST(StreamDecoder, FinishReasonsMapWithoutInventingACleanFinish) {
  struct Case {
    const char* reason;
    ir::FinishReason want;
  };
  const Case cases[] = {{"MAX_TOKENS", ir::FinishReason::kLength},
                        {"SAFETY", ir::FinishReason::kContentFilter},
                        {"RECITATION", ir::FinishReason::kContentFilter},
                        {"MALFORMED_FUNCTION_CALL", ir::FinishReason::kOther},
                        {"SOMETHING_NEW", ir::FinishReason::kOther}};
  for (const Case& c : cases) {
    const auto events = decode_stream(std::string(R"(data: {"candidates":[{"finishReason":")") +
                                      c.reason + R"("}]})" + "\r\n\r\n");
    EXPECT_EQ(fold(events).finish, c.want) << c.reason;
    EXPECT_EQ(events.back().kind, K::kDone) << c.reason;
  }
  const auto blocked = decode_stream(
      "data: {\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"},\"usageMetadata\":"
      "{\"promptTokenCount\":7,\"totalTokenCount\":7}}\r\n\r\n");
  EXPECT_EQ(fold(blocked).finish, ir::FinishReason::kContentFilter);
  EXPECT_EQ(fold(blocked).usage.input_tokens, 7u);
  EXPECT_EQ(blocked.back().kind, K::kDone);
}

TEST(StreamSniffer, ReadsUsageFinishAndOutputWithoutTranslating) {
  for (const char* name :
       {"stream-text.sse", "stream-function-call.sse", "stream-thought-summaries.sse",
        "vertex-stream-function-call-partial-args.sse"}) {
    const std::string bytes = fixture(name);
    StreamSniffer sniffer;
    sluice::test::for_each_sse_event(bytes, 0, [&](const codec::SseEvent& ev) {
      EXPECT_EQ(sniffer.on_event(ev), StreamSniffer::Action::kForward);
    });
    EXPECT_TRUE(sniffer.answered()) << name;
    EXPECT_FALSE(sniffer.done()) << "Gemini streams have no terminator";
    EXPECT_FALSE(sniffer.saw_error()) << name;
    EXPECT_TRUE(sniffer.saw_output()) << name;
    ASSERT_TRUE(sniffer.usage().has_value()) << name;
    const std::string name_s = name;
    if (name_s != "vertex-stream-function-call-partial-args.sse") {
      EXPECT_EQ(*sniffer.usage(), fold(decode_stream(bytes)).usage) << name;
    }
    EXPECT_EQ(sniffer.finish_reason(),
              name_s == "stream-text.sse" || name_s == "stream-thought-summaries.sse"
                  ? "stop"
                  : "tool_calls")
        << name;
  }
  StreamSniffer sniffer;
  sluice::test::for_each_sse_event(
      "{\"error\": {\"code\": 500, \"message\": \"x\", \"status\": \"INTERNAL\"}}\n", 0,
      [&](const codec::SseEvent& ev) { sniffer.on_event(ev); });
  EXPECT_TRUE(sniffer.saw_error());
  EXPECT_FALSE(sniffer.answered());
}

TEST(StreamEncoder, TextGoesOutAsItArrives) {
  StreamEncoder encoder;
  std::string out;
  ir::StreamEvent start = event(K::kStart);
  start.id = "r1";
  start.model = "m";
  encoder.encode(start, out);
  EXPECT_TRUE(out.empty());
  encoder.encode(event(K::kTextDelta, "Hel"), out);
  EXPECT_EQ(out,
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":"
            "\"model\"},\"index\":0}],\"modelVersion\":\"m\",\"responseId\":\"r1\"}\r\n\r\n");
  out.clear();
  ir::StreamEvent usage = event(K::kUsage);
  usage.usage = {10, 5, 4, 0, 2};
  encoder.encode(usage, out);
  ir::StreamEvent finish = event(K::kFinish);
  finish.finish = ir::FinishReason::kLength;
  encoder.encode(finish, out);
  EXPECT_TRUE(out.empty()) << "usage and finish wait for the final chunk";
  encoder.encode(event(K::kDone), out);
  const auto parsed = chunks(out);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(json::serialize(parsed[0]),
            R"({"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},)"
            R"("finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":10,)"
            R"("candidatesTokenCount":3,"totalTokenCount":15,"cachedContentTokenCount":4,)"
            R"("thoughtsTokenCount":2},"modelVersion":"m","responseId":"r1"})");
  EXPECT_TRUE(encoder.finished());
}

TEST(StreamEncoder, ToolCallsGoOutWholeInOrderWhenTheirArgumentsAreComplete) {
  StreamEncoder encoder;
  std::string out;
  encoder.encode(event(K::kStart), out);
  ir::StreamEvent a = event(K::kToolCallStart, {}, 0);
  a.id = "call_a";
  a.name = "first";
  ir::StreamEvent b = event(K::kToolCallStart, {}, 1);
  b.id = "call_b";
  b.name = "second";
  encoder.encode(a, out);
  encoder.encode(b, out);
  encoder.encode(event(K::kToolCallDelta, R"({"x":)", 0), out);
  encoder.encode(event(K::kToolCallDelta, R"({"y":2})", 1), out);
  EXPECT_TRUE(out.empty()) << "the second call waits behind the first";
  encoder.encode(event(K::kToolCallDelta, "1}", 0), out);
  auto parsed = chunks(out);
  ASSERT_EQ(parsed.size(), 1u);
  const json::array& parts =
      parsed[0].at("candidates").as_array()[0].at("content").at("parts").as_array();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(json::serialize(parts[0]),
            R"({"functionCall":{"name":"first","args":{"x":1},"id":"call_a"}})");
  EXPECT_EQ(json::serialize(parts[1]),
            R"({"functionCall":{"name":"second","args":{"y":2},"id":"call_b"}})");
  out.clear();
  encoder.encode(event(K::kDone), out);
  parsed = chunks(out);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].at("candidates").as_array()[0].at("finishReason"), "OTHER")
      << "no finish reason came: not an invented STOP";
}

TEST(StreamEncoder, SignatureRidesOnTheNextPart) {
  StreamEncoder encoder;
  std::string out;
  encoder.encode(event(K::kStart), out);
  encoder.encode(event(K::kReasoningDelta, "think"), out);
  encoder.encode(event(K::kReasoningSignature, "SIG"), out);
  encoder.encode(event(K::kTextDelta, "answer"), out);
  const auto parsed = chunks(out);
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(json::serialize(parsed[0].at("candidates").as_array()[0].at("content").at("parts")),
            R"([{"text":"think","thought":true}])");
  EXPECT_EQ(json::serialize(parsed[1].at("candidates").as_array()[0].at("content").at("parts")),
            R"([{"text":"answer","thoughtSignature":"SIG"}])");
}

TEST(StreamEncoder, ErrorsAreADataEventWithTheErrorObject) {
  StreamEncoder encoder;
  std::string out;
  encoder.encode(event(K::kStart), out);
  encoder.encode(event(K::kTextDelta, "a"), out);
  out.clear();
  ir::StreamEvent e = event(K::kError);
  e.error = Error(ErrorKind::kUpstreamTimeout, "upstream timed out");
  encoder.encode(e, out);
  EXPECT_EQ(out,
            "data: {\"error\":{\"code\":504,\"message\":\"upstream timed out\",\"status\":"
            "\"DEADLINE_EXCEEDED\"}}\r\n\r\n");
  EXPECT_TRUE(encoder.finished());
  ASSERT_TRUE(encoder.error().has_value());
  out.clear();
  encoder.encode(event(K::kTextDelta, "b"), out);
  EXPECT_TRUE(out.empty());
  // Our own decoder reads it back as the same error.
  const auto back = decode_stream(
      "data: {\"error\":{\"code\":504,\"message\":\"upstream timed out\",\"status\":"
      "\"DEADLINE_EXCEEDED\"}}\r\n\r\n");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].error.http_status(), 504);
}

TEST(StreamEncoder, ImpossibleConversionsEndTheStream) {
  StreamEncoder encoder;
  std::string out;
  encoder.encode(event(K::kStart), out);
  encoder.encode(event(K::kToolCallDelta, "{}", 3), out);
  EXPECT_TRUE(encoder.finished());
  EXPECT_NE(out.find("arrived before the call started"), std::string::npos);

  StreamEncoder args;
  out.clear();
  ir::StreamEvent start = event(K::kToolCallStart, {}, 0);
  start.name = "f";
  args.encode(start, out);
  args.encode(event(K::kToolCallDelta, "[1,2]", 0), out);
  EXPECT_TRUE(args.finished());
  EXPECT_NE(out.find("not a JSON object"), std::string::npos);
}

TEST(StreamEncoder, ClampsAndCountsUsageItCannotExpress) {
  StreamEncoder encoder;
  std::string out;
  encoder.encode(event(K::kStart), out);
  ir::StreamEvent usage = event(K::kUsage);
  usage.usage = {5, 3, 9, 0, 4};  // cache reads above input, reasoning above output
  encoder.encode(usage, out);
  encoder.encode(event(K::kRedactedReasoning, "opaque"), out);
  encoder.encode(event(K::kDone), out);
  EXPECT_EQ(encoder.usage_clamped(), 1u);
  EXPECT_EQ(encoder.dropped_events(), 1u);
  const auto parsed = chunks(out);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(json::serialize(parsed[0].at("usageMetadata")),
            R"({"promptTokenCount":5,"candidatesTokenCount":0,"totalTokenCount":8,)"
            R"("cachedContentTokenCount":5,"thoughtsTokenCount":3})");
}

}  // namespace
}  // namespace sluice::protocol::gemini
