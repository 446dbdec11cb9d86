#include "protocol/bedrock_converse/request_encoder.h"

#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "protocol/bedrock_converse/conventions.h"
#include "protocol/registry.h"

namespace sluice::protocol::bedrock_converse {
namespace {
namespace json = boost::json;
using ir::PartKind;

constexpr std::string_view kClaude = "us.anthropic.claude-sonnet-4-20250514-v1:0";
constexpr std::string_view kNova = "us.amazon.nova-2-lite-v1:0";

ir::ContentPart text(std::string t, bool cache = false) {
  ir::ContentPart p = ir::ContentPart::make_text(std::move(t));
  p.cache_breakpoint = cache;
  return p;
}

ir::Message message(ir::Role role, std::vector<ir::ContentPart> content) {
  ir::Message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

ir::ContentPart tool_call(std::string id, std::string name, std::string arguments) {
  ir::ContentPart p;
  p.kind = PartKind::kToolCall;
  p.id = std::move(id);
  p.name = std::move(name);
  p.arguments = std::move(arguments);
  return p;
}

ir::ContentPart tool_result(std::string id, std::vector<ir::ContentPart> parts,
                            bool error = false) {
  ir::ContentPart p;
  p.kind = PartKind::kToolResult;
  p.id = std::move(id);
  p.parts = std::move(parts);
  p.is_error = error;
  return p;
}

ir::ContentPart image(std::string source, std::string media_type, bool url = false) {
  ir::ContentPart p;
  p.kind = PartKind::kImage;
  p.source = std::move(source);
  p.media_type = std::move(media_type);
  p.image_is_url = url;
  return p;
}

ir::Tool tool(std::string name, std::string parameters = "") {
  ir::Tool t;
  t.name = std::move(name);
  t.parameters = std::move(parameters);
  return t;
}

ir::Request hello() {
  ir::Request r;
  r.messages.push_back(message(ir::Role::kUser, {text("Hello")}));
  return r;
}

json::value encode_ok(const ir::Request& r, std::string_view model = kClaude,
                      EncodeStats* stats = nullptr) {
  auto body = encode_request(r, model, {}, stats);
  EXPECT_TRUE(body) << body.error().message();
  return body ? json::parse(*body) : json::value();
}

Error encode_error(const ir::Request& r, std::string_view model = kClaude) {
  auto body = encode_request(r, model);
  EXPECT_FALSE(body) << *body;
  return body ? Error() : body.error();
}

void expect_json(const json::value& got, std::string_view want) {
  EXPECT_EQ(json::serialize(got), json::serialize(json::parse(want)));
}

TEST(ConverseRequestEncoder, SystemAndMergedAlternatingTurns) {
  ir::Request r;
  r.system.push_back(text("Be brief."));
  r.system.push_back(text("Answer in French.", true));
  r.messages.push_back(message(ir::Role::kSystem, {text("Leading system.")}));
  r.messages.push_back(message(ir::Role::kUser, {text("Hi")}));
  r.messages.push_back(message(ir::Role::kUser, {text("Still me")}));
  r.messages.push_back(message(ir::Role::kAssistant, {text("Bonjour")}));
  r.messages.push_back(message(ir::Role::kSystem, {text("Be nicer.")}));
  r.messages.push_back(message(ir::Role::kUser, {text(""), text("Again")}));
  EncodeStats stats;
  const json::value body = encode_ok(r, kClaude, &stats);
  expect_json(body, R"({
    "system":[{"text":"Be brief."},{"text":"Answer in French."},{"cachePoint":{"type":"default"}},
              {"text":"Leading system."}],
    "messages":[
      {"role":"user","content":[{"text":"Hi"},{"text":"Still me"}]},
      {"role":"assistant","content":[{"text":"Bonjour"}]},
      {"role":"user","content":[{"text":"System: Be nicer."},{"text":"Again"}]}]})");
  EXPECT_EQ(stats.dropped_empty, 1u);
  EXPECT_FALSE(body.as_object().contains("modelId")) << "the model is the URL's";
}

TEST(ConverseRequestEncoder, InferenceConfigAndStopSequenceField) {
  ir::Request r = hello();
  r.max_tokens = 300;
  r.temperature = 0.5;
  r.top_p = 0.9;
  r.top_k = 40;
  r.stop = {"END", "STOP"};
  r.user = "user-1";
  const json::object claude = encode_ok(r).as_object();
  expect_json(claude.at("inferenceConfig"),
              R"({"maxTokens":300,"temperature":0.5,"topP":0.9,"stopSequences":["END","STOP"]})");
  expect_json(claude.at("additionalModelRequestFields"), R"({"top_k":40})");
  expect_json(claude.at("additionalModelResponseFieldPaths"), R"(["/delta/stop_sequence"])");
  EXPECT_EQ(claude.size(), 4u) << "user has no Converse field";
  const json::object nova = encode_ok(r, kNova).as_object();
  EXPECT_FALSE(nova.contains("additionalModelResponseFieldPaths"))
      << "the stop_sequence path is Claude's";
  const json::object bare = encode_ok(hello()).as_object();
  EXPECT_EQ(bare.size(), 1u) << "no inferenceConfig when nothing is set: " << json::serialize(bare);
}

TEST(ConverseRequestEncoder, ImagesAsBytesOrS3Locations) {
  ir::Request r;
  r.messages.push_back(
      message(ir::Role::kUser, {image("iVBORw0KGgo=", "image/png"),
                                image("s3://bucket/cat.JPG", "", true), text("What is this?")}));
  expect_json(encode_ok(r).at("messages"), R"([{"role":"user","content":[
      {"image":{"format":"png","source":{"bytes":"iVBORw0KGgo="}}},
      {"image":{"format":"jpeg","source":{"s3Location":{"uri":"s3://bucket/cat.JPG"}}}},
      {"text":"What is this?"}]}])");

  ir::Request url;
  url.messages.push_back(message(ir::Role::kUser, {image("https://x/cat.png", "", true)}));
  EXPECT_EQ(encode_error(url).param(), "messages");
  ir::Request bmp;
  bmp.messages.push_back(message(ir::Role::kUser, {image("Qk0=", "image/bmp")}));
  EXPECT_EQ(encode_error(bmp).param(), "messages");
}

