#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/request_encoder.h"
#include "protocol/gemini/request_decoder.h"
#include "protocol/gemini/request_encoder.h"

namespace sluice::protocol::gemini {
namespace {
namespace json = boost::json;

ir::Request decode_ok(std::string_view body, DecodeStats* stats = nullptr) {
  auto r = decode_request(body, stats);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? std::move(*r) : ir::Request{};
}

std::string encode_ok(const ir::Request& request, EncodeStats* stats = nullptr) {
  auto r = encode_request(request, {}, stats);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? std::move(*r) : std::string();
}

void expect_same(const ir::Request& a, const ir::Request& b) {
  EXPECT_EQ(a.system.size(), b.system.size());
  for (std::size_t i = 0; i < std::min(a.system.size(), b.system.size()); ++i) {
    EXPECT_EQ(a.system[i].text, b.system[i].text);
  }
  ASSERT_EQ(a.messages.size(), b.messages.size());
  for (std::size_t m = 0; m < a.messages.size(); ++m) {
    EXPECT_EQ(a.messages[m].role, b.messages[m].role) << m;
    ASSERT_EQ(a.messages[m].content.size(), b.messages[m].content.size()) << m;
    for (std::size_t i = 0; i < a.messages[m].content.size(); ++i) {
      const ir::ContentPart& x = a.messages[m].content[i];
      const ir::ContentPart& y = b.messages[m].content[i];
      EXPECT_EQ(x.kind, y.kind) << m << "." << i;
      EXPECT_EQ(x.text, y.text) << m << "." << i;
      EXPECT_EQ(x.id, y.id) << m << "." << i;
      EXPECT_EQ(x.name, y.name) << m << "." << i;
      EXPECT_EQ(x.arguments, y.arguments) << m << "." << i;
      EXPECT_EQ(x.signature, y.signature) << m << "." << i;
      EXPECT_EQ(x.source, y.source) << m << "." << i;
      EXPECT_EQ(x.media_type, y.media_type) << m << "." << i;
      EXPECT_EQ(x.image_is_url, y.image_is_url) << m << "." << i;
      EXPECT_EQ(x.is_error, y.is_error) << m << "." << i;
      ASSERT_EQ(x.parts.size(), y.parts.size()) << m << "." << i;
      for (std::size_t k = 0; k < x.parts.size(); ++k) {
        EXPECT_EQ(x.parts[k].kind, y.parts[k].kind);
        EXPECT_EQ(x.parts[k].text, y.parts[k].text);
        EXPECT_EQ(x.parts[k].source, y.parts[k].source);
      }
    }
  }
  ASSERT_EQ(a.tools.size(), b.tools.size());
  for (std::size_t i = 0; i < a.tools.size(); ++i) {
    EXPECT_EQ(a.tools[i].name, b.tools[i].name);
    EXPECT_EQ(a.tools[i].description, b.tools[i].description);
    EXPECT_EQ(a.tools[i].parameters, b.tools[i].parameters);
  }
  EXPECT_EQ(a.tool_choice.mode, b.tool_choice.mode);
  EXPECT_EQ(a.tool_choice.name, b.tool_choice.name);
  EXPECT_EQ(a.max_tokens, b.max_tokens);
  EXPECT_EQ(a.temperature, b.temperature);
  EXPECT_EQ(a.top_p, b.top_p);
  EXPECT_EQ(a.top_k, b.top_k);
  EXPECT_EQ(a.stop, b.stop);
  EXPECT_EQ(a.reasoning.enabled, b.reasoning.enabled);
  EXPECT_EQ(a.reasoning.budget_tokens, b.reasoning.budget_tokens);
}

// A multi-turn function-calling conversation as the Gen AI SDK sends it (camelCase), with a
// Gemini 3 thought signature on the first call and a thought summary.
constexpr std::string_view kConversation = R"({
  "contents": [
    {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"},
                               {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
    {"role": "model", "parts": [
      {"text": "Let me look", "thought": true},
      {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "SIG1"},
      {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
    {"role": "user", "parts": [
      {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}},
      {"functionResponse": {"name": "get_weather", "response": {"temp": 21, "sky": "cloudy"}}}]},
    {"role": "model", "parts": [{"text": "Paris is sunny, Rome cloudy."}]},
    {"parts": [{"text": "And a picture?"},
               {"fileData": {"fileUri": "https://example.com/a.jpg", "mimeType": "image/jpeg"}}]}
  ],
  "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Use metric."}]},
  "tools": [{"functionDeclarations": [
    {"name": "get_weather", "description": "Weather by city",
     "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}},
    {"name": "get_time", "parametersJsonSchema": {"type": "object", "properties": {"tz": {"type": "string"}}}},
    {"name": "ping"}]}],
  "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
  "generationConfig": {"maxOutputTokens": 256, "temperature": 0.5, "topP": 0.9, "topK": 40,
                       "stopSequences": ["END"], "thinkingConfig": {"thinkingBudget": 2048, "includeThoughts": true},
                       "seed": 7},
  "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}]
})";

TEST(DecodeRequest, AConversation) {
  DecodeStats stats;
  const ir::Request r = decode_ok(kConversation, &stats);
  EXPECT_EQ(stats.ignored_fields, 2u) << "seed and safetySettings";
  EXPECT_TRUE(r.model.empty()) << "the model is in the URL";
  ASSERT_EQ(r.system.size(), 2u);
  EXPECT_EQ(r.system[1].text, "Use metric.");
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[0].role, ir::Role::kUser);
  ASSERT_EQ(r.messages[0].content.size(), 2u);
  EXPECT_EQ(r.messages[0].content[1].kind, ir::PartKind::kImage);
  EXPECT_EQ(r.messages[0].content[1].media_type, "image/png");
  EXPECT_FALSE(r.messages[0].content[1].image_is_url);

