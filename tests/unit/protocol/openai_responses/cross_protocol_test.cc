// Responses <-> the other protocols through the IR: what a caller of one protocol sees of an
// upstream of another must say the same (text, reasoning, tool calls, usage) in a valid stream.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "../../support/responses_stream_check.h"
#include "helpers.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/request_encoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/gemini/request_decoder.h"
#include "protocol/gemini/request_encoder.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_chat/stream_encoder.h"
#include "protocol/openai_responses/request_decoder.h"
#include "protocol/openai_responses/request_encoder.h"
#include "protocol/openai_responses/response.h"

namespace sluice::protocol::openai_responses {
namespace {
namespace json = boost::json;
using namespace testing;

template <class Decoder>
std::vector<ir::StreamEvent> decode_with(std::string_view bytes, std::size_t step = 0) {
  Decoder decoder;
  std::vector<ir::StreamEvent> out;
  test::for_each_sse_event(bytes, step,
                           [&](const codec::SseEvent& ev) { decoder.on_event(ev, out); });
  decoder.on_end(out);
  return out;
}

template <class Encoder>
std::string encode_with(Encoder& encoder, const std::vector<ir::StreamEvent>& events) {
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  return out;
}

std::vector<std::string> files(std::string_view corpus, std::string_view extension) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(test::fixture_dir(corpus))) {
    if (entry.path().extension() == extension) {
      out.push_back(entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  EXPECT_GE(out.size(), 4u) << "fixtures not found in " << corpus;
  return out;
}

void expect_same_calls(const Summary& a, const Summary& b, bool same_ids) {
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (std::size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].name, b.calls[i].name);
    EXPECT_EQ(json::parse(a.calls[i].arguments.empty() ? "{}" : a.calls[i].arguments),
              json::parse(b.calls[i].arguments.empty() ? "{}" : b.calls[i].arguments));
    if (same_ids) {
      EXPECT_EQ(a.calls[i].id, b.calls[i].id);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Responses upstream -> callers of other protocols

TEST(ResponsesCrossProtocol, ResponsesStreamsToAnthropicCallers) {
  for (const std::string& name : stream_fixtures()) {
    SCOPED_TRACE(name);
    const auto ir = decode_stream(fixture(name));
    const Summary want = summarize(ir);
    anthropic::StreamEncoder encoder;
    const std::string bytes = encode_with(encoder, ir);
    const Summary got = summarize(decode_with<anthropic::StreamDecoder>(bytes));
    EXPECT_EQ(got.error.has_value(), want.error.has_value())
        << (got.error ? got.error->message() : "") << "\n"
        << bytes.substr(0, 3000);
    EXPECT_EQ(got.text, want.text);
    EXPECT_EQ(got.reasoning, want.reasoning);
    EXPECT_EQ(got.redacted, want.redacted);
    expect_same_calls(got, want, /*same_ids=*/false);  // Anthropic ids get the toolu_ prefix
    if (want.usage) {
      ASSERT_TRUE(got.usage);
      // Anthropic has no reasoning count; every other figure survives.
      ir::Usage expected = *want.usage;
      expected.reasoning_tokens = 0;
      EXPECT_EQ(*got.usage, expected);
    }
    if (!want.error) {
      EXPECT_EQ(got.finish, want.finish);
    }
  }
}

TEST(ResponsesCrossProtocol, ResponsesStreamsToChatCallers) {
  for (const std::string& name : stream_fixtures()) {
    SCOPED_TRACE(name);
    const auto ir = decode_stream(fixture(name));
    const Summary want = summarize(ir);
    openai_chat::StreamEncoder encoder(/*include_usage=*/true, 1700000000);
    const std::string bytes = encode_with(encoder, ir);
    const Summary got = summarize(decode_with<openai_chat::StreamDecoder>(bytes));
    EXPECT_EQ(got.error.has_value(), want.error.has_value());
    EXPECT_EQ(got.text, want.text);
    EXPECT_EQ(got.reasoning, want.reasoning);  // as reasoning_content
    expect_same_calls(got, want, /*same_ids=*/true);
    EXPECT_EQ(got.usage, want.usage);  // cached and reasoning counts included
    if (!want.error) {
      EXPECT_EQ(got.finish, want.finish);
    }
  }
}

TEST(ResponsesCrossProtocol, ResponsesAnswersToOtherCallers) {
  for (const char* name :
       {"response-text.json", "response-function-call.json", "response-reasoning.json"}) {
    SCOPED_TRACE(name);
    const ir::Response r = *decode_response(fixture(name));
    auto chat = openai_chat::decode_response(*openai_chat::encode_response(r, r.created));
    ASSERT_TRUE(chat);
    EXPECT_EQ(chat->usage, r.usage);
    EXPECT_EQ(chat->finish, r.finish);
    auto message = anthropic::decode_response(*anthropic::encode_response(r));
    ASSERT_TRUE(message);
    EXPECT_EQ(message->usage->input_tokens, r.usage->input_tokens);
    EXPECT_EQ(message->usage->output_tokens, r.usage->output_tokens);
    EXPECT_EQ(message->finish, r.finish);
  }
}

// ---------------------------------------------------------------------------------------------
// Upstreams of other protocols -> Responses callers

void expect_valid_responses_stream(const std::vector<ir::StreamEvent>& ir) {
  const Summary want = summarize(ir);
  const std::string bytes = encode_stream(ir);
  test::ResponsesObserved o;
  ASSERT_EQ(test::check_responses_stream(bytes, o), "") << bytes.substr(0, 3000);
  EXPECT_EQ(o.text, want.text);
  EXPECT_EQ(o.reasoning, want.reasoning);
  ASSERT_EQ(o.calls.size(), want.calls.size());
  for (std::size_t i = 0; i < want.calls.size(); ++i) {
    EXPECT_EQ(o.calls[i].call_id, want.calls[i].id.empty() ? o.calls[i].call_id : want.calls[i].id);
    EXPECT_EQ(o.calls[i].name, want.calls[i].name);
    EXPECT_EQ(o.calls[i].arguments, want.calls[i].arguments);
  }
  if (want.error) {
    EXPECT_EQ(o.status, "failed");
    EXPECT_EQ(o.error_message, want.error->message());
  } else {
    EXPECT_EQ(o.usage, want.usage);
    EXPECT_EQ(o.status, want.finish == ir::FinishReason::kLength ? "incomplete" : "completed");
  }
  // And a Responses client of ours reads back the same.
  const Summary back = summarize(decode_stream(bytes));
  EXPECT_EQ(back.text, want.text);
  EXPECT_EQ(back.calls.size(), want.calls.size());
  EXPECT_EQ(back.usage, want.error ? std::nullopt : want.usage);
}

TEST(ResponsesCrossProtocol, AnthropicStreamsToResponsesCallers) {
  for (const std::string& name : files("anthropic", ".sse")) {
    SCOPED_TRACE(name);
    for (std::size_t step : {0, 1, 5}) {
      const auto ir =
          decode_with<anthropic::StreamDecoder>(test::read_fixture("anthropic", name), step);
      expect_valid_responses_stream(ir);
    }
  }
}

TEST(ResponsesCrossProtocol, ChatStreamsToResponsesCallers) {
  for (const std::string& name : files("openai-chat", ".sse")) {
    SCOPED_TRACE(name);
    for (std::size_t step : {0, 1, 5}) {
      const auto ir =
          decode_with<openai_chat::StreamDecoder>(test::read_fixture("openai-chat", name), step);
      expect_valid_responses_stream(ir);
    }
  }
}

TEST(ResponsesCrossProtocol, OtherAnswersToResponsesCallers) {
  auto check = [](const ir::Response& r) {
    auto encoded = encode_response(r, 1700000000);
    ASSERT_TRUE(encoded) << encoded.error().message();
    const ir::Response back = *decode_response(*encoded);
    EXPECT_EQ(back.usage, r.usage);
    EXPECT_EQ(back.finish == ir::FinishReason::kToolCalls,
              r.finish == ir::FinishReason::kToolCalls);
    std::string text;
    std::string back_text;
    std::size_t calls = 0;
    std::size_t back_calls = 0;
    for (const auto& p : r.content) {
      text += p.kind == ir::PartKind::kText ? p.text : "";
      calls += p.kind == ir::PartKind::kToolCall ? 1 : 0;
    }
    for (const auto& p : back.content) {
      back_text += p.kind == ir::PartKind::kText ? p.text : "";
      back_calls += p.kind == ir::PartKind::kToolCall ? 1 : 0;
    }
    EXPECT_EQ(back_text, text);
    EXPECT_EQ(back_calls, calls);
  };
  for (const std::string& name : files("anthropic", ".json")) {
    SCOPED_TRACE(name);
    auto r = anthropic::decode_response(test::read_fixture("anthropic", name));
    if (name.starts_with("error")) {
      EXPECT_FALSE(r);
      continue;
    }
    ASSERT_TRUE(r) << r.error().message();
    check(*r);
  }
  for (const std::string& name : files("openai-chat", ".json")) {
    SCOPED_TRACE(name);
    auto r = openai_chat::decode_response(test::read_fixture("openai-chat", name));
    if (name.starts_with("error")) {
      EXPECT_FALSE(r);
      continue;
    }
    ASSERT_TRUE(r) << r.error().message();
    check(*r);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

TEST(ResponsesCrossProtocol, ResponsesRequestsEncodeForOtherUpstreams) {
  constexpr std::string_view kBody = R"({"model":"m","instructions":"Be brief.","input":[
    {"role":"user","content":"Weather in Paris?"},
    {"type":"function_call","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},
    {"type":"function_call_output","call_id":"call_1","output":"18C"},
    {"role":"user","content":"Thanks"}],
    "tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}],
    "max_output_tokens":100,"reasoning":{"effort":"low"}})";
  const ir::Request r = *decode_request(kBody);

  auto chat = openai_chat::decode_request(openai_chat::encode_request(r, "gpt", false));
  ASSERT_TRUE(chat) << chat.error().message();
  EXPECT_EQ(chat->system.at(0).text, "Be brief.");
  EXPECT_EQ(chat->tools.size(), 1u);
  EXPECT_EQ(chat->max_tokens, 100u);
  EXPECT_EQ(chat->reasoning.effort, "low");

  auto body = anthropic::encode_request(r, "claude", true);
  ASSERT_TRUE(body) << body.error().message();
  auto message = anthropic::decode_request(*body);
  ASSERT_TRUE(message) << message.error().message();
  EXPECT_EQ(message->system.at(0).text, "Be brief.");
  EXPECT_TRUE(message->stream);
  const auto& calls = message->messages.at(1).content;
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back().kind, ir::PartKind::kToolCall);
  EXPECT_EQ(calls.back().name, "weather");
}

// Structured output survives every hop: chat -> Gemini -> Anthropic -> Responses -> chat. Each
// hop keeps the schema; the name lives only where the protocol has one.
TEST(ResponsesCrossProtocol, StructuredOutputRoundTripsThroughEveryProtocol) {
  constexpr std::string_view kSchema =
      R"({"type":"object","properties":{"city":{"type":"string"},"temp":{"type":["number","null"]}},"required":["city","temp"],"additionalProperties":false})";
  const std::string chat_body =
      R"({"model":"m","messages":[{"role":"user","content":"Weather?"}],"response_format":)"
      R"({"type":"json_schema","json_schema":{"name":"weather","strict":true,"schema":)" +
      std::string(kSchema) + "}}}";
  auto from_chat = openai_chat::decode_request(chat_body);
  ASSERT_TRUE(from_chat) << from_chat.error().message();

  auto gemini_body = gemini::encode_request(*from_chat);
  ASSERT_TRUE(gemini_body) << gemini_body.error().message();
  auto from_gemini = gemini::decode_request(*gemini_body);
  ASSERT_TRUE(from_gemini) << from_gemini.error().message();
  EXPECT_EQ(from_gemini->response_format.schema, kSchema);

  auto anthropic_body = anthropic::encode_request(*from_gemini, "claude", false);
  ASSERT_TRUE(anthropic_body) << anthropic_body.error().message();
  auto from_anthropic = anthropic::decode_request(*anthropic_body);
  ASSERT_TRUE(from_anthropic) << from_anthropic.error().message();
  EXPECT_EQ(from_anthropic->response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(from_anthropic->response_format.schema, kSchema);

  auto responses_body = encode_request(*from_anthropic, "gpt", false);
  ASSERT_TRUE(responses_body) << responses_body.error().message();
  auto from_responses = decode_request(*responses_body);
  ASSERT_TRUE(from_responses) << from_responses.error().message();
  EXPECT_EQ(from_responses->response_format.name, "response") << "the name was lost at Gemini";

  auto back =
      openai_chat::decode_request(openai_chat::encode_request(*from_responses, "gpt", false));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(back->response_format.schema, kSchema);

  // json_object: Gemini and Responses keep it; Anthropic has no JSON mode without a schema.
  ir::Request object = *from_chat;
  object.response_format = {};
  object.response_format.kind = ir::ResponseFormat::Kind::kJsonObject;
  auto g = gemini::decode_request(*gemini::encode_request(object));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->response_format.kind, ir::ResponseFormat::Kind::kJsonObject);
  auto a = anthropic::decode_request(*anthropic::encode_request(object, "claude", false));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->response_format.kind, ir::ResponseFormat::Kind::kText);
  EXPECT_EQ(a->system.back().text, "Respond with a single JSON object and nothing else.");
}

}  // namespace
}  // namespace sluice::protocol::openai_responses