TEST(ConverseRequestEncoder, ToolsToolChoiceAndCachePoints) {
  ir::Request r = hello();
  ir::Tool weather{.name = "get_weather",
                   .description = "Weather for a city",
                   .parameters = R"({"type":"object","properties":{"city":{"type":"string"}}})",
                   .cache_breakpoint = true};
  ir::Tool time{.name = "get_time", .description = "", .parameters = ""};
  r.tools = {weather, time};
  r.tool_choice.mode = ir::ToolChoiceMode::kAuto;
  expect_json(encode_ok(r).at("toolConfig"), R"({"tools":[
      {"toolSpec":{"name":"get_weather","description":"Weather for a city",
                   "inputSchema":{"json":{"type":"object","properties":{"city":{"type":"string"}}}}}},
      {"cachePoint":{"type":"default"}},
      {"toolSpec":{"name":"get_time","inputSchema":{"json":{"type":"object"}}}}],
      "toolChoice":{"auto":{}}})");

  r.tool_choice.mode = ir::ToolChoiceMode::kRequired;
  expect_json(encode_ok(r).at("toolConfig").at("toolChoice"), R"({"any":{}})");
  r.tool_choice.mode = ir::ToolChoiceMode::kNamed;
  r.tool_choice.name = "get_time";
  expect_json(encode_ok(r).at("toolConfig").at("toolChoice"), R"({"tool":{"name":"get_time"}})");
  r.tool_choice.mode = ir::ToolChoiceMode::kUnset;
  EXPECT_FALSE(encode_ok(r).at("toolConfig").as_object().contains("toolChoice"));
}

