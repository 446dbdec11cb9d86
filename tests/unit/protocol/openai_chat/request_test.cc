#include <cstdint>
#include <string>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"

namespace sluice::protocol::openai_chat {
namespace {
namespace json = boost::json;
using ir::ContentPart;
using ir::PartKind;
using ir::Role;

json::object encode_json(const ir::Request& req, bool stream = false, EncodeOptions opts = {}) {
  const std::string body = encode_request(req, "upstream-model", stream, opts);
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  EXPECT_FALSE(ec) << body;
  EXPECT_TRUE(v.is_object()) << body;
  return v.is_object() ? v.get_object() : json::object();
}

ContentPart text(std::string t) { return ContentPart::make_text(std::move(t)); }

ContentPart tool_call(std::string id, std::string name, std::string args) {
  ContentPart p;
  p.kind = PartKind::kToolCall;
  p.id = std::move(id);
  p.name = std::move(name);
  p.arguments = std::move(args);
  return p;
}

ContentPart tool_result(std::string id, std::vector<ContentPart> parts, bool is_error = false) {
  ContentPart p;
  p.kind = PartKind::kToolResult;
  p.id = std::move(id);
  p.parts = std::move(parts);
  p.is_error = is_error;
  return p;
}

ContentPart base64_image(std::string media_type, std::string data) {
  ContentPart p;
  p.kind = PartKind::kImage;
  p.media_type = std::move(media_type);
  p.source = std::move(data);
  return p;
}

ContentPart url_image(std::string url, std::string detail = "") {
  ContentPart p;
  p.kind = PartKind::kImage;
  p.source = std::move(url);
  p.image_is_url = true;
  p.detail = std::move(detail);
  return p;
}

ir::Message message(Role role, std::vector<ContentPart> parts) {
  ir::Message m;
  m.role = role;
  m.content = std::move(parts);
  return m;
}

ir::Request base_request() {
  ir::Request r;
  r.model = "claude-sonnet-4-5";
  r.messages.push_back(message(Role::kUser, {text("hello")}));
  return r;
}

const json::array& messages_of(const json::object& body) { return body.at("messages").as_array(); }

TEST(OpenAiIrEncodeRequest, ModelAndSimpleUserText) {
  json::object body = encode_json(base_request());
  EXPECT_EQ(body.at("model"), "upstream-model");
  ASSERT_EQ(messages_of(body).size(), 1u);
  const json::object& m = messages_of(body)[0].as_object();
  EXPECT_EQ(m.at("role"), "user");
  EXPECT_EQ(m.at("content"), "hello");  // text-only -> plain string
  EXPECT_FALSE(body.contains("stream"));
  EXPECT_FALSE(body.contains("stream_options"));
  EXPECT_FALSE(body.contains("tools"));
  EXPECT_FALSE(body.contains("tool_choice"));
  EXPECT_FALSE(body.contains("max_tokens"));
}

TEST(OpenAiIrEncodeRequest, SystemPartsBecomeOneLeadingSystemMessage) {
  ir::Request one = base_request();
  one.system.push_back(text("be brief"));
  json::object body = encode_json(one);
  ASSERT_EQ(messages_of(body).size(), 2u);
  EXPECT_EQ(messages_of(body)[0].at("role"), "system");
  EXPECT_EQ(messages_of(body)[0].at("content"), "be brief");

  ir::Request two = base_request();
  two.system = {text("part one"), text("part two")};
  body = encode_json(two);
  ASSERT_EQ(messages_of(body).size(), 2u);
  const json::array& content = messages_of(body)[0].at("content").as_array();
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[0].at("type"), "text");
  EXPECT_EQ(content[0].at("text"), "part one");
  EXPECT_EQ(content[1].at("text"), "part two");
  EXPECT_EQ(messages_of(body)[1].at("role"), "user");
}

TEST(OpenAiIrEncodeRequest, ImagesBecomeImageUrlPartsWithDataUrls) {
  ir::Request r;
  r.messages.push_back(
      message(Role::kUser, {text("what is this?"), base64_image("image/png", "iVBORw0KGgo="),
                            url_image("https://example.com/cat.jpg", "low")}));
  json::object body = encode_json(r);
  const json::array& content = messages_of(body)[0].at("content").as_array();
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(content[0].at("type"), "text");
  EXPECT_EQ(content[0].at("text"), "what is this?");
  EXPECT_EQ(content[1].at("type"), "image_url");
  EXPECT_EQ(content[1].at("image_url").at("url"), "data:image/png;base64,iVBORw0KGgo=");
  EXPECT_FALSE(content[1].at("image_url").as_object().contains("detail"));
  EXPECT_EQ(content[2].at("image_url").at("url"), "https://example.com/cat.jpg");
  EXPECT_EQ(content[2].at("image_url").at("detail"), "low");
}

TEST(OpenAiIrEncodeRequest, AssistantToolCallsAndDroppedReasoning) {
  ir::Request r = base_request();
  ContentPart thinking;
  thinking.kind = PartKind::kReasoning;
  thinking.text = "secret thoughts";
  thinking.signature = "sig";
  r.messages.push_back(message(
      Role::kAssistant,
      {thinking, text("Let me check."), tool_call("call_1", "get_weather", R"({"city":"Paris"})"),
       tool_call("call_2", "get_time", "")}));
  json::object body = encode_json(r);
  ASSERT_EQ(messages_of(body).size(), 2u);
  const json::object& a = messages_of(body)[1].as_object();
  EXPECT_EQ(a.at("role"), "assistant");
  EXPECT_EQ(a.at("content"), "Let me check.");
  const json::array& calls = a.at("tool_calls").as_array();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].at("id"), "call_1");
  EXPECT_EQ(calls[0].at("type"), "function");
  EXPECT_EQ(calls[0].at("function").at("name"), "get_weather");
  // arguments travel as a JSON string holding the JSON text
  EXPECT_EQ(calls[0].at("function").at("arguments"), R"({"city":"Paris"})");
  EXPECT_EQ(calls[1].at("function").at("arguments"), "{}");
  EXPECT_EQ(json::serialize(body).find("secret thoughts"), std::string::npos);

  ir::Request only_calls = base_request();
  only_calls.messages.push_back(message(Role::kAssistant, {tool_call("c", "f", "{}")}));
  body = encode_json(only_calls);
  EXPECT_TRUE(messages_of(body)[1].at("content").is_null());
}

