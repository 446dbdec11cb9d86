#include "protocol/anthropic/request_encoder.h"

#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "protocol/anthropic/conventions.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"

namespace sluice::protocol::anthropic {
namespace {
namespace json = boost::json;
using ir::PartKind;

// --- helpers -------------------------------------------------------------------------------

// Every field of the IR, one line each: comparing two dumps compares two requests, and a
// mismatch shows where.
void dump_part(const ir::ContentPart& p, const std::string& indent, std::string& out) {
  out += indent + "part kind=" + std::to_string(static_cast<int>(p.kind)) + " text=[" + p.text +
         "] id=[" + p.id + "] name=[" + p.name + "] args=[" + p.arguments + "] source=[" +
         p.source + "] media=[" + p.media_type + "] url=" + std::to_string(p.image_is_url) +
         " detail=[" + p.detail + "] sig=[" + p.signature +
         "] error=" + std::to_string(p.is_error) + " cache=" + std::to_string(p.cache_breakpoint) +
         " ttl=[" + p.cache_ttl + "]\n";
  for (const ir::ContentPart& r : p.parts) {
    dump_part(r, indent + "  ", out);
  }
}

std::string dump(const ir::Request& r) {
  std::string out = "model=" + r.model + "\n";
  for (const ir::ContentPart& p : r.system) {
    dump_part(p, "system ", out);
  }
  for (const ir::Message& m : r.messages) {
    out += "message role=" + std::to_string(static_cast<int>(m.role)) + " name=[" + m.name + "]\n";
    for (const ir::ContentPart& p : m.content) {
      dump_part(p, "  ", out);
    }
  }
  for (const ir::Tool& t : r.tools) {
    out += "tool " + t.name + " [" + t.description + "] " + t.parameters +
           " cache=" + std::to_string(t.cache_breakpoint) + "\n";
  }
  out += "tool_choice=" + std::to_string(static_cast<int>(r.tool_choice.mode)) + " " +
         r.tool_choice.name +
         " no_parallel=" + std::to_string(r.tool_choice.disable_parallel_tool_use) + "\n";
  out += "max_tokens=" + (r.max_tokens ? std::to_string(*r.max_tokens) : "-") + "\n";
  out += "temperature=" + (r.temperature ? std::to_string(*r.temperature) : "-") + "\n";
  out += "top_p=" + (r.top_p ? std::to_string(*r.top_p) : "-") + "\n";
  out += "top_k=" + (r.top_k ? std::to_string(*r.top_k) : "-") + "\n";
  for (const std::string& s : r.stop) {
    out += "stop [" + s + "]\n";
  }
  out += "stream=" + std::to_string(r.stream) + " user=[" + r.user + "]\n";
  out += "reasoning enabled=" + std::to_string(r.reasoning.enabled) + " budget=" +
         (r.reasoning.budget_tokens ? std::to_string(*r.reasoning.budget_tokens) : "-") +
         " effort=[" + r.reasoning.effort + "]\n";
  const ir::ResponseFormat& f = r.response_format;
  out += "response_format kind=" + std::to_string(static_cast<int>(f.kind)) + " name=[" + f.name +
         "] schema=" + f.schema + " description=[" + f.description +
         "] strict=" + (f.strict ? std::to_string(*f.strict) : "-") + "\n";
  return out;
}

ir::Request decode_anthropic(const std::string& body) {
  auto r = decode_request(body);
  EXPECT_TRUE(r.has_value()) << r.error().message() << "\n" << body;
  return r ? *r : ir::Request{};
}

ir::Request decode_openai(const std::string& body) {
  auto r = openai_chat::decode_request(body);
  EXPECT_TRUE(r.has_value()) << r.error().message() << "\n" << body;
  return r ? *r : ir::Request{};
}

// Encodes and checks that the body is JSON that decode_request accepts.
std::string encode_ok(const ir::Request& req, std::string_view model = "claude-up",
                      bool stream = false, const EncodeOptions& options = {},
                      EncodeStats* stats = nullptr) {
  auto body = encode_request(req, model, stream, options, stats);
  EXPECT_TRUE(body.has_value()) << body.error().message();
  if (!body) {
    return {};
  }
  auto again = decode_request(*body);
  EXPECT_TRUE(again.has_value()) << again.error().message() << "\n" << *body;
  return *body;
}

json::object encode_json(const ir::Request& req, const EncodeOptions& options = {},
                         EncodeStats* stats = nullptr) {
  const std::string body = encode_ok(req, "claude-up", false, options, stats);
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  EXPECT_FALSE(ec) << body;
  EXPECT_TRUE(v.is_object()) << body;
  return v.is_object() ? v.get_object() : json::object{};
}

Error encode_error(const ir::Request& req, const EncodeOptions& options = {}) {
  auto body = encode_request(req, "claude-up", false, options);
  EXPECT_FALSE(body.has_value()) << *body;
  if (body) {
    return Error(ErrorKind::kInternal, "encoded");
  }
  EXPECT_EQ(body.error().kind(), ErrorKind::kBadRequest) << body.error().message();
  return body.error();
}

// A request with one user message "hi".
ir::Request minimal() {
  ir::Request r;
  r.model = "m";
  r.messages.push_back({ir::Role::kUser, {ir::ContentPart::make_text("hi")}, ""});
  return r;
}

ir::ContentPart tool_call(std::string id, std::string name, std::string args) {
  ir::ContentPart p;
  p.kind = PartKind::kToolCall;
  p.id = std::move(id);
  p.name = std::move(name);
  p.arguments = std::move(args);
  return p;
}

ir::ContentPart tool_result(std::string id, std::vector<ir::ContentPart> parts) {
  ir::ContentPart p;
  p.kind = PartKind::kToolResult;
  p.id = std::move(id);
  p.parts = std::move(parts);
  return p;
}

ir::ContentPart url_image(std::string url) {
  ir::ContentPart p;
  p.kind = PartKind::kImage;
  p.source = std::move(url);
  p.image_is_url = true;
  return p;
}

ir::ContentPart reasoning(std::string text, std::string signature) {
  ir::ContentPart p;
  p.kind = PartKind::kReasoning;
  p.text = std::move(text);
  p.signature = std::move(signature);
  return p;
}

std::string s(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
}

// --- round trips -----------------------------------------------------------------------------

// A canonical Anthropic request (alternating roles, no empty text, Anthropic-shaped ids, signed
// thinking, budget below max_tokens) with every block type, tools, tool_choice, thinking,
// cache_control and both image sources.
constexpr const char* kEveryBlock = R"({
  "model": "claude-up",
  "max_tokens": 4096,
  "system": [
    {"type": "text", "text": "You are terse."},
    {"type": "text", "text": "Big cached context", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
  ],
  "messages": [
    {"role": "user", "content": "What's the weather in \"Paris\"?\n\u0001"},
    {"role": "assistant", "content": [
      {"type": "thinking", "thinking": "Need the tool.", "signature": "sig=="},
      {"type": "redacted_thinking", "data": "opaque"},
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_01A", "name": "get_weather",
       "input": {"city": "Paris", "days": 2, "ratio": 1.5, "tags": ["a", "b"], "x": null, "ok": true},
       "cache_control": {"type": "ephemeral"}},
      {"type": "tool_use", "id": "toolu_01B", "name": "noop", "input": {}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_01A", "is_error": true,
       "content": [{"type": "text", "text": "timeout"},
                   {"type": "image", "source": {"type": "url", "url": "https://x/y.png"},
                    "cache_control": {"type": "ephemeral", "ttl": "5m"}}],
       "cache_control": {"type": "ephemeral"}},
      {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "plain"},
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
      {"type": "image", "source": {"type": "url", "url": "https://x/z.jpg"}, "cache_control": {"type": "ephemeral"}},
      {"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}
    ]},
    {"role": "assistant", "content": "Sunny."},
    {"role": "user", "content": [{"type": "text", "text": "élan 🌧"}, {"type": "text", "text": "again"}]}
  ],
  "tools": [
    {"name": "get_weather", "description": "Weather by city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
     "cache_control": {"type": "ephemeral"}},
    {"name": "noop", "input_schema": {"type": "object"}}
  ],
  "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
  "temperature": 0.5,
  "top_p": 0.9,
  "top_k": 40,
  "stop_sequences": ["END", "STOP"],
  "stream": true,
  "metadata": {"user_id": "user-42"},
  "thinking": {"type": "enabled", "budget_tokens": 2048}
})";

TEST(AnthropicEncodeRequest, RoundTripEveryBlockType) {
  const ir::Request first = decode_anthropic(kEveryBlock);
  ASSERT_EQ(first.messages.size(), 5u);
  const std::string body = encode_ok(first, "claude-up", first.stream);
  const ir::Request second = decode_anthropic(body);
  EXPECT_EQ(dump(second), dump(first)) << body;
}

TEST(AnthropicEncodeRequest, RoundTripVariants) {
  const std::string head =
      R"({"model":"claude-up","max_tokens":4000,"messages":[{"role":"user","content":"hi"}])";
  const char* extras[] = {
      "",
      R"(,"system":"Be brief")",
      R"(,"system":[{"type":"text","text":"cached","cache_control":{"type":"ephemeral"}}])",
      R"(,"tools":[{"name":"t","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto"})",
      R"(,"tools":[{"name":"t","input_schema":{"type":"object"}}],)"
      R"("tool_choice":{"type":"auto","disable_parallel_tool_use":true})",
      R"(,"tools":[{"name":"t","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"})",
      R"(,"tools":[{"name":"t","input_schema":{"type":"object"}}],)"
      R"("tool_choice":{"type":"tool","name":"t","disable_parallel_tool_use":true})",
      R"(,"tools":[{"name":"t","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"})",
      R"(,"thinking":{"type":"disabled"})",
      R"(,"thinking":{"type":"adaptive"})",
      R"(,"thinking":{"type":"enabled","budget_tokens":1024})",
      R"(,"temperature":0,"top_p":1,"top_k":0)",
      R"(,"temperature":1)",
      R"(,"stop_sequences":["a","b","c","d","e","f","g"])",
      R"(,"metadata":{"user_id":"u"})",
  };
  for (const char* extra : extras) {
    const std::string body = head + extra + "}";
    const ir::Request first = decode_anthropic(body);
    const std::string encoded = encode_ok(first, "claude-up", first.stream);
    EXPECT_EQ(dump(decode_anthropic(encoded)), dump(first)) << extra << "\n" << encoded;
  }
}

// What decode_request makes of an encoded body encodes to the same bytes: the encoder's
// normalisations (merged turns, dropped parts, raised max_tokens, mapped ids) apply once.
TEST(AnthropicEncodeRequest, EncodingIsAFixedPointAfterOneDecode) {
  ir::Request r = decode_openai(R"({"model":"gpt","messages":[
    {"role":"system","content":"sys"},
    {"role":"user","content":"a"},{"role":"user","content":""},{"role":"user","content":"b"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"call 1","type":"function","function":{"name":"f","arguments":"{ \"x\" : 1.0 }"}}]},
    {"role":"tool","tool_call_id":"call 1","content":"r"},
    {"role":"system","content":"later"},
    {"role":"user","content":"c"}],
    "reasoning_effort":"high","max_tokens":100})");
  const std::string once = encode_ok(r);
  const std::string twice = encode_ok(decode_anthropic(once));
  EXPECT_EQ(twice, encode_ok(decode_anthropic(twice)));
  // The arguments went out verbatim the first time and compact (as decode_request keeps them)
  // the second.
  EXPECT_NE(once.find(R"("input":{ "x" : 1.0 })"), std::string::npos) << once;
  EXPECT_NE(twice.find(R"("input":{"x":1})"), std::string::npos) << twice;
}