TEST(ConverseRequestEncoder, ToolChoiceNoneHidesTheToolsOrIsRefused) {
  ir::Request r = hello();
  r.tools = {tool("get_time")};
  r.tool_choice.mode = ir::ToolChoiceMode::kNone;
  EXPECT_FALSE(encode_ok(r).as_object().contains("toolConfig"))
      << "no tool to call is what none means; Converse has no none choice";

  r.messages.push_back(message(ir::Role::kAssistant, {tool_call("call_1", "get_time", "{}")}));
  r.messages.push_back(message(ir::Role::kTool, {tool_result("call_1", {text("noon")})}));
  EXPECT_EQ(encode_error(r).param(), "tool_choice")
      << "Converse needs toolConfig for tool blocks and cannot forbid the calls";

  ir::Request no_tools = hello();
  no_tools.tool_choice.mode = ir::ToolChoiceMode::kRequired;
  EXPECT_EQ(encode_error(no_tools).param(), "tool_choice");
  no_tools.tool_choice.mode = ir::ToolChoiceMode::kAuto;
  EXPECT_FALSE(encode_ok(no_tools).as_object().contains("toolConfig"));
}

TEST(ConverseRequestEncoder, ToolCallsAndResults) {
  ir::Request r;
  r.messages.push_back(message(ir::Role::kUser, {text("Weather in Paris and Rome?")}));
  r.messages.push_back(
      message(ir::Role::kAssistant,
              {text("Looking."), tool_call("call_1", "get_weather", R"({"city":"Paris"})"),
               tool_call("call/2 with spaces", "get_weather", "")}));
  ir::ContentPart cached_result = tool_result("call/2 with spaces", {});
  cached_result.cache_breakpoint = true;
  r.messages.push_back(
      message(ir::Role::kTool,
              {tool_result("call_1", {text("18C"), image("R0lGOD==", "image/gif")}, true)}));
  r.messages.push_back(message(ir::Role::kTool, {cached_result}));
  r.messages.push_back(message(ir::Role::kUser, {text("Thanks")}));
  r.tools = {tool("get_weather")};
  const std::string mapped = tool_use_id("call/2 with spaces");
  EXPECT_EQ(mapped.size(), 18u + 17u);  // the id, then "_" and 16 hex digits
  EXPECT_TRUE(mapped.starts_with("call_2_with_spaces_"));
  expect_json(encode_ok(r).at("messages"), R"([
      {"role":"user","content":[{"text":"Weather in Paris and Rome?"}]},
      {"role":"assistant","content":[
        {"text":"Looking."},
        {"toolUse":{"toolUseId":"call_1","name":"get_weather","input":{"city":"Paris"}}},
        {"toolUse":{"toolUseId":")" + mapped + R"(","name":"get_weather","input":{}}}]},
      {"role":"user","content":[
        {"toolResult":{"toolUseId":"call_1","content":[
          {"text":"18C"},{"image":{"format":"gif","source":{"bytes":"R0lGOD=="}}}],
          "status":"error"}},
        {"toolResult":{"toolUseId":")" + mapped +
                                               R"(","content":[]}},
        {"cachePoint":{"type":"default"}},
        {"text":"Thanks"}]}])");
}

TEST(ConverseRequestEncoder, ToolUseIdsKeepTheirShapeOrGetAStableHash) {
  EXPECT_EQ(tool_use_id("tooluse_lAG_zP8QRHmSYOwZzzaCqA"), "tooluse_lAG_zP8QRHmSYOwZzzaCqA");
  EXPECT_EQ(tool_use_id("call.a:b-c"), "call.a:b-c");
  const std::string long_id(100, 'a');
  const std::string mapped = tool_use_id(long_id);
  EXPECT_EQ(mapped.size(), 64u);
  EXPECT_EQ(mapped, tool_use_id(long_id)) << "deterministic";
  EXPECT_NE(tool_use_id("a b"), tool_use_id("a_b"));
  EXPECT_EQ(tool_use_id(""), "");
}