TEST(OpenAiIrEncodeRequest, ToolResultsBecomeToolMessagesBeforeTheRestOfTheUserTurn) {
  ir::Request r = base_request();
  r.messages.push_back(
      message(Role::kAssistant, {tool_call("call_a", "f", "{}"), tool_call("call_b", "g", "{}")}));
  r.messages.push_back(message(
      Role::kUser, {text("here you go"), tool_result("call_a", {text("sunny")}),
                    tool_result("call_b", {text("boom"), base64_image("image/png", "AAAA")}, true),
                    text("and thanks")}));
  json::object body = encode_json(r);
  const json::array& msgs = messages_of(body);
  ASSERT_EQ(msgs.size(), 5u);
  EXPECT_EQ(msgs[2].at("role"), "tool");
  EXPECT_EQ(msgs[2].at("tool_call_id"), "call_a");
  EXPECT_EQ(msgs[2].at("content"), "sunny");
  EXPECT_EQ(msgs[3].at("role"), "tool");
  EXPECT_EQ(msgs[3].at("tool_call_id"), "call_b");
  EXPECT_EQ(msgs[3].at("content"), "boom");  // error text kept, image not expressible
  EXPECT_EQ(msgs[4].at("role"), "user");
  const json::array& rest = msgs[4].at("content").as_array();
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].at("text"), "here you go");
  EXPECT_EQ(rest[1].at("text"), "and thanks");

  // A user turn of tool results only produces no user message.
  ir::Request only = base_request();
  only.messages.push_back(message(Role::kAssistant, {tool_call("x", "f", "{}")}));
  only.messages.push_back(message(Role::kUser, {tool_result("x", {})}));
  body = encode_json(only);
  ASSERT_EQ(messages_of(body).size(), 3u);
  EXPECT_EQ(messages_of(body)[2].at("role"), "tool");
  EXPECT_EQ(messages_of(body)[2].at("content"), "");
}