// --- OpenAI callers -------------------------------------------------------------------------

constexpr const char* kOpenAiConversation = R"({
  "model": "gpt-4o",
  "messages": [
    {"role": "system", "content": "Be helpful."},
    {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
    {"role": "user", "name": "ann", "content": [
      {"type": "text", "text": "Weather in Paris and Rome? See map."},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}},
      {"type": "image_url", "image_url": {"url": "https://example.com/map.jpg"}}]},
    {"role": "assistant", "content": "Checking both.", "tool_calls": [
      {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
      {"id": "call with space/1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
    {"role": "tool", "tool_call_id": "call_abc", "content": "18C"},
    {"role": "tool", "tool_call_id": "call with space/1", "content": [{"type": "text", "text": "21C"}]},
    {"role": "user", "content": "Thanks. Which is warmer?"},
    {"role": "assistant", "content": "Rome."},
    {"role": "user", "content": "Bye"}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
  "tool_choice": "required",
  "parallel_tool_calls": false,
  "max_completion_tokens": 20000,
  "temperature": 0.3,
  "top_p": 0.8,
  "stop": "END",
  "user": "user-7",
  "reasoning_effort": "medium",
  "stream": true
})";

TEST(AnthropicEncodeRequest, OpenAiConversationCarriesOver) {
  const ir::Request in = decode_openai(kOpenAiConversation);
  const std::string body = encode_ok(in, "claude-up", true);
  const ir::Request out = decode_anthropic(body);

  EXPECT_EQ(out.model, "claude-up");
  EXPECT_TRUE(out.stream);
  ASSERT_EQ(out.system.size(), 2u);
  EXPECT_EQ(out.system[0].text, "Be helpful.");
  EXPECT_EQ(out.system[1].text, "Use tools.");

  ASSERT_EQ(out.messages.size(), 5u);
  const ir::Role roles[] = {ir::Role::kUser, ir::Role::kAssistant, ir::Role::kUser,
                            ir::Role::kAssistant, ir::Role::kUser};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out.messages[i].role, roles[i]) << i;
  }
  const auto& user = out.messages[0].content;
  ASSERT_EQ(user.size(), 3u);
  EXPECT_EQ(user[0].text, "Weather in Paris and Rome? See map.");
  EXPECT_EQ(user[1].kind, PartKind::kImage);
  EXPECT_FALSE(user[1].image_is_url);
  EXPECT_EQ(user[1].media_type, "image/png");
  EXPECT_EQ(user[1].source, "iVBORw0KGgo=");
  EXPECT_EQ(user[1].detail, "");  // Anthropic has no detail
  EXPECT_TRUE(user[2].image_is_url);
  EXPECT_EQ(user[2].source, "https://example.com/map.jpg");

  const auto& calls = out.messages[1].content;
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].text, "Checking both.");
  ASSERT_EQ(calls[1].kind, PartKind::kToolCall);
  ASSERT_EQ(calls[2].kind, PartKind::kToolCall);
  EXPECT_EQ(calls[1].id, tool_use_id("call_abc"));
  EXPECT_EQ(calls[1].id, "toolu_call_abc");
  EXPECT_EQ(calls[2].id, tool_use_id("call with space/1"));
  EXPECT_EQ(calls[1].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(calls[2].arguments, R"({"city":"Rome"})");
  for (const auto& c : {calls[1], calls[2]}) {
    EXPECT_TRUE(c.id.starts_with("toolu_"));
    EXPECT_EQ(
        c.id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"),
        std::string::npos)
        << c.id;
  }

  // The tool messages and the user message after them are one user turn, results first, and
  // each result names the id its call was sent with.
  const auto& results = out.messages[2].content;
  ASSERT_EQ(results.size(), 3u);
  ASSERT_EQ(results[0].kind, PartKind::kToolResult);
  ASSERT_EQ(results[1].kind, PartKind::kToolResult);
  EXPECT_EQ(results[0].id, calls[1].id);
  EXPECT_EQ(results[1].id, calls[2].id);
  ASSERT_EQ(results[0].parts.size(), 1u);
  EXPECT_EQ(results[0].parts[0].text, "18C");
  ASSERT_EQ(results[1].parts.size(), 1u);
  EXPECT_EQ(results[1].parts[0].text, "21C");
  EXPECT_EQ(results[2].text, "Thanks. Which is warmer?");
  EXPECT_EQ(out.messages[3].content[0].text, "Rome.");
  EXPECT_EQ(out.messages[4].content[0].text, "Bye");

  ASSERT_EQ(out.tools.size(), 1u);
  EXPECT_EQ(out.tools[0].name, "get_weather");
  EXPECT_EQ(out.tools[0].description, "Weather");
  EXPECT_EQ(out.tools[0].parameters, in.tools[0].parameters);
  EXPECT_EQ(out.tool_choice.mode, ir::ToolChoiceMode::kRequired);
  EXPECT_TRUE(out.tool_choice.disable_parallel_tool_use);
  EXPECT_EQ(out.max_tokens, 20000u);
  EXPECT_EQ(out.temperature, 0.3);
  EXPECT_EQ(out.top_p, 0.8);
  EXPECT_EQ(out.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(out.user, "user-7");
  EXPECT_TRUE(out.reasoning.enabled);
  EXPECT_EQ(out.reasoning.budget_tokens, 8192u);
}

TEST(AnthropicEncodeRequest, OpenAiSystemMessagesLeadingAndMidConversation) {
  const ir::Request in = decode_openai(R"({"model":"gpt","messages":[
    {"role":"system","content":"first"},
    {"role":"user","content":"hi"},
    {"role":"assistant","content":"hello"},
    {"role":"system","content":"Answer in French from now on."},
    {"role":"user","content":"how are you?"}]})");
  ASSERT_EQ(in.messages[2].role, ir::Role::kSystem);
  json::object b = encode_json(in);
  EXPECT_EQ(s(b["system"]), "first");
  const json::array& msgs = b["messages"].as_array();
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(s(msgs[2].at("role")), "user");
  const json::array& content = msgs[2].at("content").as_array();
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(s(content[0].at("text")), "System: Answer in French from now on.");
  EXPECT_EQ(s(content[1].at("text")), "how are you?");
}

