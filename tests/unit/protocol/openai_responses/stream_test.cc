#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/responses_stream_check.h"
#include "helpers.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/openai_responses/stream_sniffer.h"

namespace sluice::protocol::openai_responses {
namespace {
namespace json = boost::json;
using namespace testing;

// Every `data` of the events named `type`, parsed.
std::vector<json::value> events_named(std::string_view bytes, std::string_view type) {
  std::vector<json::value> out;
  test::for_each_sse_event(bytes, 0, [&](const codec::SseEvent& ev) {
    if (ev.event == type) {
      out.push_back(json::parse(ev.data));
    }
  });
  return out;
}

// The concatenated `field` of every event named `type` (an oracle independent of the decoder).
std::string joined(std::string_view bytes, std::string_view type, std::string_view field,
                   std::string_view separator = "") {
  std::string out;
  bool first = true;
  for (const json::value& v : events_named(bytes, type)) {
    if (!first) {
      out.append(separator);
    }
    first = false;
    out.append(v.at(field).as_string());
  }
  return out;
}

ir::StreamEvent ev(ir::StreamEventKind kind, std::string text = {}, std::uint32_t index = 0) {
  ir::StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  e.index = index;
  return e;
}

ir::StreamEvent start(std::string id = "msg_1", std::string model = "m") {
  ir::StreamEvent e = ev(ir::StreamEventKind::kStart);
  e.id = std::move(id);
  e.model = std::move(model);
  return e;
}

ir::StreamEvent tool_start(std::uint32_t index, std::string id, std::string name) {
  ir::StreamEvent e = ev(ir::StreamEventKind::kToolCallStart, {}, index);
  e.id = std::move(id);
  e.name = std::move(name);
  return e;
}

ir::StreamEvent usage(std::uint64_t in, std::uint64_t out, std::uint64_t cached = 0,
                      std::uint64_t reasoning = 0, std::uint64_t written = 0) {
  ir::StreamEvent e = ev(ir::StreamEventKind::kUsage);
  e.usage = {in, out, cached, written, reasoning};
  return e;
}

ir::StreamEvent finish(ir::FinishReason reason) {
  ir::StreamEvent e = ev(ir::StreamEventKind::kFinish);
  e.finish = reason;
  return e;
}

// ---------------------------------------------------------------------------------------------
// Decoding the recorded streams

TEST(ResponsesStreamDecoder, EveryFixtureGivesTheSameEventsAtEverySplitPoint) {
  for (const std::string& name : stream_fixtures()) {
    SCOPED_TRACE(name);
    const std::string bytes = fixture(name);
    ASSERT_FALSE(bytes.empty());
    const auto whole = decode_stream(bytes);
    expect_ir_contract(whole);
    for (std::size_t step : {1, 2, 3, 7, 13, 64, 4096}) {
      EXPECT_EQ(describe(decode_stream(bytes, step)), describe(whole)) << "step " << step;
    }
  }
}

TEST(ResponsesStreamDecoder, TextStream) {
  const std::string bytes = fixture("stream-text.sse");
  const auto events = decode_stream(bytes);
  const Summary s = summarize(events);
  EXPECT_EQ(s.id, "resp_0dbef2d9d14a548c00696d5e6f5080819086a0a3791c4d6b0c");
  EXPECT_EQ(s.model, "gpt-5.2-2025-12-11");
  EXPECT_EQ(s.text, "2+2 = 4");
  EXPECT_EQ(s.text, joined(bytes, "response.output_text.delta", "delta"));
  ASSERT_TRUE(s.usage);
  EXPECT_EQ(*s.usage, (ir::Usage{20, 10, 0, 0, 0}));
  EXPECT_EQ(s.finish, ir::FinishReason::kStop);
  EXPECT_TRUE(s.done);
  EXPECT_FALSE(s.error);
  // Text deltas come one IR event per upstream delta.
  std::size_t deltas = 0;
  for (const auto& e : events) {
    deltas += e.kind == ir::StreamEventKind::kTextDelta ? 1 : 0;
  }
  EXPECT_EQ(deltas, 6u);
}

TEST(ResponsesStreamDecoder, March2025StreamWithoutSequenceNumbers) {
  const std::string bytes = fixture("stream-text-2025-03-no-sequence-number.sse");
  const Summary s = summarize(decode_stream(bytes));
  EXPECT_EQ(s.text, "The capital of France is Paris.");
  EXPECT_EQ(*s.usage, (ir::Usage{278, 9, 0, 0, 0}));
  EXPECT_TRUE(s.done);
}

TEST(ResponsesStreamDecoder, FunctionCallKeepsCallIdAsTheIrId) {
  const Summary s = summarize(decode_stream(fixture("stream-function-call.sse")));
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0], (Summary::Call{"call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital",
                                       R"({"country":"France"})"}));
  EXPECT_EQ(s.finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(*s.usage, (ir::Usage{255, 16, 0, 0, 0}));
  EXPECT_TRUE(s.text.empty());
}

TEST(ResponsesStreamDecoder, EncryptedReasoningWithoutSummaryIsRedactedReasoning) {
  const std::string bytes = fixture("stream-reasoning-function-call.sse");
  const Summary s = summarize(decode_stream(bytes));
  // The encrypted_content of output_item.done (it differs from the one in .added).
  const auto done = events_named(bytes, "response.output_item.done");
  ASSERT_EQ(s.redacted.size(), 1u);
  EXPECT_EQ(s.redacted[0], done[0].at("item").at("encrypted_content").as_string());
  EXPECT_TRUE(s.reasoning.empty());
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0].name, "final_result");
  EXPECT_EQ(s.calls[0].arguments, R"({"result":6666})");
  // Reasoning tokens are part of output_tokens, as in the IR.
  EXPECT_EQ(*s.usage, (ir::Usage{53, 469, 0, 0, 448}));
  EXPECT_EQ(s.finish, ir::FinishReason::kToolCalls);
}