  const auto& model = r.messages[1].content;
  EXPECT_EQ(r.messages[1].role, ir::Role::kAssistant);
  ASSERT_EQ(model.size(), 3u);
  EXPECT_EQ(model[0].kind, ir::PartKind::kReasoning);
  EXPECT_EQ(model[0].text, "Let me look");
  EXPECT_EQ(model[0].signature, "SIG1") << "the signature closes the thinking before it";
  EXPECT_EQ(model[1].kind, ir::PartKind::kToolCall);
  EXPECT_EQ(model[1].id, "call_1_1");
  EXPECT_EQ(model[1].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(model[2].id, "call_1_2");

  const auto& results = r.messages[2].content;
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kind, ir::PartKind::kToolResult);
  EXPECT_EQ(results[0].id, "call_1_1") << "first unanswered call of that name";
  ASSERT_EQ(results[0].parts.size(), 1u);
  EXPECT_EQ(results[0].parts[0].text, "sunny");
  EXPECT_EQ(results[1].id, "call_1_2");
  EXPECT_EQ(results[1].parts[0].text, R"({"temp":21,"sky":"cloudy"})");

  EXPECT_EQ(r.messages[4].role, ir::Role::kUser) << "no role means user";
  EXPECT_TRUE(r.messages[4].content[1].image_is_url);

  ASSERT_EQ(r.tools.size(), 3u) << "ANY with one allowed name is a named choice";
  EXPECT_EQ(r.tools[0].parameters,
            R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})");
  EXPECT_EQ(r.tools[1].parameters, R"({"type":"object","properties":{"tz":{"type":"string"}}})");
  EXPECT_EQ(r.tools[2].parameters, R"({"type":"object"})");
  EXPECT_EQ(r.tool_choice.mode, ir::ToolChoiceMode::kNamed);
  EXPECT_EQ(r.tool_choice.name, "get_weather");
  EXPECT_EQ(r.max_tokens, 256u);
  EXPECT_EQ(r.temperature, 0.5);
  EXPECT_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.top_k, 40u);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.reasoning.enabled);
  EXPECT_EQ(r.reasoning.budget_tokens, 2048u);
}

TEST(DecodeRequest, SeveralAllowedNamesLeaveOnlyThoseTools) {
  const ir::Request r = decode_ok(R"({"contents":[{"parts":[{"text":"x"}]}],
    "tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"},{"name":"c"}]}],
    "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["c","a"]}}})");
  ASSERT_EQ(r.tools.size(), 2u);
  EXPECT_EQ(r.tools[0].name, "a");
  EXPECT_EQ(r.tools[1].name, "c");
  EXPECT_EQ(r.tool_choice.mode, ir::ToolChoiceMode::kRequired);
}

