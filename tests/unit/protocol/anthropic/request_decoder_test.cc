#include "protocol/anthropic/request_decoder.h"

#include <string>

#include <gtest/gtest.h>

namespace sluice::protocol::anthropic {
namespace {

constexpr const char* kFull = R"({
  "model": "claude-sonnet-4-5",
  "max_tokens": 1024,
  "system": [
    {"type": "text", "text": "You are terse."},
    {"type": "text", "text": "Big cached context", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
  ],
  "messages": [
    {"role": "user", "content": "What's the weather?"},
    {"role": "assistant", "content": [
      {"type": "thinking", "thinking": "Need the tool.", "signature": "sig=="},
      {"type": "redacted_thinking", "data": "opaque"},
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_01A", "name": "get_weather",
       "input": {"city": "Paris", "days": 2, "ratio": 1.5, "tags": ["a", "b"], "x": null, "ok": true}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_01A", "is_error": true,
       "content": [{"type": "text", "text": "timeout"},
                   {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}],
       "cache_control": {"type": "ephemeral"}},
      {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "plain"},
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
      {"type": "text", "text": "Thanks", "citations": null}
    ]}
  ],
  "tools": [
    {"name": "get_weather", "description": "Weather by city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
     "cache_control": {"type": "ephemeral"}},
    {"type": "custom", "name": "noop", "input_schema": {"type": "object"}}
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

TEST(DecodeRequest, DecodesEveryFieldAndBlockType) {
  auto r = decode_request(kFull);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const ir::Request& req = *r;
  EXPECT_EQ(req.model, "claude-sonnet-4-5");
  EXPECT_EQ(req.max_tokens, 1024u);
  ASSERT_EQ(req.system.size(), 2u);
  EXPECT_EQ(req.system[0].text, "You are terse.");
  EXPECT_FALSE(req.system[0].cache_breakpoint);
  EXPECT_TRUE(req.system[1].cache_breakpoint);
  EXPECT_EQ(req.system[1].cache_ttl, "1h");

  ASSERT_EQ(req.messages.size(), 3u);
  EXPECT_EQ(req.messages[0].role, ir::Role::kUser);
  ASSERT_EQ(req.messages[0].content.size(), 1u);
  EXPECT_EQ(req.messages[0].content[0].kind, ir::PartKind::kText);
  EXPECT_EQ(req.messages[0].content[0].text, "What's the weather?");

  const auto& a = req.messages[1];
  EXPECT_EQ(a.role, ir::Role::kAssistant);
  ASSERT_EQ(a.content.size(), 4u);
  EXPECT_EQ(a.content[0].kind, ir::PartKind::kReasoning);
  EXPECT_EQ(a.content[0].text, "Need the tool.");
  EXPECT_EQ(a.content[0].signature, "sig==");
  EXPECT_EQ(a.content[1].kind, ir::PartKind::kRedactedReasoning);
  EXPECT_EQ(a.content[1].signature, "opaque");
  EXPECT_EQ(a.content[2].kind, ir::PartKind::kText);
  EXPECT_EQ(a.content[3].kind, ir::PartKind::kToolCall);
  EXPECT_EQ(a.content[3].id, "toolu_01A");
  EXPECT_EQ(a.content[3].name, "get_weather");
  EXPECT_EQ(a.content[3].arguments,
            R"({"city":"Paris","days":2,"ratio":1.5,"tags":["a","b"],"x":null,"ok":true})");

  const auto& u = req.messages[2];
  EXPECT_EQ(u.role, ir::Role::kUser);
  ASSERT_EQ(u.content.size(), 4u);
  const ir::ContentPart& tr = u.content[0];
  EXPECT_EQ(tr.kind, ir::PartKind::kToolResult);
  EXPECT_EQ(tr.id, "toolu_01A");
  EXPECT_TRUE(tr.is_error);
  EXPECT_TRUE(tr.cache_breakpoint);
  EXPECT_EQ(tr.cache_ttl, "");
  ASSERT_EQ(tr.parts.size(), 2u);
  EXPECT_EQ(tr.parts[0].text, "timeout");
  EXPECT_EQ(tr.parts[1].kind, ir::PartKind::kImage);
  EXPECT_TRUE(tr.parts[1].image_is_url);
  EXPECT_EQ(tr.parts[1].source, "https://x/y.png");
  EXPECT_EQ(u.content[1].kind, ir::PartKind::kToolResult);
  EXPECT_FALSE(u.content[1].is_error);
  ASSERT_EQ(u.content[1].parts.size(), 1u);
  EXPECT_EQ(u.content[1].parts[0].text, "plain");
  EXPECT_EQ(u.content[2].kind, ir::PartKind::kImage);
  EXPECT_FALSE(u.content[2].image_is_url);
  EXPECT_EQ(u.content[2].media_type, "image/png");
  EXPECT_EQ(u.content[2].source, "iVBORw0KGgo=");
  EXPECT_EQ(u.content[3].text, "Thanks");

  ASSERT_EQ(req.tools.size(), 2u);
  EXPECT_EQ(req.tools[0].name, "get_weather");
  EXPECT_EQ(req.tools[0].description, "Weather by city");
  EXPECT_EQ(req.tools[0].parameters,
            R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})");
  EXPECT_TRUE(req.tools[0].cache_breakpoint);
  EXPECT_EQ(req.tools[1].name, "noop");
  EXPECT_FALSE(req.tools[1].cache_breakpoint);

  EXPECT_EQ(req.tool_choice.mode, ir::ToolChoiceMode::kRequired);
  EXPECT_TRUE(req.tool_choice.disable_parallel_tool_use);
  EXPECT_EQ(req.temperature, 0.5);
  EXPECT_EQ(req.top_p, 0.9);
  EXPECT_EQ(req.top_k, 40u);
  EXPECT_EQ(req.stop, (std::vector<std::string>{"END", "STOP"}));
  EXPECT_TRUE(req.stream);
  EXPECT_EQ(req.user, "user-42");
  EXPECT_TRUE(req.reasoning.enabled);
  EXPECT_EQ(req.reasoning.budget_tokens, 2048u);
}

std::string with(const std::string& extra) {
  return R"({"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}])" + extra +
         "}";
}