TEST(ResponsesStreamDecoder, ReasoningSummaryPartsJoinWithABlankLine) {
  const std::string bytes = fixture("stream-reasoning-summary-text.sse");
  const Summary s = summarize(decode_stream(bytes));
  EXPECT_EQ(s.reasoning, joined(bytes, "response.reasoning_summary_text.done", "text", "\n\n"));
  EXPECT_EQ(s.text, joined(bytes, "response.output_text.delta", "delta"));
  EXPECT_EQ(*s.usage, (ir::Usage{13, 1680, 0, 0, 1408}));
  EXPECT_EQ(s.finish, ir::FinishReason::kStop);
}

TEST(ResponsesStreamDecoder, BuiltInToolItemsCannotBeTranslated) {
  const auto events = decode_stream(fixture("stream-web-search-cached-tokens.sse"));
  expect_ir_contract(events);
  ASSERT_EQ(events.back().kind, ir::StreamEventKind::kError);
  EXPECT_EQ(events.back().error.kind(), ErrorKind::kUpstreamProtocol);
  EXPECT_EQ(events.back().error.message(), "cannot translate output item 'web_search_call'");
}

TEST(ResponsesStreamDecoder, ErrorEventEndsTheStream) {
  const auto events = decode_stream(fixture("stream-error-insufficient-quota.sse"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, ir::StreamEventKind::kStart);
  ASSERT_EQ(events[1].kind, ir::StreamEventKind::kError);
  EXPECT_EQ(events[1].error.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(events[1].error.http_status(), 429);
  EXPECT_EQ(events[1].error.code(), "insufficient_quota");
  EXPECT_TRUE(events[1].error.message().starts_with("You exceeded your current quota"));
}

TEST(ResponsesStreamDecoder, ErrorEventInTheSpecShape) {
  StreamDecoder d;
  std::vector<ir::StreamEvent> out;
  d.decode("error",
           R"({"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null,)"
           R"("sequence_number":0})",
           out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].error.http_status(), 429);
  EXPECT_EQ(out[0].error.message(), "slow down");
  EXPECT_TRUE(d.finished());
}