TEST(DecodeRequest, SnakeCaseAsTheApiAcceptsIt) {
  const ir::Request r = decode_ok(R"({
    "system_instruction": {"parts": [{"text": "sys"}]},
    "contents": [{"role": "user", "parts": [{"inline_data": {"mime_type": "image/jpeg", "data": "AA=="}}]}],
    "tools": [{"function_declarations": [{"name": "f", "parameters_json_schema": {"type": "object"}}]}],
    "tool_config": {"function_calling_config": {"mode": "NONE"}},
    "generation_config": {"max_output_tokens": 9, "stop_sequences": ["x"],
                          "thinking_config": {"thinking_budget": 0}}})");
  EXPECT_EQ(r.system.size(), 1u);
  EXPECT_EQ(r.messages[0].content[0].media_type, "image/jpeg");
  EXPECT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tool_choice.mode, ir::ToolChoiceMode::kNone);
  EXPECT_EQ(r.max_tokens, 9u);
  EXPECT_FALSE(r.reasoning.enabled);
  EXPECT_EQ(r.reasoning.budget_tokens, 0u);
}

TEST(DecodeRequest, ThinkingConfigVariants) {
  auto with = [](std::string_view config) {
    return decode_ok(std::string(R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{)") +
                     "\"thinkingConfig\":" + std::string(config) + "}}");
  };
  EXPECT_TRUE(with(R"({"thinkingBudget":-1})").reasoning.enabled);
  EXPECT_FALSE(with(R"({"thinkingBudget":-1})").reasoning.budget_tokens.has_value());
  EXPECT_EQ(with(R"({"thinkingLevel":"HIGH"})").reasoning.effort, "high");
  EXPECT_TRUE(with(R"({"includeThoughts":true})").reasoning.enabled);
  const ir::Request hidden = with(R"({"includeThoughts":false,"thinkingBudget":512})");
  EXPECT_TRUE(hidden.reasoning.enabled);
  EXPECT_EQ(hidden.reasoning.budget_tokens, 512u);
}

TEST(DecodeRequest, ErrorsInTheApisWords) {
  struct Case {
    std::string_view body;
    std::string_view param;
  };
  const Case cases[] = {
      {R"({})", "contents"},
      {R"({"contents":[]})", "contents"},
      {R"({"contents":[{"role":"assistant","parts":[{"text":"x"}]}]})", "contents[0].role"},
      {R"({"contents":[{"role":"user"}]})", "contents[0].parts"},
      {R"({"contents":[{"parts":[{}]}]})", "contents[0].parts[0]"},
      {R"({"contents":[{"parts":[{"text":1}]}]})", "contents[0].parts[0].text"},
      {R"({"contents":[{"parts":[{"functionResponse":{"name":"f","response":{}}}]}]})",
       "contents[0].parts[0].functionResponse"},
      {R"({"contents":[{"parts":[{"executableCode":{"code":"1"}}]}]})",
       "contents[0].parts[0].executableCode"},
      {R"({"contents":[{"parts":[{"inlineData":{"mimeType":"application/pdf","data":"A"}}]}]})",
       "contents[0].parts[0].inlineData.mimeType"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"tools":[{"googleSearch":{}}]})",
       "tools[0].googleSearch"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"cachedContent":"cachedContents/1"})",
       "cached_content"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/x.enum"}})",
       "generation_config.response_mime_type"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":7}})",
       "generation_config.response_mime_type"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT"},"responseJsonSchema":{"type":"object"}}})",
       "generation_config.response_schema"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseJsonSchema":{"type":"object"}}})",
       "generation_config.response_json_schema"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":[]}})",
       "generation_config.response_schema"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":2}})",
       "generation_config.candidate_count"},
      {R"({"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"AUTO","allowedFunctionNames":["f"]}}})",
       "tool_config.function_calling_config.allowed_function_names"},
  };
  for (const Case& c : cases) {
    auto r = decode_request(c.body);
    ASSERT_FALSE(r.has_value()) << c.body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest) << c.body;
    EXPECT_EQ(r.error().param(), c.param) << c.body << " -> " << r.error().message();
    EXPECT_EQ(r.error().message().rfind("* GenerateContentRequest.", 0), 0u) << r.error().message();
  }
  EXPECT_EQ(decode_request("{").error().message().rfind("Invalid JSON payload received.", 0), 0u);
  EXPECT_FALSE(decode_request("[]").has_value());
}