TEST(AnthropicEncodeRequest, SystemMessagesBeforeAnyOtherJoinTheSystemPrompt) {
  ir::Request r = minimal();
  r.system.push_back(ir::ContentPart::make_text("top"));
  ir::Message sys{ir::Role::kSystem, {ir::ContentPart::make_text("lead")}, ""};
  sys.content[0].cache_breakpoint = true;
  r.messages.insert(r.messages.begin(), sys);
  json::object b = encode_json(r);
  const json::array& system = b["system"].as_array();
  ASSERT_EQ(system.size(), 2u);
  EXPECT_EQ(s(system[0].at("text")), "top");
  EXPECT_EQ(s(system[1].at("text")), "lead");
  EXPECT_EQ(s(system[1].at("cache_control")), R"({"type":"ephemeral"})");
  EXPECT_EQ(s(b["messages"]), R"([{"role":"user","content":"hi"}])");
}

TEST(AnthropicEncodeRequest, OpenAiToolChoiceShapes) {
  const std::string tools =
      R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}])";
  struct Case {
    std::string extra;
    const char* expected;  // tool_choice JSON, or "" for none written
  };
  const Case cases[] = {
      {R"(,"tool_choice":"auto")", R"({"type":"auto"})"},
      {R"(,"tool_choice":"none")", R"({"type":"none"})"},
      {R"(,"tool_choice":"required")", R"({"type":"any"})"},
      {R"(,"tool_choice":{"type":"function","function":{"name":"f"}})",
       R"({"type":"tool","name":"f"})"},
      {R"(,"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false)",
       R"({"type":"tool","name":"f","disable_parallel_tool_use":true})"},
      {R"(,"tool_choice":"required","parallel_tool_calls":false)",
       R"({"type":"any","disable_parallel_tool_use":true})"},
      {R"(,"tool_choice":"none","parallel_tool_calls":false)", R"({"type":"none"})"},
      {R"(,"parallel_tool_calls":false)", R"({"type":"auto","disable_parallel_tool_use":true})"},
      {R"(,"parallel_tool_calls":true)", ""},
      {"", ""},
  };
  for (const Case& c : cases) {
    const ir::Request in = decode_openai(
        R"({"model":"gpt","messages":[{"role":"user","content":"x"}],)" + tools + c.extra + "}");
    json::object b = encode_json(in);
    if (*c.expected == '\0') {
      EXPECT_FALSE(b.contains("tool_choice")) << c.extra;
    } else {
      ASSERT_TRUE(b.contains("tool_choice")) << c.extra;
      EXPECT_EQ(s(b["tool_choice"]), c.expected) << c.extra;
    }
  }
  // parallel_tool_calls=false without tools says nothing.
  ir::Request no_tools = minimal();
  no_tools.tool_choice.disable_parallel_tool_use = true;
  EXPECT_FALSE(encode_json(no_tools).contains("tool_choice"));
}