TEST(DecodeRequest, MinimalRequestHasDefaults) {
  auto r = decode_request(with(""));
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->stream);
  EXPECT_TRUE(r->system.empty());
  EXPECT_EQ(r->tool_choice.mode, ir::ToolChoiceMode::kUnset);
  EXPECT_FALSE(r->temperature.has_value());
  EXPECT_FALSE(r->reasoning.enabled);
  EXPECT_EQ(r->user, "");
}

TEST(DecodeRequest, SystemAsString) {
  auto r = decode_request(with(R"(,"system":"Be brief")"));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->system.size(), 1u);
  EXPECT_EQ(r->system[0].kind, ir::PartKind::kText);
  EXPECT_EQ(r->system[0].text, "Be brief");
}

TEST(DecodeRequest, ToolChoiceVariants) {
  struct Case {
    const char* json;
    ir::ToolChoiceMode mode;
    const char* name;
    bool no_parallel;
  };
  const Case cases[] = {
      {R"({"type":"auto"})", ir::ToolChoiceMode::kAuto, "", false},
      {R"({"type":"any"})", ir::ToolChoiceMode::kRequired, "", false},
      {R"({"type":"none"})", ir::ToolChoiceMode::kNone, "", false},
      {R"({"type":"tool","name":"get_weather","disable_parallel_tool_use":true})",
       ir::ToolChoiceMode::kNamed, "get_weather", true},
      {R"({"type":"auto","disable_parallel_tool_use":false})", ir::ToolChoiceMode::kAuto, "",
       false},
  };
  for (const Case& c : cases) {
    auto r = decode_request(with(std::string(R"(,"tool_choice":)") + c.json));
    ASSERT_TRUE(r.has_value()) << c.json;
    EXPECT_EQ(r->tool_choice.mode, c.mode) << c.json;
    EXPECT_EQ(r->tool_choice.name, c.name) << c.json;
    EXPECT_EQ(r->tool_choice.disable_parallel_tool_use, c.no_parallel) << c.json;
  }
}