TEST(RoundTrip, DecodeEncodeDecodeIsTheSame) {
  const ir::Request first = decode_ok(kConversation);
  const std::string body = encode_ok(first);
  const ir::Request second = decode_ok(body);
  expect_same(first, second);
  // Gemini takes no ids in requests: none are written, the pairing is by name and order.
  EXPECT_EQ(body.find("\"id\""), std::string::npos) << body;
  const json::value v = json::parse(body);
  EXPECT_FALSE(v.as_object().contains("model"));
  const json::array& model_parts = v.at("contents").as_array()[1].at("parts").as_array();
  EXPECT_EQ(json::serialize(model_parts[0]), R"({"text":"Let me look","thought":true})");
  EXPECT_EQ(model_parts[1].at("thoughtSignature"), "SIG1")
      << "the signature goes back on the function call";
  EXPECT_EQ(json::serialize(v.at("contents").as_array()[2].at("parts").as_array()[0]),
            R"({"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}})");
  EXPECT_EQ(json::serialize(v.at("toolConfig")),
            R"({"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}})");
  EXPECT_EQ(json::serialize(v.at("generationConfig")),
            R"({"maxOutputTokens":256,"temperature":5E-1,"topP":9E-1,"topK":40,)"
            R"("stopSequences":["END"],"thinkingConfig":{"includeThoughts":true,)"
            R"("thinkingBudget":2048}})");
}

TEST(EncodeRequest, AtMostFiveStopSequences) {
  ir::Request r;
  r.messages.emplace_back().content.push_back(ir::ContentPart::make_text("x"));
  r.stop = {"1", "2", "3", "4", "5", "6", "7"};
  const json::value v = json::parse(encode_ok(r));
  EXPECT_EQ(json::serialize(v.at("generationConfig").at("stopSequences")),
            R"(["1","2","3","4","5"])");
}

// A tool round trip through another protocol: an Anthropic caller's conversation (its own
// toolu_ ids) goes to Gemini, whose calls carry no ids; results are paired back by name.
TEST(RoundTrip, ToolIdsThroughAnthropic) {
  const char* anthropic_body = R"({
    "model": "m", "max_tokens": 100,
    "messages": [
      {"role": "user", "content": "weather?"},
      {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_B", "name": "get_time", "input": {}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_B", "content": "noon"},
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": "sunny", "is_error": false}]}
    ],
    "tools": [{"name": "get_weather", "input_schema": {"type": "object"}},
              {"name": "get_time", "input_schema": {"type": "object"}}]})";
  auto ir = anthropic::decode_request(anthropic_body);
  ASSERT_TRUE(ir.has_value()) << ir.error().message();
  const std::string body = encode_ok(*ir);
  const json::value v = json::parse(body);
  const json::array& results = v.at("contents").as_array()[2].at("parts").as_array();
  EXPECT_EQ(results[0].at("functionResponse").at("name"), "get_time");
  EXPECT_EQ(results[1].at("functionResponse").at("name"), "get_weather");
  EXPECT_FALSE(v.at("tools")
                   .as_array()[0]
                   .at("functionDeclarations")
                   .as_array()[0]
                   .as_object()
                   .contains("parametersJsonSchema"))
      << "{\"type\":\"object\"}: a function without parameters";

  // And back: a Gemini caller's history (no ids) to an Anthropic upstream pairs each
  // tool_result with the tool_use it answers.
  const ir::Request gemini = decode_ok(body);
  auto anthropic_again = anthropic::encode_request(gemini, "claude", false);
  ASSERT_TRUE(anthropic_again.has_value()) << anthropic_again.error().message();
  const json::value a = json::parse(*anthropic_again);
  const json::array& uses = a.at("messages").as_array()[1].at("content").as_array();
  const json::array& res = a.at("messages").as_array()[2].at("content").as_array();
  EXPECT_EQ(res[0].at("tool_use_id"), uses[1].at("id")) << "get_time";
  EXPECT_EQ(res[1].at("tool_use_id"), uses[0].at("id")) << "get_weather";
}