// --- top level --------------------------------------------------------------------------------

TEST(AnthropicEncodeRequest, ModelStreamAndMaxTokens) {
  ir::Request r = minimal();
  r.stream = true;  // ignored: the argument decides
  auto body = encode_request(r, "up\"model", false);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(
      *body,
      R"({"model":"up\"model","max_tokens":4096,"messages":[{"role":"user","content":"hi"}]})");
  auto streamed = encode_request(r, "m", true);
  ASSERT_TRUE(streamed.has_value());
  EXPECT_NE(streamed->find(R"(,"stream":true})"), std::string::npos) << *streamed;

  EncodeOptions options;
  options.default_max_tokens = 1000;
  EXPECT_EQ(encode_json(r, options)["max_tokens"].as_int64(), 1000);
  r.max_tokens = 77;
  EXPECT_EQ(encode_json(r, options)["max_tokens"].as_int64(), 77);

  r.max_tokens = 0;
  const Error e = encode_error(r);
  EXPECT_EQ(e.param(), "max_tokens");
  EXPECT_NE(e.message().find("at least 1"), std::string::npos) << e.message();
}

TEST(AnthropicEncodeRequest, SystemShapes) {
  ir::Request r = minimal();
  EXPECT_FALSE(encode_json(r).contains("system"));
  r.system.push_back(ir::ContentPart::make_text(""));
  EncodeStats stats;
  EXPECT_FALSE(encode_json(r, {}, &stats).contains("system"));
  EXPECT_EQ(stats.dropped_empty, 1u);
  r.system.push_back(ir::ContentPart::make_text("one"));
  EXPECT_EQ(s(encode_json(r)["system"]), "one");
  r.system.back().cache_breakpoint = true;
  r.system.back().cache_ttl = "1h";
  EXPECT_EQ(s(encode_json(r)["system"]),
            R"([{"type":"text","text":"one","cache_control":{"type":"ephemeral","ttl":"1h"}}])");
  r.system.back().cache_breakpoint = false;
  r.system.push_back(ir::ContentPart::make_text("two"));
  EXPECT_EQ(s(encode_json(r)["system"]),
            R"([{"type":"text","text":"one"},{"type":"text","text":"two"}])");

  r.system.push_back(url_image("https://x"));
  EXPECT_EQ(encode_error(r).param(), "system");
}