TEST(ResponsesStreamDecoder, StreamEndingBeforeCompletedIsAnError) {
  std::string bytes = fixture("stream-text.sse");
  bytes.resize(bytes.find("event: response.completed"));
  const auto events = decode_stream(bytes);
  ASSERT_EQ(events.back().kind, ir::StreamEventKind::kError);
  EXPECT_EQ(events.back().error.message(), "upstream stream ended before response.completed");
  EXPECT_EQ(summarize(events).text, "2+2 = 4");
}

TEST(ResponsesStreamDecoder, IncompleteForMaxOutputTokensIsLength) {
  std::string bytes = fixture("stream-text.sse");
  const std::size_t at = bytes.find("event: response.completed");
  std::string final = bytes.substr(at);
  bytes.resize(at);
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"response.completed", "response.incomplete"},
        {R"("status":"completed")", R"("status":"incomplete")"},
        {R"("incomplete_details":null)",
         R"("incomplete_details":{"reason":"max_output_tokens"})"}}) {
    for (std::size_t p = final.find(from); p != std::string::npos;
         p = final.find(from, p + to.size())) {
      final.replace(p, from.size(), to);
    }
  }
  const Summary s = summarize(decode_stream(bytes + final));
  EXPECT_EQ(s.finish, ir::FinishReason::kLength);
  EXPECT_TRUE(s.done);
  EXPECT_EQ(s.usage->output_tokens, 10u);
}

TEST(ResponsesStreamDecoder, FailedResponseIsAnError) {
  StreamDecoder d;
  std::vector<ir::StreamEvent> out;
  d.decode("response.created",
           R"({"type":"response.created","response":{"id":"resp_1","model":"m"}})", out);
  d.decode("response.failed",
           R"({"type":"response.failed","response":{"id":"resp_1","status":"failed",)"
           R"("error":{"code":"server_error","message":"boom"}}})",
           out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].kind, ir::StreamEventKind::kError);
  EXPECT_EQ(out[1].error.http_status(), 500);
  EXPECT_EQ(out[1].error.message(), "boom");
}

TEST(ResponsesStreamDecoder, UnknownEventsAndBadOrderAreExplicitErrors) {
  auto run = [](std::vector<std::pair<std::string, std::string>> events) {
    StreamDecoder d;
    std::vector<ir::StreamEvent> out;
    for (const auto& [name, data] : events) {
      d.decode(name, data, out);
    }
    return out;
  };
  const std::string created =
      R"({"type":"response.created","response":{"id":"resp_1","model":"m"}})";
  auto out = run({{"response.created", created}, {"response.audio.delta", R"({"delta":"AAA"})"}});
  ASSERT_EQ(out.back().kind, ir::StreamEventKind::kError);
  EXPECT_EQ(out.back().error.message(), "cannot translate event 'response.audio.delta'");

  out = run({{"response.output_text.delta", R"({"output_index":0,"delta":"x"})"}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].error.message(),
            "cannot translate response.output_text.delta before response.created");

  out =
      run({{"response.created", created},
           {"response.output_text.delta", R"({"output_index":3,"content_index":0,"delta":"x"})"}});
  EXPECT_EQ(out.back().kind, ir::StreamEventKind::kError);

  out = run({{"response.created", created}, {"response.created", created}});
  EXPECT_EQ(out.back().error.message(), "cannot translate a second response.created");

  out = run({{"response.created", "not json"}});
  EXPECT_EQ(out.back().kind, ir::StreamEventKind::kError);
}