TEST(OpenAiIrEncodeRequest, ToolsAndToolChoice) {
  ir::Request r = base_request();
  r.tools.push_back({"get_weather", "Weather for a city",
                     R"({"type":"object","properties":{"city":{"type":"string"}}})", true});
  r.tools.push_back({"noop", "", "", false});
  r.tool_choice.mode = ir::ToolChoiceMode::kNamed;
  r.tool_choice.name = "get_weather";
  r.tool_choice.disable_parallel_tool_use = true;
  json::object body = encode_json(r);
  const json::array& tools = body.at("tools").as_array();
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0].at("type"), "function");
  EXPECT_EQ(tools[0].at("function").at("name"), "get_weather");
  EXPECT_EQ(tools[0].at("function").at("description"), "Weather for a city");
  EXPECT_EQ(tools[0].at("function").at("parameters").at("properties").at("city").at("type"),
            "string");
  EXPECT_FALSE(tools[1].at("function").as_object().contains("description"));
  EXPECT_EQ(tools[1].at("function").at("parameters").at("type"), "object");
  EXPECT_EQ(body.at("tool_choice").at("type"), "function");
  EXPECT_EQ(body.at("tool_choice").at("function").at("name"), "get_weather");
  EXPECT_EQ(body.at("parallel_tool_calls"), false);

  const std::pair<ir::ToolChoiceMode, const char*> modes[] = {
      {ir::ToolChoiceMode::kAuto, "auto"},
      {ir::ToolChoiceMode::kNone, "none"},
      {ir::ToolChoiceMode::kRequired, "required"}};
  for (auto [mode, wire] : modes) {
    r.tool_choice.mode = mode;
    EXPECT_EQ(encode_json(r).at("tool_choice"), wire);
  }

  ir::Request no_tools = base_request();
  no_tools.tool_choice.disable_parallel_tool_use = true;
  EXPECT_FALSE(encode_json(no_tools).contains("parallel_tool_calls"));
}

TEST(OpenAiIrEncodeRequest, SamplingParametersStreamAndReasoning) {
  ir::Request r = base_request();
  r.max_tokens = 1024;
  r.temperature = 0.25;
  r.top_p = 0.9;
  r.top_k = 40;
  r.stop = {"END", "\n\n"};
  r.user = "user-42";
  r.reasoning.enabled = true;
  r.reasoning.effort = "high";
  r.reasoning.budget_tokens = 2048;
  json::object body = encode_json(r, true);
  EXPECT_EQ(body.at("max_tokens"), 1024);
  EXPECT_FALSE(body.contains("max_completion_tokens"));
  EXPECT_DOUBLE_EQ(body.at("temperature").as_double(), 0.25);
  EXPECT_DOUBLE_EQ(body.at("top_p").as_double(), 0.9);
  EXPECT_FALSE(body.contains("top_k"));
  ASSERT_EQ(body.at("stop").as_array().size(), 2u);
  EXPECT_EQ(body.at("stop").as_array()[1], "\n\n");
  EXPECT_EQ(body.at("user"), "user-42");
  EXPECT_EQ(body.at("reasoning_effort"), "high");
  EXPECT_EQ(body.at("stream"), true);
  EXPECT_EQ(body.at("stream_options").at("include_usage"), true);

  EncodeOptions opts;
  opts.use_max_completion_tokens = true;
  body = encode_json(r, false, opts);
  EXPECT_EQ(body.at("max_completion_tokens"), 1024);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_FALSE(body.contains("stream"));
}

TEST(OpenAiIrEncodeRequest, AtMostFourStopSequences) {
  ir::Request r = base_request();
  r.stop = {"a", "b", "c", "d", "e", "f"};
  json::object body = encode_json(r);
  ASSERT_EQ(body.at("stop").as_array().size(), 4u);
  EXPECT_EQ(body.at("stop").as_array()[3], "d");
}

TEST(OpenAiIrEncodeRequest, ABudgetWithoutAnEffortBecomesTheEffortItBuys) {
  ir::Request r = base_request();
  r.reasoning.enabled = true;
  const std::pair<std::uint32_t, const char*> cases[] = {
      {1024, "low"}, {2048, "low"}, {2049, "medium"}, {8192, "medium"}, {31999, "high"}};
  for (const auto& [budget, effort] : cases) {
    r.reasoning.budget_tokens = budget;
    EXPECT_EQ(encode_json(r).at("reasoning_effort"), effort) << budget;
  }
  r.reasoning.enabled = false;  // a budget on disabled thinking asks for nothing
  EXPECT_FALSE(encode_json(r).contains("reasoning_effort"));
}