TEST(DecodeRequest, ThinkingVariants) {
  auto disabled = decode_request(with(R"(,"thinking":{"type":"disabled"})"));
  ASSERT_TRUE(disabled.has_value());
  EXPECT_FALSE(disabled->reasoning.enabled);
  EXPECT_FALSE(disabled->reasoning.budget_tokens.has_value());

  auto adaptive = decode_request(with(R"(,"thinking":{"type":"adaptive"})"));
  ASSERT_TRUE(adaptive.has_value());
  EXPECT_TRUE(adaptive->reasoning.enabled);
  EXPECT_FALSE(adaptive->reasoning.budget_tokens.has_value());

  auto integral_float =
      decode_request(with(R"(,"thinking":{"type":"enabled","budget_tokens":1024.0})"));
  ASSERT_TRUE(integral_float.has_value());
  EXPECT_EQ(integral_float->reasoning.budget_tokens, 1024u);
}

TEST(DecodeRequest, MetadataWithoutUserAndNullOptionals) {
  auto r = decode_request(with(R"(,"metadata":{},"temperature":null,"system":null,"tools":null)"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->user, "");
  EXPECT_FALSE(r->temperature.has_value());
}

TEST(DecodeRequest, EmptyFinalAssistantMessageIsAPrefill) {
  auto r = decode_request(
      R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":""}]})");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->messages[1].content.empty());
}

TEST(DecodeRequest, UnknownTopLevelFieldsAreIgnoredAndCountedOrRejectedWhenStrict) {
  const std::string body = with(R"(,"context_management":{"edits":[]},"service_tier":"auto")");
  DecodeStats stats;
  auto lax = decode_request(body, {}, &stats);
  ASSERT_TRUE(lax.has_value());
  EXPECT_EQ(stats.ignored_fields, 2u);

  auto strict = decode_request(body, DecodeOptions{.strict = true});
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.error().param(), "context_management");
  EXPECT_EQ(strict.error().message(), "context_management: Extra inputs are not permitted");
}

struct BadCase {
  std::string body;
  const char* param;
  const char* message;
};

class DecodeRequestRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(DecodeRequestRejects, WithBadRequestParamAndMessage) {
  const BadCase& c = GetParam();
  auto r = decode_request(c.body);
  ASSERT_FALSE(r.has_value()) << c.body;
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(r.error().http_status(), 400);
  EXPECT_EQ(r.error().param(), c.param) << c.body;
  EXPECT_EQ(r.error().message(), c.message) << c.body;
}

std::string msgs(const std::string& messages) {
  return R"({"model":"m","max_tokens":10,"messages":)" + messages + "}";
}

std::string block(const std::string& b) {
  return msgs(R"([{"role":"user","content":[)" + b + "]}]");
}