TEST(AnthropicEncodeRequest, SamplingParameters) {
  ir::Request r = minimal();
  r.temperature = 1.0;
  r.top_p = 0.0;
  r.top_k = 5;
  r.stop = {"a", "b", "c", "d", "e", "f"};  // Anthropic documents no cap
  r.user = "user-1";
  json::object b = encode_json(r);
  EXPECT_EQ(s(b["temperature"]), "1");
  EXPECT_EQ(s(b["top_p"]), "0");
  EXPECT_EQ(s(b["top_k"]), "5");
  EXPECT_EQ(s(b["stop_sequences"]), R"(["a","b","c","d","e","f"])");
  EXPECT_EQ(s(b["metadata"]), R"({"user_id":"user-1"})");
}

TEST(AnthropicEncodeRequest, TemperatureAboveOneIsAnErrorNotAClamp) {
  ir::Request r = minimal();
  r.temperature = 1.5;  // OpenAI accepts up to 2
  Error e = encode_error(r);
  EXPECT_EQ(e.param(), "temperature");
  EXPECT_EQ(e.message(),
            "temperature 1.5 is out of range for this model: its provider (Anthropic) accepts 0 "
            "to 1");
  r.temperature = -0.1;
  EXPECT_EQ(encode_error(r).param(), "temperature");
  r.temperature = 0.7;
  r.top_p = 1.01;
  e = encode_error(r);
  EXPECT_EQ(e.param(), "top_p");
  EXPECT_NE(e.message().find("top_p 1.01"), std::string::npos) << e.message();
}

// --- messages ---------------------------------------------------------------------------------

TEST(AnthropicEncodeRequest, ConsecutiveSameRoleMessagesAreMerged) {
  ir::Request r;
  r.messages = {
      {ir::Role::kUser, {ir::ContentPart::make_text("a")}, "n1"},
      {ir::Role::kUser, {ir::ContentPart::make_text("b")}, "n2"},
      {ir::Role::kAssistant, {ir::ContentPart::make_text("c")}, ""},
      {ir::Role::kAssistant, {ir::ContentPart::make_text("")}, ""},
      {ir::Role::kAssistant, {ir::ContentPart::make_text("d")}, ""},
  };
  EncodeStats stats;
  json::object b = encode_json(r, {}, &stats);
  EXPECT_EQ(
      s(b["messages"]),
      R"([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},)"
      R"({"role":"assistant","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]}])");
  EXPECT_EQ(stats.dropped_empty, 1u);
}

TEST(AnthropicEncodeRequest, MessagesWithoutContentAreLeftOut) {
  ir::Request r;
  r.messages = {
      {ir::Role::kUser, {ir::ContentPart::make_text("q")}, ""},
      {ir::Role::kAssistant, {}, ""},
      {ir::Role::kUser, {ir::ContentPart::make_text("")}, ""},
      {ir::Role::kAssistant, {reasoning("unsigned", "")}, ""},
  };
  EncodeStats stats;
  json::object b = encode_json(r, {}, &stats);
  EXPECT_EQ(s(b["messages"]), R"([{"role":"user","content":"q"}])");
  EXPECT_EQ(stats.dropped_empty, 1u);
  EXPECT_EQ(stats.dropped_reasoning, 1u);

  ir::Request empty;
  empty.system.push_back(ir::ContentPart::make_text("only a system prompt"));
  empty.messages = {{ir::Role::kUser, {ir::ContentPart::make_text("")}, ""}};
  EXPECT_EQ(encode_error(empty).param(), "messages");
  ir::Request only_system;
  only_system.messages = {{ir::Role::kSystem, {ir::ContentPart::make_text("s")}, ""}};
  EXPECT_EQ(encode_error(only_system).param(), "messages");
}

TEST(AnthropicEncodeRequest, ToolRoleIsAUserTurnOfToolResults) {
  ir::Request r;
  r.messages = {
      {ir::Role::kUser, {ir::ContentPart::make_text("go")}, ""},
      {ir::Role::kAssistant, {tool_call("c1", "f", "{}")}, ""},
      {ir::Role::kTool, {tool_result("c1", {ir::ContentPart::make_text("done")})}, ""},
      {ir::Role::kUser, {ir::ContentPart::make_text("next")}, ""},
  };
  json::object b = encode_json(r);
  EXPECT_EQ(s(b["messages"].as_array()[2]),
            R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_c1",)"
            R"("content":"done"},{"type":"text","text":"next"}]})");
}