TEST(ResponsesStreamDecoder, ItemsWithoutDeltasAreEmittedWhenDone) {
  StreamDecoder d;
  std::vector<ir::StreamEvent> out;
  d.decode("response.created", R"({"response":{"id":"resp_1","model":"m"}})", out);
  d.decode("response.output_item.added",
           R"({"output_index":0,"item":{"id":"msg_1","type":"message","content":[]}})", out);
  d.decode("response.output_item.done",
           R"({"output_index":0,"item":{"id":"msg_1","type":"message","content":[)"
           R"({"type":"output_text","text":"whole"}]}})",
           out);
  d.decode(
      "response.output_item.added",
      R"({"output_index":1,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":""}})",
      out);
  d.decode("response.function_call_arguments.done", R"({"output_index":1,"arguments":"{\"a\":1}"})",
           out);
  d.decode("response.completed", R"({"response":{"status":"completed","usage":null}})", out);
  const Summary s = summarize(out);
  EXPECT_EQ(s.text, "whole");
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0].arguments, R"({"a":1})");
  EXPECT_FALSE(s.usage);
  EXPECT_EQ(s.finish, ir::FinishReason::kToolCalls);
}

// ---------------------------------------------------------------------------------------------
// The checker itself accepts the recorded streams it can read

TEST(ResponsesStreamCheck, AcceptsTheRecordedStreams) {
  for (const char* name :
       {"stream-text.sse", "stream-function-call.sse", "stream-reasoning-function-call.sse",
        "stream-reasoning-summary-text.sse", "stream-text-2025-03-no-sequence-number.sse"}) {
    SCOPED_TRACE(name);
    const std::string bytes = fixture(name);
    test::ResponsesObserved o;
    const bool sequenced = bytes.find("sequence_number") != std::string::npos;
    EXPECT_EQ(test::check_responses_stream(bytes, o, sequenced), "");
    const Summary s = summarize(decode_stream(bytes));
    EXPECT_EQ(o.text, s.text);
    EXPECT_EQ(o.reasoning, s.reasoning);
    EXPECT_EQ(o.usage, s.usage);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

// Every fixture's IR, encoded, is a valid Responses stream that says the same, and decodes back
// to the same IR (ids aside: the encoder names its own items).
TEST(ResponsesStreamEncoder, FixturesRoundTrip) {
  for (const std::string& name : stream_fixtures()) {
    SCOPED_TRACE(name);
    const auto events = decode_stream(fixture(name));
    const std::string encoded = encode_stream(events);
    test::ResponsesObserved o;
    EXPECT_EQ(test::check_responses_stream(encoded, o), "") << encoded.substr(0, 2000);
    const Summary s = summarize(events);
    EXPECT_EQ(o.text, s.text);
    EXPECT_EQ(o.reasoning, s.reasoning);
    EXPECT_EQ(o.usage, s.usage);
    ASSERT_EQ(o.calls.size(), s.calls.size());
    for (std::size_t i = 0; i < s.calls.size(); ++i) {
      EXPECT_EQ(o.calls[i].call_id, s.calls[i].id);
      EXPECT_EQ(o.calls[i].name, s.calls[i].name);
      EXPECT_EQ(o.calls[i].arguments, s.calls[i].arguments);
    }
    EXPECT_EQ(o.response_id, response_id(s.id));
    const Summary back = summarize(decode_stream(encoded));
    EXPECT_EQ(back.text, s.text);
    EXPECT_EQ(back.reasoning, s.reasoning);
    EXPECT_EQ(back.redacted, s.redacted);
    EXPECT_EQ(back.calls, s.calls);
    EXPECT_EQ(back.usage, s.usage);
    EXPECT_EQ(back.finish, s.finish);
    EXPECT_EQ(back.error.has_value(), s.error.has_value());
    if (s.error) {
      EXPECT_EQ(back.error->message(), s.error->message());
      if (!s.error->code().empty()) {  // an empty code goes out as the error kind's name
        EXPECT_EQ(back.error->code(), s.error->code());
      }
    }
  }
}

TEST(ResponsesStreamEncoder, TextStreamEventByEvent) {
  StreamEncoder enc(1700000000);
  std::string out;
  enc.encode(start("msg_01abc", "claude-x"), out);
  EXPECT_NE(out.find("event: response.created\n"), std::string::npos);
  EXPECT_NE(out.find("event: response.in_progress\n"), std::string::npos);
  EXPECT_NE(out.find(R"("id":"resp_msg_01abc")"), std::string::npos);
  out.clear();
  enc.encode(ev(ir::StreamEventKind::kTextDelta, "Hel"), out);
  // The delta goes out with the event that carried it.
  EXPECT_NE(out.find(R"("delta":"Hel")"), std::string::npos);
  EXPECT_NE(out.find(R"("item_id":"msg_msg_01abc_0")"), std::string::npos);
  out.clear();
  enc.encode(ev(ir::StreamEventKind::kTextDelta, "lo"), out);
  EXPECT_EQ(out,
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
            "\"item_id\":\"msg_msg_01abc_0\",\"output_index\":0,\"content_index\":0,\"delta\":"
            "\"lo\",\"logprobs\":[],\"sequence_number\":5}\n\n");
  enc.encode(usage(10, 5, 4, 0, 0), out);
  enc.encode(finish(ir::FinishReason::kStop), out);
  enc.encode(ev(ir::StreamEventKind::kDone), out);
  EXPECT_TRUE(enc.finished());
  EXPECT_FALSE(enc.error());
  EXPECT_EQ(out.find("[DONE]"), std::string::npos);
  const auto completed = events_named(out, "response.completed");
  ASSERT_EQ(completed.size(), 1u);
  const json::value& u = completed[0].at("response").at("usage");
  EXPECT_EQ(u.at("input_tokens").as_int64(), 10);
  EXPECT_EQ(u.at("input_tokens_details").at("cached_tokens").as_int64(), 4);
  EXPECT_EQ(u.at("output_tokens").as_int64(), 5);
  EXPECT_EQ(u.at("total_tokens").as_int64(), 15);
  EXPECT_EQ(
      completed[0].at("response").at("output").at(0).at("content").at(0).at("text").as_string(),
      "Hello");
}

// The done events and the final response copy each item's text from its deltas' escaped
// form; a UTF-8 sequence split between deltas (each delta alone malformed, written with
// U+FFFD) must still be whole there, as escaping the joined text gives.
TEST(ResponsesStreamEncoder, TextSplitInsideAUtf8SequenceIsWholeWhenDone) {
  StreamEncoder enc(1700000000);
  std::string out;
  enc.encode(start(), out);
  enc.encode(ev(ir::StreamEventKind::kReasoningDelta, "r\xe2\x82"), out);
  enc.encode(ev(ir::StreamEventKind::kReasoningDelta, "\xac\n"), out);
  enc.encode(ev(ir::StreamEventKind::kTextDelta, "a\xf0\x9f"), out);
  enc.encode(ev(ir::StreamEventKind::kTextDelta, "\x98\x80\"b\""), out);
  enc.encode(tool_start(0, "call_1", "f"), out);
  enc.encode(ev(ir::StreamEventKind::kToolCallDelta, "{\"k\":\"\xc3", 0), out);
  enc.encode(ev(ir::StreamEventKind::kToolCallDelta, "\xa9\"}", 0), out);
  enc.encode(finish(ir::FinishReason::kToolCalls), out);
  enc.encode(ev(ir::StreamEventKind::kDone), out);
  EXPECT_NE(out.find(R"("delta":"r\ufffd\ufffd")"), std::string::npos);
  EXPECT_NE(out.find(R"("delta":"\ufffd\ufffd\"b\"")"), std::string::npos);
  const std::string reasoning = "r\xe2\x82\xac\n";
  const std::string text = "a\xf0\x9f\x98\x80\"b\"";
  const std::string arguments = "{\"k\":\"\xc3\xa9\"}";
  EXPECT_EQ(joined(out, "response.reasoning_summary_text.done", "text"), reasoning);
  EXPECT_EQ(joined(out, "response.output_text.done", "text"), text);
  EXPECT_EQ(events_named(out, "response.content_part.done").at(0).at("part").at("text").as_string(),
            text);
  EXPECT_EQ(joined(out, "response.function_call_arguments.done", "arguments"), arguments);
  const auto completed = events_named(out, "response.completed");
  ASSERT_EQ(completed.size(), 1u);
  const json::value& output = completed[0].at("response").at("output");
  EXPECT_EQ(output.at(0).at("summary").at(0).at("text").as_string(), reasoning);
  EXPECT_EQ(output.at(1).at("content").at(0).at("text").as_string(), text);
  EXPECT_EQ(output.at(2).at("arguments").as_string(), arguments);
  // Well-formed deltas: the escaped form is what escaping the whole gives.
  StreamEncoder plain(1700000000);
  std::string again;
  plain.encode(start(), again);
  plain.encode(ev(ir::StreamEventKind::kTextDelta, "x\n\t\"\\"), again);
  plain.encode(ev(ir::StreamEventKind::kTextDelta, "\x01\xe2\x82\xacy"), again);
  plain.encode(ev(ir::StreamEventKind::kDone), again);
  EXPECT_NE(again.find(R"("text":"x\n\t\"\\\u0001)"
                       "\xe2\x82\xac"
                       R"(y","logprobs")"),
            std::string::npos);
}

TEST(ResponsesStreamEncoder, ParallelToolCallsInterleaveByOutputIndex) {
  const std::vector<ir::StreamEvent> events = {
      start(),
      ev(ir::StreamEventKind::kTextDelta, "Let me check."),
      tool_start(0, "toolu_a", "weather"),
      tool_start(1, "", "time"),
      ev(ir::StreamEventKind::kToolCallDelta, R"({"city":)", 0),
      ev(ir::StreamEventKind::kToolCallDelta, R"({})", 1),
      ev(ir::StreamEventKind::kToolCallDelta, R"("Paris"})", 0),
      usage(30, 12),
      finish(ir::FinishReason::kToolCalls),
      ev(ir::StreamEventKind::kDone),
  };
  const std::string out = encode_stream(events);
  test::ResponsesObserved o;
  ASSERT_EQ(test::check_responses_stream(out, o), "") << out;
  EXPECT_EQ(o.text, "Let me check.");
  ASSERT_EQ(o.calls.size(), 2u);
  EXPECT_EQ(o.calls[0].call_id, "toolu_a");
  EXPECT_EQ(o.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(o.calls[1].call_id, "call_msg_1_1");  // generated for an empty id
  EXPECT_EQ(o.calls[1].arguments, "{}");
  EXPECT_EQ(o.status, "completed");
}

// An upstream that repeats a call id (found by responses_stream_fuzz): the caller still gets
// calls it can tell apart, the first keeping the upstream's id.
TEST(ResponsesStreamEncoder, ARepeatedCallIdGetsOneOfItsOwn) {
  const std::vector<ir::StreamEvent> events = {
      start(),
      tool_start(0, "call_same", "weather"),
      tool_start(1, "call_same", "weather"),
      tool_start(2, "call_msg_1_1", "time"),  // as the first renamed one would be
      finish(ir::FinishReason::kToolCalls),
      ev(ir::StreamEventKind::kDone),
  };
  const std::string out = encode_stream(events);
  test::ResponsesObserved o;
  ASSERT_EQ(test::check_responses_stream(out, o), "") << out;
  ASSERT_EQ(o.calls.size(), 3u);
  EXPECT_EQ(o.calls[0].call_id, "call_same");
  EXPECT_EQ(o.calls[1].call_id, "call_msg_1_1");
  EXPECT_EQ(o.calls[2].call_id, "call_msg_1_2");
}

TEST(ResponsesStreamEncoder, ReasoningSignatureAndRedactedReasoningBecomeEncryptedContent) {
  const std::vector<ir::StreamEvent> events = {
      start(),
      ev(ir::StreamEventKind::kReasoningDelta, "thinking "),
      ev(ir::StreamEventKind::kReasoningDelta, "hard"),
      ev(ir::StreamEventKind::kReasoningSignature, "sig-1"),
      ev(ir::StreamEventKind::kRedactedReasoning, "opaque"),
      ev(ir::StreamEventKind::kTextDelta, "42"),
      finish(ir::FinishReason::kStop),
      ev(ir::StreamEventKind::kDone),
  };
  const std::string out = encode_stream(events);
  test::ResponsesObserved o;
  ASSERT_EQ(test::check_responses_stream(out, o), "") << out;
  EXPECT_EQ(o.reasoning, "thinking hard");
  EXPECT_EQ(o.encrypted, (std::vector<std::string>{"sig-1", "opaque"}));
  EXPECT_EQ(o.text, "42");
  EXPECT_FALSE(o.usage);  // none reported: null, never zeros
  // And back: a signed summary is reasoning + signature, an encrypted item alone is redacted.
  const Summary back = summarize(decode_stream(out));
  EXPECT_EQ(back.reasoning, "thinking hard");
  EXPECT_EQ(back.signatures, std::vector<std::string>{"sig-1"});
  EXPECT_EQ(back.redacted, std::vector<std::string>{"opaque"});
}

TEST(ResponsesStreamEncoder, LengthAndContentFilterEndIncomplete) {
  for (auto [reason, wire] : {std::pair{ir::FinishReason::kLength, "max_output_tokens"},
                              std::pair{ir::FinishReason::kContentFilter, "content_filter"}}) {
    const std::string out =
        encode_stream({start(), ev(ir::StreamEventKind::kTextDelta, "x"), usage(5, 16),
                       finish(reason), ev(ir::StreamEventKind::kDone)});
    test::ResponsesObserved o;
    ASSERT_EQ(test::check_responses_stream(out, o), "") << out;
    EXPECT_EQ(o.status, "incomplete");
    EXPECT_EQ(o.incomplete_reason, wire);
    EXPECT_EQ(summarize(decode_stream(out)).finish, reason);
  }
}

TEST(ResponsesStreamEncoder, ErrorsEndTheStream) {
  Error quota(ErrorKind::kUpstreamStatus, 429, "over quota");
  quota.with_code("insufficient_quota");
  ir::StreamEvent err = ev(ir::StreamEventKind::kError);
  err.error = quota;

  // Before the stream started: the error event alone.
  {
    StreamEncoder enc(1);
    std::string out;
    enc.encode(err, out);
    EXPECT_TRUE(enc.finished());
    ASSERT_TRUE(enc.error());
    const auto errors = events_named(out, "error");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].at("code").as_string(), "insufficient_quota");
    EXPECT_EQ(errors[0].at("message").as_string(), "over quota");
    EXPECT_EQ(errors[0].at("error").at("type").as_string(), "upstream_error");
    EXPECT_EQ(errors[0].at("sequence_number").as_int64(), 0);
    EXPECT_TRUE(events_named(out, "response.failed").empty());
  }
  // Mid-stream: error, then response.failed, as the API does; nothing after.
  {
    StreamEncoder enc(1);
    std::string out;
    enc.encode(start(), out);
    enc.encode(ev(ir::StreamEventKind::kTextDelta, "partial"), out);
    enc.encode(err, out);
    test::ResponsesObserved o;
    EXPECT_EQ(test::check_responses_stream(out, o), "");
    EXPECT_EQ(o.status, "failed");
    EXPECT_EQ(o.error_code, "insufficient_quota");
    EXPECT_EQ(events_named(out, "response.failed").size(), 1u);
    const std::size_t size = out.size();
    enc.encode(ev(ir::StreamEventKind::kDone), out);
    EXPECT_EQ(out.size(), size);
  }
  // What the stream cannot express.
  for (const auto& events : std::vector<std::vector<ir::StreamEvent>>{
           {start(), finish(ir::FinishReason::kStop), ev(ir::StreamEventKind::kTextDelta, "late")},
           {start(), tool_start(1, "a", "f")},
           {start(), ev(ir::StreamEventKind::kToolCallDelta, "{}", 0)},
       }) {
    StreamEncoder enc(1);
    std::string out;
    for (const auto& e : events) {
      enc.encode(e, out);
    }
    ASSERT_TRUE(enc.error());
    EXPECT_EQ(enc.error()->kind(), ErrorKind::kUpstreamProtocol);
    test::ResponsesObserved o;
    EXPECT_EQ(test::check_responses_stream(out, o), "");
    EXPECT_EQ(o.status, "failed");
  }
}

TEST(ResponsesStreamEncoder, DoneWithoutContentIsAnEmptyCompletedResponse) {
  const std::string out = encode_stream({start(), ev(ir::StreamEventKind::kDone)});
  test::ResponsesObserved o;
  ASSERT_EQ(test::check_responses_stream(out, o), "");
  EXPECT_EQ(o.status, "completed");
  EXPECT_TRUE(o.text.empty());
}

// ---------------------------------------------------------------------------------------------
// Passthrough sniffer

TEST(ResponsesStreamSniffer, ReadsUsageIdAndEndOfEveryFixture) {
  struct Expect {
    const char* name;
    bool answered;
    bool error;
    std::string_view finish;
  };
  for (const Expect& x : {Expect{"stream-text.sse", true, false, "stop"},
                          Expect{"stream-text-2025-03-no-sequence-number.sse", true, false, "stop"},
                          Expect{"stream-function-call.sse", true, false, "tool_calls"},
                          Expect{"stream-reasoning-function-call.sse", true, false, "tool_calls"},
                          Expect{"stream-reasoning-summary-text.sse", true, false, "stop"},
                          Expect{"stream-web-search-cached-tokens.sse", true, false, "stop"},
                          Expect{"stream-error-insufficient-quota.sse", false, true, ""}}) {
    SCOPED_TRACE(x.name);
    const std::string bytes = fixture(x.name);
    const auto created = events_named(bytes, "response.created");
    for (std::size_t step : {0, 1, 7}) {
      StreamSniffer sniffer;
      test::for_each_sse_event(bytes, step, [&](const codec::SseEvent& e) {
        EXPECT_EQ(sniffer.on_event(e), StreamSniffer::Action::kForward);
      });
      EXPECT_EQ(sniffer.answered(), x.answered);
      EXPECT_EQ(sniffer.done(), true);
      EXPECT_EQ(sniffer.saw_error(), x.error);
      EXPECT_EQ(sniffer.finish_reason(), x.finish);
      EXPECT_EQ(sniffer.stored_id(), created.at(0).at("response").at("id").as_string());
      const auto completed = events_named(bytes, "response.completed");
      if (x.answered) {
        ASSERT_TRUE(sniffer.usage());
        const json::value& u = completed.at(0).at("response").at("usage");
        EXPECT_EQ(sniffer.usage()->input_tokens, u.at("input_tokens").as_int64());
        EXPECT_EQ(sniffer.usage()->output_tokens, u.at("output_tokens").as_int64());
        EXPECT_EQ(sniffer.usage()->cache_read_tokens,
                  u.at("input_tokens_details").at("cached_tokens").as_int64());
        EXPECT_EQ(sniffer.usage()->reasoning_tokens,
                  u.at("output_tokens_details").at("reasoning_tokens").as_int64());
        EXPECT_TRUE(sniffer.saw_output());
      } else {
        EXPECT_FALSE(sniffer.usage());
      }
    }
  }
  // The web-search stream: cached tokens inside the input, reasoning inside the output.
  StreamSniffer sniffer;
  test::for_each_sse_event(fixture("stream-web-search-cached-tokens.sse"), 0,
                           [&](const codec::SseEvent& e) { sniffer.on_event(e); });
  EXPECT_EQ(*sniffer.usage(), (ir::Usage{9463, 582, 8320, 0, 512}));
}

TEST(ResponsesStreamSniffer, NoStoredIdWhenTheRequestSaidStoreFalse) {
  StreamSniffer sniffer(/*store=*/false);
  test::for_each_sse_event(fixture("stream-text.sse"), 0,
                           [&](const codec::SseEvent& e) { sniffer.on_event(e); });
  EXPECT_TRUE(sniffer.answered());
  EXPECT_EQ(sniffer.stored_id(), "");
}

}  // namespace
}  // namespace sluice::protocol::openai_responses