INSTANTIATE_TEST_SUITE_P(
    Fields, DecodeRequestRejects,
    ::testing::Values(
        BadCase{"not json", "", "request body is not valid JSON: syntax error"},
        BadCase{"[1,2]", "", "request body must be a JSON object"},
        BadCase{R"({"model":"m",)", "", "request body is not valid JSON: incomplete JSON"},
        BadCase{std::string(70, '[') + std::string(70, ']'), "",
                "request body nests deeper than 64 levels"},
        BadCase{R"({"max_tokens":1,"messages":[]})", "model", "model: Field required"},
        BadCase{R"({"model":"","max_tokens":1})", "model",
                "model: String should have at least 1 character"},
        BadCase{R"({"model":7,"max_tokens":1})", "model", "model: Input should be a valid string"},
        BadCase{R"({"model":"m","messages":[{"role":"user","content":"x"}]})", "max_tokens",
                "max_tokens: Field required"},
        BadCase{R"({"model":"m","max_tokens":"10"})", "max_tokens",
                "max_tokens: Input should be a valid integer"},
        BadCase{R"({"model":"m","max_tokens":1.5})", "max_tokens",
                "max_tokens: Input should be a valid integer"},
        BadCase{R"({"model":"m","max_tokens":0})", "max_tokens",
                "max_tokens: Input should be greater than or equal to 1"},
        BadCase{R"({"model":"m","max_tokens":99999999999})", "max_tokens",
                "max_tokens: Input should be less than or equal to 4294967295"},
        BadCase{R"({"model":"m","max_tokens":10})", "messages", "messages: Field required"},
        BadCase{msgs("{}"), "messages", "messages: Input should be a valid list"},
        BadCase{msgs("[]"), "messages", "messages: at least one message is required"},
        BadCase{msgs("[1]"), "messages.0", "messages.0: Input should be a valid dictionary"},
        BadCase{msgs(R"([{"content":"x"}])"), "messages.0.role", "messages.0.role: Field required"},
        BadCase{msgs(R"([{"role":"tool","content":"x"}])"), "messages.0.role",
                "messages.0.role: Input should be 'user', 'assistant' or 'system'"},
        BadCase{
            msgs(
                R"([{"role":"system","content":[{"type":"image","source":{"type":"url","url":"u"}}]}])"),
            "messages.0.content.0.type",
            "messages.0.content.0.type: Input tag 'image' found using 'type' does not match any of "
            "the expected tags: 'text'"},
        BadCase{
            R"({"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}],"output_config":{"effort":3}})",
            "output_config.effort", "output_config.effort: Input should be a valid string"},
        BadCase{msgs(R"([{"role":"user"}])"), "messages.0.content",
                "messages.0.content: Field required"},
        BadCase{msgs(R"([{"role":"user","content":5}])"), "messages.0.content",
                "messages.0.content: Input should be a valid list"},
        BadCase{msgs(R"([{"role":"user","content":""},{"role":"assistant","content":"a"}])"),
                "messages.0",
                "messages.0: all messages must have non-empty content except for the optional "
                "final assistant message"},
        BadCase{block(R"({"text":"x"})"), "messages.0.content.0.type",
                "messages.0.content.0.type: Field required"},
        BadCase{block(R"({"type":"video"})"), "messages.0.content.0.type",
                "messages.0.content.0.type: Input tag 'video' found using 'type' does not match "
                "any of the expected tags: 'text', 'image', 'tool_use', 'tool_result', "
                "'thinking', 'redacted_thinking'"},
        BadCase{block(R"({"type":"document","source":{}})"), "messages.0.content.0.type",
                "messages.0.content.0.type: 'document' is not supported by this gateway"},
        BadCase{block(R"({"type":"text"})"), "messages.0.content.0.text",
                "messages.0.content.0.text: Field required"},
        BadCase{block(R"({"type":"text","text":1})"), "messages.0.content.0.text",
                "messages.0.content.0.text: Input should be a valid string"},
        BadCase{block(R"({"type":"text","text":"x","cache_control":{"type":"forever"}})"),
                "messages.0.content.0.cache_control.type",
                "messages.0.content.0.cache_control.type: Input tag 'forever' found using "
                "'type' does not match any of the expected tags: 'ephemeral'"},
        BadCase{
            block(R"({"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"2h"}})"),
            "messages.0.content.0.cache_control.ttl",
            "messages.0.content.0.cache_control.ttl: Input should be '5m' or '1h'"},
        BadCase{block(R"({"type":"image"})"), "messages.0.content.0.source",
                "messages.0.content.0.source: Field required"},
        BadCase{
            block(
                R"({"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"x"}})"),
            "messages.0.content.0.source.media_type",
            "messages.0.content.0.source.media_type: Input should be 'image/jpeg', "
            "'image/png', 'image/gif' or 'image/webp'"},
        BadCase{block(R"({"type":"image","source":{"type":"base64","media_type":"image/png"}})"),
                "messages.0.content.0.source.data",
                "messages.0.content.0.source.data: Field required"},
        BadCase{block(R"({"type":"image","source":{"type":"url"}})"),
                "messages.0.content.0.source.url",
                "messages.0.content.0.source.url: Field required"},
        BadCase{block(R"({"type":"image","source":{"type":"file","file_id":"f"}})"),
                "messages.0.content.0.source.type",
                "messages.0.content.0.source.type: 'file' is not supported by this gateway"},
        BadCase{block(R"({"type":"tool_use","id":"t","name":"n","input":"{}"})"),
                "messages.0.content.0.input",
                "messages.0.content.0.input: Input should be a valid dictionary"},
        BadCase{block(R"({"type":"tool_use","id":"t","input":{}})"), "messages.0.content.0.name",
                "messages.0.content.0.name: Field required"},
        BadCase{block(R"({"type":"tool_result","content":"x"})"),
                "messages.0.content.0.tool_use_id",
                "messages.0.content.0.tool_use_id: Field required"},
        BadCase{block(R"({"type":"tool_result","tool_use_id":"t","is_error":"yes"})"),
                "messages.0.content.0.is_error",
                "messages.0.content.0.is_error: Input should be a valid boolean"},
        BadCase{
            block(R"({"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_use"}]})"),
            "messages.0.content.0.content.0.type",
            "messages.0.content.0.content.0.type: Input tag 'tool_use' found using 'type' "
            "does not match any of the expected tags: 'text', 'image'"},
        BadCase{block(R"({"type":"thinking","thinking":"x"})"), "messages.0.content.0.signature",
                "messages.0.content.0.signature: Field required"},
        BadCase{block(R"({"type":"redacted_thinking"})"), "messages.0.content.0.data",
                "messages.0.content.0.data: Field required"},
        BadCase{with(R"(,"system":5)"), "system", "system: Input should be a valid list"},
        BadCase{with(R"(,"system":[{"type":"image","source":{}}])"), "system.0.type",
                "system.0.type: Input tag 'image' found using 'type' does not match any of the "
                "expected tags: 'text'"},
        BadCase{with(R"(,"tools":{})"), "tools", "tools: Input should be a valid list"},
        BadCase{with(R"(,"tools":[{"input_schema":{}}])"), "tools.0.name",
                "tools.0.name: Field required"},
        BadCase{with(R"(,"tools":[{"name":"n"}])"), "tools.0.input_schema",
                "tools.0.input_schema: Field required"},
        BadCase{with(R"(,"tools":[{"name":"n","input_schema":[]}])"), "tools.0.input_schema",
                "tools.0.input_schema: Input should be a valid dictionary"},
        BadCase{with(R"(,"tools":[{"type":"web_search_20250305","name":"web_search"}])"),
                "tools.0.type",
                "tools.0.type: 'web_search_20250305' is not supported by this gateway"},
        BadCase{with(R"(,"tool_choice":"auto")"), "tool_choice",
                "tool_choice: Input should be a valid dictionary"},
        BadCase{with(R"(,"tool_choice":{"type":"required"})"), "tool_choice.type",
                "tool_choice.type: Input tag 'required' found using 'type' does not match any "
                "of the expected tags: 'auto', 'any', 'tool', 'none'"},
        BadCase{with(R"(,"tool_choice":{"type":"tool"})"), "tool_choice.tool.name",
                "tool_choice.tool.name: Field required"},
        BadCase{with(R"(,"tool_choice":{"type":"any","disable_parallel_tool_use":1})"),
                "tool_choice.any.disable_parallel_tool_use",
                "tool_choice.any.disable_parallel_tool_use: Input should be a valid boolean"},
        BadCase{with(R"(,"temperature":"hot")"), "temperature",
                "temperature: Input should be a valid number"},
        BadCase{with(R"(,"temperature":1.5)"), "temperature",
                "temperature: Input should be less than or equal to 1"},
        BadCase{with(R"(,"top_p":-0.1)"), "top_p",
                "top_p: Input should be greater than or equal to 0"},
        BadCase{with(R"(,"top_k":2.5)"), "top_k", "top_k: Input should be a valid integer"},
        BadCase{with(R"(,"stop_sequences":"END")"), "stop_sequences",
                "stop_sequences: Input should be a valid list"},
        BadCase{with(R"(,"stop_sequences":["a",1])"), "stop_sequences.1",
                "stop_sequences.1: Input should be a valid string"},
        BadCase{with(R"(,"stream":"yes")"), "stream", "stream: Input should be a valid boolean"},
        BadCase{with(R"(,"metadata":[])"), "metadata",
                "metadata: Input should be a valid dictionary"},
        BadCase{with(R"(,"metadata":{"user_id":5})"), "metadata.user_id",
                "metadata.user_id: Input should be a valid string"},
        BadCase{with(R"(,"thinking":{"type":"enabled"})"), "thinking.enabled.budget_tokens",
                "thinking.enabled.budget_tokens: Field required"},
        BadCase{with(R"(,"thinking":{"type":"enabled","budget_tokens":100})"),
                "thinking.enabled.budget_tokens",
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"},
        BadCase{with(R"(,"thinking":{"type":"on"})"), "thinking.type",
                "thinking.type: Input tag 'on' found using 'type' does not match any of the "
                "expected tags: 'enabled', 'disabled', 'adaptive'"}));