TEST(AnthropicEncodeRequest, MidConversationSystemMessageOnlyTakesText) {
  ir::Request r = minimal();
  r.messages.push_back({ir::Role::kSystem, {url_image("https://x")}, ""});
  EXPECT_EQ(encode_error(r).param(), "messages");
}

TEST(AnthropicEncodeRequest, Images) {
  ir::Request r = minimal();
  ir::ContentPart url = url_image("https://x/a.png");
  url.detail = "high";
  ir::ContentPart b64;
  b64.kind = PartKind::kImage;
  b64.source = "AAAA";
  b64.media_type = "image/webp";
  b64.cache_breakpoint = true;
  r.messages[0].content = {url, b64};
  EXPECT_EQ(s(encode_json(r)["messages"].as_array()[0].at("content")),
            R"([{"type":"image","source":{"type":"url","url":"https://x/a.png"}},)"
            R"({"type":"image","source":{"type":"base64","media_type":"image/webp","data":"AAAA"},)"
            R"("cache_control":{"type":"ephemeral"}}])");

  for (const char* media : {"image/svg+xml", "", "text/plain"}) {
    r.messages[0].content[1].media_type = media;
    const Error e = encode_error(r);
    EXPECT_EQ(e.param(), "messages");
    EXPECT_NE(e.message().find("image/jpeg, image/png, image/gif or image/webp"), std::string::npos)
        << e.message();
  }
}

TEST(AnthropicEncodeRequest, ToolCallsAndResults) {
  ir::Request r = minimal();
  ir::ContentPart call = tool_call("toolu_X", "f", R"( {"a": [1, {"b": null}]} )");
  call.cache_breakpoint = true;
  r.messages.push_back({ir::Role::kAssistant, {ir::ContentPart::make_text("t"), call}, ""});
  ir::ContentPart failed =
      tool_result("toolu_X", {ir::ContentPart::make_text("bad"), url_image("https://x")});
  failed.is_error = true;
  ir::ContentPart empty = tool_result("other id", {ir::ContentPart::make_text("")});
  r.messages.push_back({ir::Role::kUser, {failed, empty}, ""});
  EncodeStats stats;
  json::object b = encode_json(r, {}, &stats);
  EXPECT_EQ(s(b["messages"].as_array()[1].at("content")),
            R"([{"type":"text","text":"t"},{"type":"tool_use","id":"toolu_X","name":"f",)"
            R"("input":{"a":[1,{"b":null}]},"cache_control":{"type":"ephemeral"}}])");
  EXPECT_EQ(
      s(b["messages"].as_array()[2].at("content")),
      R"([{"type":"tool_result","tool_use_id":"toolu_X","content":[{"type":"text","text":"bad"},)"
      R"({"type":"image","source":{"type":"url","url":"https://x"}}],"is_error":true},)"
      R"({"type":"tool_result","tool_use_id":")" +
          tool_use_id("other id") + R"("}])");
  EXPECT_EQ(stats.dropped_empty, 1u);
}

TEST(AnthropicEncodeRequest, ToolCallArgumentsMustBeAJsonObject) {
  struct Case {
    const char* args;
    const char* problem;
  };
  const Case cases[] = {
      {"", "not valid JSON"},
      {"{\"a\":", "not valid JSON"},
      {"{} x", "not valid JSON"},
      {"[1]", "must be a JSON object"},
      {"\"s\"", "must be a JSON object"},
      {"null", "must be a JSON object"},
  };
  for (const Case& c : cases) {
    ir::Request r = minimal();
    r.messages.push_back({ir::Role::kAssistant, {tool_call("call_9", "lookup", c.args)}, ""});
    const Error e = encode_error(r);
    EXPECT_EQ(e.param(), "messages") << c.args;
    EXPECT_EQ(e.message().find("tool call 'call_9' (lookup): "), 0u) << e.message();
    EXPECT_NE(e.message().find(c.problem), std::string::npos) << e.message();
  }
}

// The body nests arguments five levels down; decode_request (and the upstream) allow 64.
TEST(AnthropicEncodeRequest, ToolCallArgumentsDepthFitsTheBody) {
  auto nested = [](int depth) {
    std::string a;
    for (int i = 0; i < depth; ++i) {
      a += i == 0 ? "{\"k\":" : "[";
    }
    a += "1";
    for (int i = depth - 1; i >= 0; --i) {
      a += i == 0 ? "}" : "]";
    }
    return a;
  };
  ir::Request r = minimal();
  r.messages.push_back({ir::Role::kAssistant, {tool_call("c", "f", nested(59))}, ""});
  encode_ok(r);  // decodes again
  r.messages.back().content[0].arguments = nested(60);
  const Error e = encode_error(r);
  EXPECT_NE(e.message().find("deeper than 59"), std::string::npos) << e.message();

  ir::Request t = minimal();
  t.tools.push_back({"f", "", nested(61), false});
  encode_ok(t);
  t.tools[0].parameters = nested(62);
  EXPECT_EQ(encode_error(t).param(), "tools[0]");
}

TEST(AnthropicEncodeRequest, ToolCallsAndResultsNeedIds) {
  ir::Request r = minimal();
  r.messages.push_back({ir::Role::kAssistant, {tool_call("", "f", "{}")}, ""});
  Error e = encode_error(r);
  EXPECT_EQ(e.param(), "messages");
  EXPECT_NE(e.message().find("has no id"), std::string::npos) << e.message();

  ir::Request q = minimal();
  q.messages[0].content.push_back(tool_result("", {}));
  e = encode_error(q);
  EXPECT_NE(e.message().find("no tool call id"), std::string::npos) << e.message();

  ir::Request nested = minimal();
  nested.messages[0].content.push_back(tool_result("c", {tool_call("d", "f", "{}")}));
  e = encode_error(nested);
  EXPECT_NE(e.message().find("only hold text and images"), std::string::npos) << e.message();
}