TEST(OpenAiIrEncodeRequest, EscapesStrings) {
  ir::Request r;
  const std::string nasty =
      "quote \" backslash \\ newline \n tab \t ctrl \x01 utf8 \xc3\xa9 \xf0\x9f\x98\x80";
  r.system.push_back(text(nasty));
  r.messages.push_back(message(Role::kUser, {text(nasty)}));
  r.stop = {nasty};
  json::object body = encode_json(r);
  EXPECT_EQ(messages_of(body)[0].at("content").as_string(), nasty);
  EXPECT_EQ(messages_of(body)[1].at("content").as_string(), nasty);
  EXPECT_EQ(body.at("stop").as_array()[0].as_string(), nasty);
}

// --- decode_request and the round trip ---------------------------------------------------

void expect_parts_eq(const std::vector<ContentPart>& a, const std::vector<ContentPart>& b,
                     const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    EXPECT_EQ(a[i].kind, b[i].kind) << at;
    EXPECT_EQ(a[i].text, b[i].text) << at;
    EXPECT_EQ(a[i].id, b[i].id) << at;
    EXPECT_EQ(a[i].name, b[i].name) << at;
    EXPECT_EQ(a[i].arguments, b[i].arguments) << at;
    EXPECT_EQ(a[i].source, b[i].source) << at;
    EXPECT_EQ(a[i].media_type, b[i].media_type) << at;
    EXPECT_EQ(a[i].image_is_url, b[i].image_is_url) << at;
    EXPECT_EQ(a[i].detail, b[i].detail) << at;
    expect_parts_eq(a[i].parts, b[i].parts, at + ".parts");
  }
}

void expect_request_eq(const ir::Request& a, const ir::Request& b) {
  EXPECT_EQ(a.model, b.model);
  expect_parts_eq(a.system, b.system, "system");
  ASSERT_EQ(a.messages.size(), b.messages.size());
  for (std::size_t i = 0; i < a.messages.size(); ++i) {
    EXPECT_EQ(a.messages[i].role, b.messages[i].role) << i;
    EXPECT_EQ(a.messages[i].name, b.messages[i].name) << i;
    expect_parts_eq(a.messages[i].content, b.messages[i].content,
                    "messages[" + std::to_string(i) + "]");
  }
  ASSERT_EQ(a.tools.size(), b.tools.size());
  for (std::size_t i = 0; i < a.tools.size(); ++i) {
    EXPECT_EQ(a.tools[i].name, b.tools[i].name);
    EXPECT_EQ(a.tools[i].description, b.tools[i].description);
    EXPECT_EQ(a.tools[i].parameters, b.tools[i].parameters);
  }
  EXPECT_EQ(a.tool_choice.mode, b.tool_choice.mode);
  EXPECT_EQ(a.tool_choice.name, b.tool_choice.name);
  EXPECT_EQ(a.tool_choice.disable_parallel_tool_use, b.tool_choice.disable_parallel_tool_use);
  EXPECT_EQ(a.max_tokens, b.max_tokens);
  EXPECT_EQ(a.temperature, b.temperature);
  EXPECT_EQ(a.top_p, b.top_p);
  EXPECT_EQ(a.stop, b.stop);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.reasoning.enabled, b.reasoning.enabled);
  EXPECT_EQ(a.reasoning.effort, b.reasoning.effort);
}