TEST(DecodeRequest, NeverThrowsOnTruncatedBodies) {
  const std::string body = kFull;
  for (std::size_t n = 0; n < body.size(); ++n) {
    auto r = decode_request(std::string_view(body).substr(0, n));
    EXPECT_FALSE(r.has_value()) << n;
  }
}

// What Claude Code sends today is accepted and mapped (issue: protocols): system entries inside
// `messages` and output_config.effort.
TEST(DecodeRequest, ClaudeCodeSystemMessagesAndEffort) {
  DecodeStats stats;
  auto r = decode_request(
      R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"a"},)"
      R"({"role":"system","content":"tools changed"},{"role":"assistant","content":"b"},)"
      R"({"role":"system","content":[{"type":"text","text":"again"}]},{"role":"user","content":"c"}],)"
      R"("output_config":{"effort":"high","task_budget":{"total":1}}})",
      {}, &stats);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->messages.size(), 5u);
  EXPECT_EQ(r->messages[1].role, ir::Role::kSystem);
  EXPECT_EQ(r->messages[1].content.at(0).text, "tools changed");
  EXPECT_EQ(r->messages[3].role, ir::Role::kSystem);
  EXPECT_EQ(r->messages[3].content.at(0).text, "again");
  EXPECT_EQ(r->reasoning.effort, "high");
  EXPECT_EQ(stats.ignored_fields, 1u) << "output_config.task_budget has no place in the IR";
  DecodeOptions strict;
  strict.strict = true;
  auto rejected = decode_request(
      R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"}],"output_config":{"task_budget":{}}})",
      strict);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().param(), "output_config.task_budget");
}