TEST(AnthropicEncodeRequest, ReasoningPartsNeedASignature) {
  ir::Request r = minimal();
  ir::ContentPart redacted;
  redacted.kind = PartKind::kRedactedReasoning;
  redacted.signature = "opaque";
  r.messages.push_back({ir::Role::kAssistant,
                        {reasoning("from another provider", ""), reasoning("mine", "sig"), redacted,
                         ir::ContentPart::make_text("answer")},
                        ""});
  EncodeStats stats;
  json::object b = encode_json(r, {}, &stats);
  EXPECT_EQ(s(b["messages"].as_array()[1].at("content")),
            R"([{"type":"thinking","thinking":"mine","signature":"sig"},)"
            R"({"type":"redacted_thinking","data":"opaque"},{"type":"text","text":"answer"}])");
  EXPECT_EQ(stats.dropped_reasoning, 1u);
}

TEST(AnthropicEncodeRequest, Tools) {
  ir::Request r = minimal();
  r.tools = {{"a", "does a", R"({"type":"object","properties":{}})", true}, {"b", "", "", false}};
  EXPECT_EQ(
      s(encode_json(r)["tools"]),
      R"([{"name":"a","description":"does a","input_schema":{"type":"object","properties":{}},)"
      R"("cache_control":{"type":"ephemeral"}},{"name":"b","input_schema":{"type":"object"}}])");

  r.tools[1].parameters = "[]";
  Error e = encode_error(r);
  EXPECT_EQ(e.param(), "tools[1]");
  EXPECT_NE(e.message().find("tool 'b'"), std::string::npos) << e.message();
  r.tools[1].parameters = "{";
  EXPECT_EQ(encode_error(r).param(), "tools[1]");
  r.tools[1] = {"", "", "", false};
  EXPECT_EQ(encode_error(r).param(), "tools[1]");
}

// --- reasoning ----------------------------------------------------------------------------------

std::string thinking_of(const ir::Request& r, const EncodeOptions& options = {}) {
  json::object b = encode_json(r, options);
  std::string out = "max_tokens=" + s(b["max_tokens"]);
  if (const json::value* t = b.if_contains("thinking")) {
    out += " thinking=" + s(*t);
  }
  if (const json::value* o = b.if_contains("output_config")) {
    out += " output_config=" + s(*o);
  }
  return out;
}

TEST(AnthropicEncodeRequest, ThinkingFromBudgetOrNothing) {
  ir::Request r = minimal();
  r.max_tokens = 8000;
  EXPECT_EQ(thinking_of(r), "max_tokens=8000");
  r.reasoning.budget_tokens = 3000;  // not enabled: nothing
  EXPECT_EQ(thinking_of(r), "max_tokens=8000");
  r.reasoning.enabled = true;
  EXPECT_EQ(thinking_of(r), R"(max_tokens=8000 thinking={"type":"enabled","budget_tokens":3000})");
  r.reasoning.budget_tokens = 100;  // raised to Anthropic's minimum
  EXPECT_EQ(thinking_of(r), R"(max_tokens=8000 thinking={"type":"enabled","budget_tokens":1024})");
  r.reasoning.budget_tokens = 8000;  // explicit budget: max_tokens rises, the budget stays
  EXPECT_EQ(thinking_of(r), R"(max_tokens=16000 thinking={"type":"enabled","budget_tokens":8000})");
  r.reasoning.budget_tokens.reset();  // enabled, no budget, no effort: adaptive
  EXPECT_EQ(thinking_of(r), R"(max_tokens=8000 thinking={"type":"adaptive"})");
}

TEST(AnthropicEncodeRequest, ThinkingFromEffort) {
  ir::Request r = minimal();
  r.reasoning.enabled = true;
  r.max_tokens = 100000;
  const std::pair<const char*, int> table[] = {
      {"minimal", 1024}, {"low", 2048}, {"medium", 8192}, {"high", 16384}, {"xhigh", 32768}};
  for (const auto& [effort, budget] : table) {
    r.reasoning.effort = effort;
    EXPECT_EQ(thinking_of(r), R"(max_tokens=100000 thinking={"type":"enabled","budget_tokens":)" +
                                  std::to_string(budget) + "}")
        << effort;
  }
  r.reasoning.effort = "none";
  EXPECT_EQ(thinking_of(r), "max_tokens=100000");

  r.reasoning.effort = "max";
  const Error e = encode_error(r);
  EXPECT_EQ(e.param(), "reasoning_effort");
  EXPECT_NE(e.message().find("'max'"), std::string::npos) << e.message();

  EncodeOptions options;
  options.effort_budgets.high = 5000;
  r.reasoning.effort = "high";
  EXPECT_EQ(thinking_of(r, options),
            R"(max_tokens=100000 thinking={"type":"enabled","budget_tokens":5000})");
}