TEST(OpenAiIrDecodeRequest, RoundTripsTheSupportedSubset) {
  ir::Request r;
  r.model = "upstream-model";
  r.system = {text("You are terse."), text("Answer in French.")};
  ir::Message named = message(Role::kUser, {text("Weather in Paris and Rome? \"quoted\"")});
  named.name = "alice";
  r.messages.push_back(named);
  r.messages.push_back(
      message(Role::kAssistant,
              {text("Checking."), tool_call("call_1", "get_weather", R"({"city":"Paris"})"),
               tool_call("call_2", "get_weather", R"({"city":"Rome"})")}));
  r.messages.push_back(message(
      Role::kUser, {tool_result("call_1", {text("18C")}), tool_result("call_2", {text("21C")}),
                    text("And this picture?"), base64_image("image/jpeg", "/9j/4AAQ"),
                    url_image("https://example.com/x.png", "high")}));
  r.messages.push_back(message(Role::kAssistant, {text("A cat.")}));
  r.messages.push_back(message(Role::kSystem, {text("late system note")}));
  r.messages.push_back(message(Role::kUser, {text("thanks")}));
  r.tools.push_back(
      {"get_weather", "Current weather",
       R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})", false});
  r.tool_choice.mode = ir::ToolChoiceMode::kRequired;
  r.tool_choice.disable_parallel_tool_use = true;
  r.max_tokens = 500;
  r.temperature = 0.5;
  r.top_p = 0.75;
  r.stop = {"STOP"};
  r.stream = true;
  r.user = "u-1";
  r.reasoning.enabled = true;
  r.reasoning.effort = "low";

  const std::string body = encode_request(r, "upstream-model", true);
  Result<ir::Request> back = decode_request(body);
  ASSERT_TRUE(back.has_value()) << back.error().message() << "\n" << body;
  expect_request_eq(r, *back);

  // And the encoding of the decoded request is byte-identical.
  EXPECT_EQ(encode_request(*back, "upstream-model", true), body);
}

TEST(OpenAiIrDecodeRequest, ReadsOpenAiShapesEncodeDoesNotProduce) {
  Result<ir::Request> r = decode_request(R"({
    "model": "gpt-4o",
    "messages": [
      {"role": "developer", "content": "dev prompt"},
      {"role": "user", "content": [{"type": "text", "text": "hi"}]},
      {"role": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "r1"}]}
    ],
    "stop": "END",
    "max_tokens": 10,
    "max_completion_tokens": 20,
    "tool_choice": "auto",
    "parallel_tool_calls": true,
    "n": 1,
    "seed": 7
  })");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->system.size(), 1u);
  EXPECT_EQ(r->system[0].text, "dev prompt");
  ASSERT_EQ(r->messages.size(), 2u);
  ASSERT_EQ(r->messages[1].content.size(), 1u);
  EXPECT_EQ(r->messages[1].content[0].kind, PartKind::kToolResult);
  EXPECT_EQ(r->messages[1].content[0].parts[0].text, "r1");
  EXPECT_EQ(r->stop, std::vector<std::string>{"END"});
  EXPECT_EQ(r->max_tokens, 20u);
  EXPECT_EQ(r->tool_choice.mode, ir::ToolChoiceMode::kAuto);
  EXPECT_FALSE(r->tool_choice.disable_parallel_tool_use);
  EXPECT_FALSE(r->stream);
}

TEST(OpenAiIrDecodeRequest, RejectsWhatTheIrCannotHold) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {"not json", ""},
      {"[]", ""},
      {R"({"messages":[{"role":"user","content":"x"}]})", "model"},
      {R"({"model":"m"})", "messages"},
      {R"({"model":"m","messages":[]})", "messages"},
      {R"({"model":"m","messages":[{"role":"wizard","content":"x"}]})", "messages[0]"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]})",
       "messages[0]"},
      {R"({"model":"m","messages":[{"role":"tool","content":"x"}]})", "messages[0]"},
      {R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"x"}]}]})",
       "messages[0]"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":-1})", "max_tokens"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"maybe"})",
       "tool_choice"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"})", "stream"},
      // Numbers no double holds: Boost.JSON reads them as infinity and NaN, which would reach
      // the upstream as null or as "NaN", not JSON (found by the request fuzzers).
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1e999})", ""},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"top_p":-1e999})", ""},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"metadata":{"a":[0e99999]}})",
       ""},
      // Only system messages without content: encode_request would send "messages":[] (found
      // by tests/fuzz/openai_ir_request_fuzz).
      {R"({"model":"m","messages":[{"role":"developer"}]})", "messages"},
      {R"({"model":"m","messages":[{"role":"system","content":null},{"role":"system","content":[]}]})",
       "messages"},
      // What no provider but OpenAI can honour is refused rather than dropped.
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"n":2})", "n"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":true})", "logprobs"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"top_logprobs":3})",
       "top_logprobs"},
      // Malformed response_format, with OpenAI's param paths.
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":"json"})",
       "response_format"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{}})",
       "response_format.type"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}})",
       "response_format.type"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}})",
       "response_format.json_schema"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}})",
       "response_format.json_schema.name"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":"{}"}}})",
       "response_format.json_schema.schema"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","strict":1}}})",
       "response_format.json_schema.strict"},
  };
  for (const Case& c : cases) {
    Result<ir::Request> r = decode_request(c.body);
    ASSERT_FALSE(r.has_value()) << c.body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest) << c.body;
    EXPECT_EQ(r.error().param(), c.param) << c.body;
  }
  std::string deep = R"({"model":"m","messages":[{"role":"user","content":"x"}],"x":)";
  deep += std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_FALSE(decode_request(deep).has_value());
}