TEST(ConverseRequestEncoder, ReasoningPartsGoBackSignedOrRedacted) {
  ir::Request r = hello();
  ir::ContentPart signed_reasoning;
  signed_reasoning.kind = PartKind::kReasoning;
  signed_reasoning.text = "Let me think.";
  signed_reasoning.signature = "Eu0CCkgI";
  ir::ContentPart unsigned_reasoning;
  unsigned_reasoning.kind = PartKind::kReasoning;
  unsigned_reasoning.text = "Another provider's reasoning.";
  ir::ContentPart redacted;
  redacted.kind = PartKind::kRedactedReasoning;
  redacted.signature = "AAEC";
  r.messages.push_back(
      message(ir::Role::kAssistant, {signed_reasoning, unsigned_reasoning, redacted, text("Hi!")}));
  EncodeStats stats;
  expect_json(encode_ok(r, kClaude, &stats).at("messages").at(1), R"(
      {"role":"assistant","content":[
        {"reasoningContent":{"reasoningText":{"text":"Let me think.","signature":"Eu0CCkgI"}}},
        {"reasoningContent":{"redactedContent":"AAEC"}},
        {"text":"Hi!"}]})");
  EXPECT_EQ(stats.dropped_reasoning, 1u);
}

TEST(ConverseRequestEncoder, CachePointsAfterMarkedPartsWithTheirTtl) {
  ir::Request r;
  ir::ContentPart doc = text("A long document.", true);
  doc.cache_ttl = "1h";
  r.messages.push_back(message(ir::Role::kUser, {doc, text("Summarise it.")}));
  expect_json(encode_ok(r).at("messages"), R"([{"role":"user","content":[
      {"text":"A long document."},{"cachePoint":{"type":"default","ttl":"1h"}},
      {"text":"Summarise it."}]}])");
  r.messages[0].content[0].cache_ttl = "2d";
  EXPECT_EQ(encode_error(r).param(), "messages");
}

TEST(ConverseRequestEncoder, ClaudeThinkingGoesInAdditionalModelRequestFields) {
  ir::Request r = hello();
  r.max_tokens = 1000;
  r.reasoning.enabled = true;
  r.reasoning.budget_tokens = 2000;
  json::object body = encode_ok(r).as_object();
  expect_json(body.at("additionalModelRequestFields"),
              R"({"thinking":{"type":"enabled","budget_tokens":2000}})");
  EXPECT_EQ(body.at("inferenceConfig").at("maxTokens").as_int64(), 3000)
      << "the budget must stay below maxTokens";

  r.reasoning.budget_tokens.reset();
  r.reasoning.effort = "high";
  r.max_tokens = 4000;
  body = encode_ok(r).as_object();
  expect_json(
      body.at("additionalModelRequestFields"),
      R"({"thinking":{"type":"enabled","budget_tokens":3999}})");  // shrunk to fit max_tokens
  EXPECT_EQ(body.at("inferenceConfig").at("maxTokens").as_int64(), 4000);

  r.max_tokens.reset();
  r.reasoning.effort = "low";
  r.top_k = 5;
  body = encode_ok(r).as_object();
  expect_json(body.at("additionalModelRequestFields"),
              R"({"top_k":5,"thinking":{"type":"enabled","budget_tokens":2048}})");
  EXPECT_EQ(body.at("inferenceConfig").at("maxTokens").as_int64(), 2048 + 4096);

  r.reasoning.effort = "";
  expect_json(encode_ok(r).at("additionalModelRequestFields").at("thinking"),
              R"({"type":"adaptive"})");

  r.reasoning.effort = "none";
  EXPECT_FALSE(encode_ok(r).at("additionalModelRequestFields").as_object().contains("thinking"));

  r.reasoning.effort = "extreme";
  EXPECT_EQ(encode_error(r).param(), "reasoning_effort");
  r.reasoning.effort = "medium";
  EXPECT_EQ(encode_error(r, kNova).param(), "reasoning_effort")
      << "other models name their reasoning fields differently; nothing is dropped silently";
}