TEST(AnthropicEncodeRequest, EffortBudgetStaysBelowMaxTokens) {
  ir::Request r = minimal();
  r.reasoning.enabled = true;
  r.reasoning.effort = "high";
  // The caller's bound holds: the budget shrinks to fit below it.
  r.max_tokens = 3000;
  EXPECT_EQ(thinking_of(r), R"(max_tokens=3000 thinking={"type":"enabled","budget_tokens":2999})");
  // No room for the minimum budget: max_tokens grows by it.
  r.max_tokens = 1024;
  EXPECT_EQ(thinking_of(r), R"(max_tokens=2048 thinking={"type":"enabled","budget_tokens":1024})");
  r.max_tokens = 500;
  EXPECT_EQ(thinking_of(r), R"(max_tokens=1524 thinking={"type":"enabled","budget_tokens":1024})");
  // No max_tokens from the caller: the default grows to leave it for the answer.
  r.max_tokens.reset();
  EXPECT_EQ(thinking_of(r),
            R"(max_tokens=20480 thinking={"type":"enabled","budget_tokens":16384})");
  r.reasoning.effort = "minimal";
  EXPECT_EQ(thinking_of(r), R"(max_tokens=4096 thinking={"type":"enabled","budget_tokens":1024})");
}

TEST(AnthropicEncodeRequest, BudgetAndMaxTokensBeyondUint32AreAnError) {
  ir::Request r = minimal();
  r.reasoning.enabled = true;
  r.reasoning.budget_tokens = 4000000000u;
  r.max_tokens = 1000000000u;
  EXPECT_EQ(encode_error(r).param(), "max_tokens");
}

TEST(AnthropicEncodeRequest, AdaptiveThinkingOption) {
  EncodeOptions options;
  options.adaptive_thinking = true;
  ir::Request r = minimal();
  r.max_tokens = 2000;
  r.reasoning.enabled = true;
  r.reasoning.budget_tokens = 5000;  // not sent: adaptive thinking takes no budget
  EXPECT_EQ(thinking_of(r, options), R"(max_tokens=2000 thinking={"type":"adaptive"})");
  r.reasoning.budget_tokens.reset();
  const std::pair<const char*, const char*> table[] = {{"minimal", "low"},
                                                       {"low", "low"},
                                                       {"medium", "medium"},
                                                       {"high", "high"},
                                                       {"xhigh", "xhigh"}};
  for (const auto& [effort, sent] : table) {
    r.reasoning.effort = effort;
    EXPECT_EQ(thinking_of(r, options), R"(max_tokens=2000 thinking={"type":"adaptive"} )"
                                       R"(output_config={"effort":")" +
                                           std::string(sent) + "\"}")
        << effort;
  }
  r.reasoning.effort = "none";
  EXPECT_EQ(thinking_of(r, options), "max_tokens=2000");
  r.reasoning.effort = "turbo";
  EXPECT_EQ(encode_error(r, options).param(), "reasoning_effort");
}

// Structured output: one output_config holds the adaptive effort and the format.
TEST(AnthropicEncodeRequest, JsonSchemaGoesToOutputConfigFormat) {
  ir::Request r = minimal();
  r.response_format.kind = ir::ResponseFormat::Kind::kJsonSchema;
  r.response_format.name = "person";  // no Anthropic field
  r.response_format.strict = true;
  r.response_format.schema = R"({"type":"object","properties":{"n":{"type":"string"}}})";
  json::object body = encode_json(r);
  EXPECT_EQ(
      json::serialize(body.at("output_config")),
      R"({"format":{"type":"json_schema","schema":{"type":"object","properties":{"n":{"type":"string"}}}}})");

  EncodeOptions options;
  options.adaptive_thinking = true;
  r.reasoning.enabled = true;
  r.reasoning.effort = "medium";
  body = encode_json(r, options);
  EXPECT_EQ(
      json::serialize(body.at("output_config")),
      R"({"effort":"medium","format":{"type":"json_schema","schema":{"type":"object","properties":{"n":{"type":"string"}}}}})");

  // Decoding the body gives the format back (name and strict have no Anthropic field).
  auto back = decode_request(encode_ok(r, "claude-up", false, options));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(back->response_format.schema, r.response_format.schema);
  EXPECT_EQ(back->reasoning.effort, "medium");
}

TEST(AnthropicEncodeRequest, JsonObjectBecomesASystemInstruction) {
  ir::Request r = minimal();
  r.response_format.kind = ir::ResponseFormat::Kind::kJsonObject;
  json::object body = encode_json(r);
  EXPECT_FALSE(body.contains("output_config"));
  EXPECT_EQ(body.at("system").as_string(), "Respond with a single JSON object and nothing else.");

  r.system.push_back(ir::ContentPart::make_text("Be brief."));
  body = encode_json(r);
  EXPECT_EQ(json::serialize(body.at("system")),
            R"([{"type":"text","text":"Be brief."},)"
            R"({"type":"text","text":"Respond with a single JSON object and nothing else."}])");

  r.response_format.kind = ir::ResponseFormat::Kind::kText;
  body = encode_json(r);
  EXPECT_EQ(body.at("system").as_string(), "Be brief.");
  EXPECT_FALSE(body.contains("output_config"));
}

TEST(AnthropicEncodeRequest, OpenAiResponseFormatCarriesOver) {
  const ir::Request r = decode_openai(
      R"({"model":"gpt","messages":[{"role":"user","content":"hi"}],"response_format":)"
      R"({"type":"json_schema","json_schema":{"name":"n","strict":true,"schema":{"type":"object"}}}})");
  const json::object body = encode_json(r);
  EXPECT_EQ(json::serialize(body.at("output_config")),
            R"({"format":{"type":"json_schema","schema":{"type":"object"}}})");
}

}  // namespace
}  // namespace sluice::protocol::anthropic