TEST(RoundTrip, GivenIdsPairTheirResponses) {
  const ir::Request r = decode_ok(R"({"contents":[
    {"role":"model","parts":[{"functionCall":{"name":"f","args":{},"id":"x1"}},
                             {"functionCall":{"name":"f","args":{},"id":"x2"}}]},
    {"role":"user","parts":[{"functionResponse":{"name":"f","id":"x2","response":{}}},
                            {"functionResponse":{"name":"f","response":{}}}]}]})");
  EXPECT_EQ(r.messages[0].content[0].id, "x1");
  EXPECT_EQ(r.messages[1].content[0].id, "x2");
  EXPECT_EQ(r.messages[1].content[1].id, "x1") << "the call x2 is answered already";
}

TEST(EncodeRequest, WhatOtherProtocolsSend) {
  ir::Request r;
  r.system.push_back(ir::ContentPart::make_text("sys"));
  ir::Message early_system;
  early_system.role = ir::Role::kSystem;
  early_system.content.push_back(ir::ContentPart::make_text("more sys"));
  r.messages.push_back(early_system);
  ir::Message user;
  user.content.push_back(ir::ContentPart::make_text("hi"));
  user.content.push_back(ir::ContentPart::make_text(""));
  r.messages.push_back(user);
  ir::Message late_system = early_system;
  late_system.content[0].text = "be nice";
  r.messages.push_back(late_system);
  ir::Message empty;
  empty.role = ir::Role::kAssistant;
  r.messages.push_back(empty);
  r.tool_choice.mode = ir::ToolChoiceMode::kRequired;
  r.reasoning.enabled = true;
  r.reasoning.effort = "medium";
  r.user = "end-user-1";
  ir::Tool t;
  t.name = "f";
  t.parameters =
      R"({"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false})";
  r.tools.push_back(t);
  EncodeStats stats;
  const std::string body = encode_ok(r, &stats);
  EXPECT_EQ(body,
            R"({"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"user","parts":[)"
            R"({"text":"System: be nice"}]}],"systemInstruction":{"parts":[{"text":"sys"},)"
            R"({"text":"more sys"}]},"tools":[{"functionDeclarations":[{"name":"f",)"
            R"("parametersJsonSchema":{"type":"object","properties":{"a":{"type":"integer"}},)"
            R"("additionalProperties":false}}]}],"toolConfig":{"functionCallingConfig":)"
            R"({"mode":"ANY"}},"generationConfig":{"thinkingConfig":{"includeThoughts":true,)"
            R"("thinkingBudget":8192}}})");
  EXPECT_EQ(stats.dropped_empty, 2u) << "the empty text and the empty model turn";
}

TEST(EncodeRequest, Errors) {
  ir::Request orphan;
  ir::Message m;
  ir::ContentPart result;
  result.kind = ir::PartKind::kToolResult;
  result.id = "nope";
  result.parts.push_back(ir::ContentPart::make_text("x"));
  m.content.push_back(result);
  orphan.messages.push_back(m);
  auto r = encode_request(orphan);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("answers no tool call"), std::string::npos);

  ir::Request bad_args;
  ir::Message a;
  a.role = ir::Role::kAssistant;
  ir::ContentPart call;
  call.kind = ir::PartKind::kToolCall;
  call.id = "c";
  call.name = "f";
  call.arguments = "[1]";
  a.content.push_back(call);
  bad_args.messages.push_back(a);
  EXPECT_FALSE(encode_request(bad_args).has_value());

  EXPECT_FALSE(encode_request(ir::Request{}).has_value()) << "no content";

  ir::Request effort;
  effort.messages.push_back(m);
  effort.messages[0].content[0] = ir::ContentPart::make_text("x");
  effort.reasoning.enabled = true;
  effort.reasoning.effort = "maximal";
  auto e = encode_request(effort);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().param(), "reasoning_effort");
}