TEST(ConverseRequestEncoder, StructuredOutput) {
  ir::Request r = hello();
  r.response_format.kind = ir::ResponseFormat::Kind::kJsonSchema;
  r.response_format.name = "answer";
  r.response_format.schema = R"({"type":"object","properties":{"a":{"type":"string"}}})";
  expect_json(encode_ok(r).at("outputConfig"), R"({"textFormat":{"type":"json_schema",
      "structure":{"jsonSchema":{
        "schema":"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}",
        "name":"answer"}}}})");
  r.response_format = {};
  r.response_format.kind = ir::ResponseFormat::Kind::kJsonObject;
  expect_json(encode_ok(r).at("system"),
              R"([{"text":"Respond with a single JSON object and nothing else."}])");
}

TEST(ConverseRequestEncoder, RefusesWhatConverseCannotTake) {
  struct Case {
    const char* what;
    ir::Request request;
    const char* param;
  };
  std::vector<Case> cases;
  cases.push_back({"no messages", ir::Request{}, "messages"});
  ir::Request r = hello();
  r.max_tokens = 0;
  cases.push_back({"max_tokens 0", r, "max_tokens"});
  r = hello();
  r.temperature = 1.5;
  cases.push_back({"temperature above 1", r, "temperature"});
  r = hello();
  r.top_p = -0.1;
  cases.push_back({"top_p below 0", r, "top_p"});
  r = hello();
  r.stop = {"ok", ""};
  cases.push_back({"an empty stop sequence", r, "stop"});
  r = hello();
  r.tools = {tool("has space")};
  cases.push_back({"a tool name Converse refuses", r, "tools[0]"});
  r = hello();
  r.tools = {tool("t", "[1]")};
  cases.push_back({"a schema that is no object", r, "tools[0]"});
  r = hello();
  r.messages.push_back(message(ir::Role::kAssistant, {tool_call("c", "t", "[1]")}));
  cases.push_back({"arguments that are no object", r, "messages"});
  r = hello();
  r.messages.push_back(message(ir::Role::kAssistant, {tool_call("", "t", "{}")}));
  cases.push_back({"a tool call without id", r, "messages"});
  r = hello();
  r.messages.push_back(message(ir::Role::kUser, {tool_result("", {text("x")})}));
  cases.push_back({"a tool result without id", r, "messages"});
  r = hello();
  r.system.push_back(image("iVBO", "image/png"));
  cases.push_back({"an image in the system prompt", r, "system"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Error e = encode_error(c.request);
    EXPECT_EQ(e.kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(e.param(), c.param);
    EXPECT_FALSE(e.message().empty());
  }
}

TEST(ConverseRequestEncoder, TheRegistryFindsTheCodec) {
  const UpstreamCodec* codec = find_upstream(kConverseProtocol, Operation::kChat);
  ASSERT_NE(codec, nullptr);
  EXPECT_EQ(codec->protocol(), "bedrock_converse");
  EXPECT_EQ(find_upstream(kConverseProtocol, Operation::kEmbeddings), nullptr);
  EncodeTarget target;
  target.model = kClaude;
  target.stream = true;
  auto body = codec->encode_request(hello(), target);
  ASSERT_TRUE(body) << body.error().message();
  expect_json(json::parse(*body), R"({"messages":[{"role":"user","content":[{"text":"Hello"}]}]})");
  auto answer = codec->decode_response(
      R"({"output":{"message":{"role":"assistant","content":[{"text":"Hi"}]}},)"
      R"("stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}})");
  ASSERT_TRUE(answer) << answer.error().message();
  EXPECT_EQ(answer->content.at(0).text, "Hi");
}

}  // namespace
}  // namespace sluice::protocol::bedrock_converse