TEST(OpenAiIrDecodeRequest, ResponseFormatBothWays) {
  const std::string base = R"({"model":"m","messages":[{"role":"user","content":"x"}],)";
  auto r = decode_request(
      base +
      R"("response_format":{"type":"json_schema","json_schema":{"name":"person","description":"d",)"
      R"("strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}})");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const ir::ResponseFormat& f = r->response_format;
  EXPECT_EQ(f.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(f.name, "person");
  EXPECT_EQ(f.description, "d");
  EXPECT_EQ(f.strict, true);
  EXPECT_EQ(f.schema, R"({"type":"object","properties":{"a":{"type":"string"}}})");
  json::object body = encode_json(*r);
  EXPECT_EQ(json::serialize(body.at("response_format")),
            R"({"type":"json_schema","json_schema":{"name":"person","description":"d",)"
            R"("schema":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true}})");

  // Protocols without a name (Gemini, Anthropic) get one; strict only when given.
  ir::Request unnamed = *r;
  unnamed.response_format.name.clear();
  unnamed.response_format.description.clear();
  unnamed.response_format.strict.reset();
  EXPECT_EQ(json::serialize(encode_json(unnamed).at("response_format")),
            R"({"type":"json_schema","json_schema":{"name":"response",)"
            R"("schema":{"type":"object","properties":{"a":{"type":"string"}}}}})");

  auto object = decode_request(base + R"("response_format":{"type":"json_object"}})");
  ASSERT_TRUE(object.has_value());
  EXPECT_EQ(object->response_format.kind, ir::ResponseFormat::Kind::kJsonObject);
  EXPECT_EQ(json::serialize(encode_json(*object).at("response_format")),
            R"({"type":"json_object"})");
  // A json_schema without a schema constrains the answer to JSON only.
  auto schemaless = decode_request(
      base + R"("response_format":{"type":"json_schema","json_schema":{"name":"n"}}})");
  ASSERT_TRUE(schemaless.has_value());
  EXPECT_EQ(schemaless->response_format.kind, ir::ResponseFormat::Kind::kJsonObject);
  auto text = decode_request(base + R"("response_format":{"type":"text"}})");
  ASSERT_TRUE(text.has_value());
  EXPECT_FALSE(encode_json(*text).contains("response_format"));
}

TEST(OpenAiIrDecodeRequest, CountsWhatItIgnores) {
  DecodeStats stats;
  auto r = decode_request(
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"seed":7,"logit_bias":{"1":2},)"
      R"("frequency_penalty":0.5,"metadata":{"a":"b"},"some_new_field":1,)"
      R"("n":1,"logprobs":false,"top_logprobs":0,"presence_penalty":0,"store":false,)"
      R"("service_tier":"auto","stream_options":{"include_usage":true},"user":null,)"
      R"("safety_identifier":"s-1"})",
      &stats);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(stats.ignored_fields, 5u)
      << "seed, logit_bias, frequency_penalty, metadata, some_new_field; the rest ask for nothing";
  EXPECT_EQ(r->user, "s-1");
}

TEST(OpenAiIrDecodeRequest, StrictRejectsWhatWouldBeIgnored) {
  DecodeOptions strict;
  strict.strict = true;
  auto r = decode_request(R"({"model":"m","messages":[{"role":"user","content":"x"}],"seed":7})",
                          nullptr, strict);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().param(), "seed");
  EXPECT_EQ(r.error().code(), "unsupported_parameter");
  EXPECT_EQ(r.error().message().rfind("Unsupported parameter: 'seed'", 0), 0u)
      << r.error().message();
  auto ok = decode_request(
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"n":1,"stream_options":{}})",
      nullptr, strict);
  EXPECT_TRUE(ok.has_value());
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