// Gemini pairs same-name responses with their calls by order: results a caller gave in another
// order are put in the order of their calls.
TEST(RoundTrip, SameNameResultsFollowTheOrderOfTheirCalls) {
  auto ir = anthropic::decode_request(R"({"model":"m","max_tokens":9,"messages":[
    {"role":"user","content":"both"},
    {"role":"assistant","content":[
      {"type":"tool_use","id":"toolu_A","name":"get","input":{"city":"Paris"}},
      {"type":"tool_use","id":"toolu_B","name":"get","input":{"city":"Rome"}}]},
    {"role":"user","content":[
      {"type":"tool_result","tool_use_id":"toolu_B","content":"rome: rain"},
      {"type":"text","text":"thanks"},
      {"type":"tool_result","tool_use_id":"toolu_A","content":"paris: sun"}]}]})");
  ASSERT_TRUE(ir.has_value()) << ir.error().message();
  const json::value v = json::parse(encode_ok(*ir));
  const json::array& parts = v.at("contents").as_array()[2].at("parts").as_array();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].at("functionResponse").at("response").at("output"), "paris: sun");
  EXPECT_EQ(parts[1].at("text"), "thanks");
  EXPECT_EQ(parts[2].at("functionResponse").at("response").at("output"), "rome: rain");
}

TEST(RoundTrip, ResponsesMayAnswerCallsOfAnEarlierTurn) {
  const ir::Request r = decode_ok(R"({"contents":[
    {"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},
    {"role":"model","parts":[{"functionCall":{"name":"g","args":{}}}]},
    {"role":"user","parts":[{"functionResponse":{"name":"g","response":{}}},
                            {"functionResponse":{"name":"f","response":{}}}]}]})");
  EXPECT_EQ(r.messages[2].content[0].id, "call_1_0");
  EXPECT_EQ(r.messages[2].content[1].id, "call_0_0");
  auto orphan = decode_request(R"({"contents":[
    {"role":"user","parts":[{"functionResponse":{"name":"g","response":{}}}]},
    {"role":"model","parts":[{"functionCall":{"name":"g","args":{}}}]}]})");
  ASSERT_FALSE(orphan.has_value()) << "a response before its call answers nothing";
  EXPECT_EQ(orphan.error().param(), "contents[0].parts[0].functionResponse");
}

// Found by gemini_request_fuzz: two answers to one call (two OpenAI tool messages with the same
// tool_call_id) must decode again, and keep their order (order cannot say which call a
// repeated answer is for, so results that repeat one are never moved).
TEST(RoundTrip, RepeatedAnswersDecodeAndKeepTheirOrder) {
  const std::string body = R"({"contents":[
    {"role":"model","parts":[{"functionCall":{"name":"f","args":{}}},{"functionCall":{"name":"f","args":{"n":2}}}]},
    {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"a"}}},
                            {"functionResponse":{"name":"f","response":{"output":"b"}}}]},
    {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"c"}}},
                            {"functionResponse":{"name":"f","response":{"output":"d"}}}]}]})";
  const ir::Request first = decode_ok(body);
  EXPECT_EQ(first.messages[2].content[0].id, "call_0_0") << "all answered: paired again in order";
  EXPECT_EQ(first.messages[2].content[1].id, "call_0_1");
  const std::string encoded = encode_ok(first);
  const ir::Request second = decode_ok(encoded);
  expect_same(first, second);
  EXPECT_EQ(encode_ok(second), encoded) << "a fixed point";
}

TEST(EncodeRequest, ImagesNeedAnImageType) {
  ir::Request r;
  ir::Message m;
  ir::ContentPart image;
  image.kind = ir::PartKind::kImage;
  image.source = "AAAA";
  m.content.push_back(image);
  r.messages.push_back(m);
  auto untyped = encode_request(r);
  ASSERT_FALSE(untyped.has_value()) << "inline data needs its MIME type";
  EXPECT_EQ(untyped.error().kind(), ErrorKind::kBadRequest);
  r.messages[0].content[0].media_type = "application/pdf";
  EXPECT_FALSE(encode_request(r).has_value());
  r.messages[0].content[0].media_type = "image/webp";
  EXPECT_TRUE(encode_request(r).has_value());
  r.messages[0].content[0].image_is_url = true;
  r.messages[0].content[0].media_type.clear();
  r.messages[0].content[0].source = "https://example.com/x.PNG?size=2";
  const std::string body = encode_ok(r);
  EXPECT_NE(body.find(R"({"fileData":{"mimeType":"image/png","fileUri":)"), std::string::npos)
      << body;
}