// Structured output: output_config.format (GA) and the beta's top-level output_format.
TEST(DecodeRequest, OutputFormatIsTheResponseFormat) {
  const std::string base =
      R"({"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"}],)";
  for (
      std::string_view field :
      {R"("output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}})",
       R"("output_format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}})"}) {
    DecodeStats stats;
    auto r = decode_request(base + std::string(field), {}, &stats);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(r->response_format.kind, ir::ResponseFormat::Kind::kJsonSchema);
    EXPECT_EQ(r->response_format.schema,
              R"({"type":"object","properties":{"a":{"type":"string"}}})");
    EXPECT_TRUE(r->response_format.name.empty());
    EXPECT_EQ(stats.ignored_fields, 0u) << field;
  }
  struct Case {
    std::string_view field;
    std::string_view param;
    std::string_view message;
  };
  const Case cases[] = {
      {R"("output_config":{"format":{"type":"json_object"}}})", "output_config.format.type",
       "output_config.format.type: Input tag 'json_object' found using 'type' does not match any "
       "of the expected tags: 'json_schema'"},
      {R"("output_config":{"format":{"type":"json_schema"}}})", "output_config.format.schema",
       "output_config.format.schema: Field required"},
      {R"("output_config":{"format":{"type":"json_schema","schema":[]}}})",
       "output_config.format.schema",
       "output_config.format.schema: Input should be a valid dictionary"},
      {R"("output_config":{"format":{"schema":{}}}})", "output_config.format.type",
       "output_config.format.type: Field required"},
      {R"("output_format":{"type":"json_schema","schema":{},"name":"x"}})", "output_format.name",
       "output_format.name: Extra inputs are not permitted"},
      {R"("output_format":{"type":"json_schema","schema":{}},"output_config":{"format":{"type":"json_schema","schema":{}}}})",
       "output_format", ""},
  };
  for (const Case& c : cases) {
    auto r = decode_request(base + std::string(c.field));
    ASSERT_FALSE(r.has_value()) << c.field;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(r.error().param(), c.param) << r.error().message();
    if (!c.message.empty()) {
      EXPECT_EQ(r.error().message(), c.message);
    }
  }
}

}  // namespace
}  // namespace sluice::protocol::anthropic