// Structured output: responseMimeType with Gemini's Schema or a JSON Schema.
TEST(DecodeRequest, ResponseSchemaBecomesJsonSchema) {
  const ir::Request r = decode_ok(R"({"contents":[{"parts":[{"text":"x"}]}],
    "generationConfig":{"responseMimeType":"application/json","responseSchema":{
      "type":"OBJECT","propertyOrdering":["name","tags"],
      "properties":{"name":{"type":"STRING","nullable":true},
                    "type":{"type":"STRING","enum":["A","B"]},
                    "nullable":{"type":"BOOLEAN"},
                    "tags":{"type":"ARRAY","items":{"type":"STRING"}},
                    "either":{"anyOf":[{"type":"INTEGER"}],"nullable":true}},
      "required":["name"]}}})");
  EXPECT_EQ(r.response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(json::parse(r.response_format.schema), json::parse(R"({"type":"object",
      "properties":{"name":{"type":["string","null"]},
                    "type":{"type":"string","enum":["A","B"]},
                    "nullable":{"type":"boolean"},
                    "tags":{"type":"array","items":{"type":"string"}},
                    "either":{"anyOf":[{"type":"integer"},{"type":"null"}]}},
      "required":["name"]})"));

  const ir::Request js = decode_ok(R"({"contents":[{"parts":[{"text":"x"}]}],
    "generation_config":{"response_mime_type":"application/json",
                         "response_json_schema":{"type":"object","propertyOrdering":["a"]}}})");
  EXPECT_EQ(js.response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(js.response_format.schema, R"({"type":"object","propertyOrdering":["a"]})")
      << "a JSON Schema is taken as it is";

  const ir::Request any = decode_ok(
      R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json"}})");
  EXPECT_EQ(any.response_format.kind, ir::ResponseFormat::Kind::kJsonObject);
  const ir::Request text = decode_ok(
      R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/plain"}})");
  EXPECT_EQ(text.response_format.kind, ir::ResponseFormat::Kind::kText);
}

TEST(EncodeRequest, ResponseFormatAsMimeTypeAndJsonSchema) {
  ir::Request r = decode_ok(R"({"contents":[{"parts":[{"text":"x"}]}]})");
  r.response_format.kind = ir::ResponseFormat::Kind::kJsonSchema;
  r.response_format.name = "person";
  r.response_format.schema = R"({"type":"object","properties":{"a":{"type":["string","null"]}}})";
  json::value body = json::parse(encode_ok(r));
  EXPECT_EQ(json::serialize(body.at("generationConfig")),
            R"({"responseMimeType":"application/json","responseJsonSchema":)"
            R"({"type":"object","properties":{"a":{"type":["string","null"]}}}})");
  const ir::Request back = decode_ok(json::serialize(body));
  EXPECT_EQ(back.response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(back.response_format.schema, r.response_format.schema);

  r.response_format.kind = ir::ResponseFormat::Kind::kJsonObject;
  body = json::parse(encode_ok(r));
  EXPECT_EQ(json::serialize(body.at("generationConfig")),
            R"({"responseMimeType":"application/json"})");
  r.response_format.kind = ir::ResponseFormat::Kind::kText;
  EXPECT_FALSE(json::parse(encode_ok(r)).as_object().contains("generationConfig"));
}

TEST(DecodeRequest, StrictRejectsWhatWouldBeIgnored) {
  DecodeOptions strict;
  strict.strict = true;
  auto top = decode_request(R"({"contents":[{"parts":[{"text":"x"}]}],"safetySettings":[]})",
                            nullptr, strict);
  ASSERT_FALSE(top.has_value());
  EXPECT_EQ(top.error().param(), "safety_settings");
  EXPECT_EQ(top.error().message(),
            "* GenerateContentRequest.safety_settings: 'safetySettings' cannot be translated for "
            "this model's provider");
  auto nested = decode_request(
      R"({"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"presencePenalty":0.5}})",
      nullptr, strict);
  ASSERT_FALSE(nested.has_value());
  EXPECT_EQ(nested.error().param(), "generation_config.presence_penalty");
  // Null values ask for nothing; mapped fields are fine.
  DecodeStats stats;
  auto ok = decode_request(
      R"({"contents":[{"parts":[{"text":"x"}]}],"safetySettings":null,"generationConfig":{"seed":null,"temperature":1}})",
      &stats, strict);
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(stats.ignored_fields, 0u);
}

}  // namespace
}  // namespace sluice::protocol::gemini
