#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "protocol/openai_responses/request_decoder.h"
#include "protocol/openai_responses/request_encoder.h"

namespace sluice::protocol::openai_responses {
namespace {
namespace json = boost::json;
using ir::PartKind;

ir::Request decode_ok(std::string_view body, DecodeStats* stats = nullptr) {
  auto r = decode_request(body, stats);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? *r : ir::Request{};
}

Error decode_error(std::string_view body) {
  auto r = decode_request(body);
  EXPECT_FALSE(r) << "decoded: " << body;
  return r ? Error() : r.error();
}

std::string encode_ok(const ir::Request& req, bool stream = false, EncodeStats* stats = nullptr) {
  auto r = encode_request(req, "up-model", stream, stats);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? *r : std::string();
}

// A conversation with every input item kind the IR carries.
constexpr std::string_view kConversation = R"({
  "model": "gpt-x",
  "instructions": "Be brief.",
  "input": [
    {"role": "developer", "content": "Use metric units."},
    {"type": "message", "role": "user", "content": [
      {"type": "input_text", "text": "Weather in Paris?"},
      {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "low"},
      {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look it up."}],
     "encrypted_content": "gAAA-enc"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
     "arguments": "{\"city\":\"Paris\"}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18C, sunny"},
    {"role": "user", "content": "Thanks!"},
    {"role": "system", "content": "Later system note."}
  ],
  "tools": [{"type": "function", "name": "weather", "description": "Current weather",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
             "strict": true}],
  "tool_choice": {"type": "function", "name": "weather"},
  "parallel_tool_calls": false,
  "max_output_tokens": 256,
  "temperature": 0.5,
  "top_p": 0.9,
  "reasoning": {"effort": "low", "summary": "auto"},
  "stream": true,
  "store": false,
  "user": "u-1",
  "metadata": {"k": "v"},
  "text": {"format": {"type": "text"}},
  "previous_response_id": null
})";

TEST(ResponsesRequest, DecodesEveryItemKind) {
  DecodeStats stats;
  const ir::Request r = decode_ok(kConversation, &stats);
  EXPECT_EQ(r.model, "gpt-x");
  ASSERT_EQ(r.system.size(), 2u);
  EXPECT_EQ(r.system[0].text, "Be brief.");
  EXPECT_EQ(r.system[1].text, "Use metric units.");
  ASSERT_EQ(r.messages.size(), 5u);

  const ir::Message& user = r.messages[0];
  EXPECT_EQ(user.role, ir::Role::kUser);
  ASSERT_EQ(user.content.size(), 3u);
  EXPECT_EQ(user.content[0].text, "Weather in Paris?");
  EXPECT_EQ(user.content[1].kind, PartKind::kImage);
  EXPECT_TRUE(user.content[1].image_is_url);
  EXPECT_EQ(user.content[1].source, "https://example.com/a.png");
  EXPECT_EQ(user.content[1].detail, "low");
  EXPECT_FALSE(user.content[2].image_is_url);
  EXPECT_EQ(user.content[2].media_type, "image/png");
  EXPECT_EQ(user.content[2].source, "AAAA");

  // Reasoning, text and the call share one assistant turn.
  const ir::Message& assistant = r.messages[1];
  EXPECT_EQ(assistant.role, ir::Role::kAssistant);
  ASSERT_EQ(assistant.content.size(), 3u);
  EXPECT_EQ(assistant.content[0].kind, PartKind::kReasoning);
  EXPECT_EQ(assistant.content[0].text, "Look it up.");
  EXPECT_EQ(assistant.content[0].id, "rs_1");
  EXPECT_EQ(assistant.content[0].signature, "gAAA-enc");
  EXPECT_EQ(assistant.content[1].text, "Checking.");
  EXPECT_EQ(assistant.content[2].kind, PartKind::kToolCall);
  EXPECT_EQ(assistant.content[2].id, "call_1");  // call_id, not the item id
  EXPECT_EQ(assistant.content[2].name, "weather");
  EXPECT_EQ(assistant.content[2].arguments, R"({"city":"Paris"})");

  const ir::Message& results = r.messages[2];
  EXPECT_EQ(results.role, ir::Role::kUser);
  ASSERT_EQ(results.content.size(), 1u);
  EXPECT_EQ(results.content[0].kind, PartKind::kToolResult);
  EXPECT_EQ(results.content[0].id, "call_1");
  ASSERT_EQ(results.content[0].parts.size(), 1u);
  EXPECT_EQ(results.content[0].parts[0].text, "18C, sunny");

  EXPECT_EQ(r.messages[3].content[0].text, "Thanks!");
  EXPECT_EQ(r.messages[4].role, ir::Role::kSystem);

  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].name, "weather");
  EXPECT_EQ(r.tools[0].description, "Current weather");
  EXPECT_EQ(json::parse(r.tools[0].parameters),
            json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"));
  EXPECT_EQ(r.tool_choice.mode, ir::ToolChoiceMode::kNamed);
  EXPECT_EQ(r.tool_choice.name, "weather");
  EXPECT_TRUE(r.tool_choice.disable_parallel_tool_use);
  EXPECT_EQ(r.max_tokens, 256u);
  EXPECT_EQ(r.temperature, 0.5);
  EXPECT_EQ(r.top_p, 0.9);
  EXPECT_TRUE(r.reasoning.enabled);
  EXPECT_EQ(r.reasoning.effort, "low");
  EXPECT_EQ(r.reasoning.summary, "auto");
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(r.user, "u-1");
  EXPECT_EQ(stats.ignored_fields, 1u);  // metadata (text.format "text" is mapped)
  EXPECT_EQ(r.response_format.kind, ir::ResponseFormat::Kind::kText);
}

TEST(ResponsesRequest, StringInputIsOneUserMessage) {
  const ir::Request r = decode_ok(R"({"model":"m","input":"hi"})");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].role, ir::Role::kUser);
  EXPECT_EQ(r.messages[0].content[0].text, "hi");
  EXPECT_FALSE(r.reasoning.enabled);
  EXPECT_FALSE(r.max_tokens);
}

TEST(ResponsesRequest, ReasoningItemsFollowOneRule) {
  const ir::Request r = decode_ok(R"({"model":"m","input":[
    {"type":"reasoning","id":"rs_a","summary":[]},
    {"type":"reasoning","id":"rs_b","summary":[],"encrypted_content":"ENC"},
    {"type":"reasoning","id":"rs_c","summary":[{"type":"summary_text","text":"one"},
                                               {"type":"summary_text","text":"two"}]},
    {"role":"user","content":"next"}]})");
  const auto& parts = r.messages.at(0).content;
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].kind, PartKind::kReasoning);  // no summary, no encryption: an empty marker
  EXPECT_EQ(parts[0].text, "");
  EXPECT_EQ(parts[1].kind, PartKind::kRedactedReasoning);
  EXPECT_EQ(parts[1].signature, "ENC");
  EXPECT_EQ(parts[1].id, "rs_b");
  EXPECT_EQ(parts[2].text, "one");
  EXPECT_EQ(parts[3].text, "two");
  EXPECT_EQ(parts[3].id, "rs_c");
}

TEST(ResponsesRequest, ToolResultsWithContentParts) {
  const ir::Request r = decode_ok(R"({"model":"m","input":[
    {"type":"function_call_output","call_id":"a","output":[{"type":"input_text","text":"x"},
      {"type":"input_image","image_url":"https://e/x.png"}]},
    {"type":"function_call_output","call_id":"b","output":"y"}]})");
  ASSERT_EQ(r.messages.size(), 1u);  // consecutive outputs share a message
  ASSERT_EQ(r.messages[0].content.size(), 2u);
  EXPECT_EQ(r.messages[0].content[0].parts.size(), 2u);
  EXPECT_EQ(r.messages[0].content[0].parts[1].kind, PartKind::kImage);
  EXPECT_EQ(r.messages[0].content[1].id, "b");
}

TEST(ResponsesRequest, ToolChoiceStrings) {
  for (auto [text, mode] :
       {std::pair{"auto", ir::ToolChoiceMode::kAuto}, std::pair{"none", ir::ToolChoiceMode::kNone},
        std::pair{"required", ir::ToolChoiceMode::kRequired}}) {
    const ir::Request r =
        decode_ok(std::string(R"({"model":"m","input":"x","tool_choice":")") + text + "\"}");
    EXPECT_EQ(r.tool_choice.mode, mode);
  }
}

TEST(ResponsesRequest, ErrorsNameTheField) {
  struct Case {
    std::string_view body;
    std::string_view param;
  };
  for (
      const Case& c : {
          Case{R"([1])", ""},
          Case{R"({"input":"x"})", "model"},
          Case{R"({"model":"m"})", "input"},
          Case{R"({"model":"m","input":42})", "input"},
          Case{R"({"model":"m","input":[{"type":"web_search_call","id":"ws"}]})", "input[0].type"},
          Case{R"({"model":"m","input":[{"type":"item_reference","id":"x"}]})", "input[0].type"},
          Case{
              R"({"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]})",
              "input[0].content[0].type"},
          Case{
              R"({"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]})",
              "input[0].content[0].image_url"},
          Case{R"({"model":"m","input":[{"role":"robot","content":"x"}]})", "input[0].role"},
          Case{R"({"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}]})",
               "input[0].arguments"},
          Case{R"({"model":"m","input":[{"type":"function_call_output","output":"x"}]})",
               "input[0].call_id"},
          Case{R"({"model":"m","input":[{"type":"reasoning","id":7,"summary":[]}]})",
               "input[0].id"},
          Case{R"({"model":"m","input":[{"type":"reasoning","id":"","summary":[]}]})",
               "input[0].id"},
          Case{R"({"model":"m","input":[{"type":"reasoning","id":"r","summary":"x"}]})",
               "input[0]"},
          Case{R"({"model":"m","input":"x","tools":[{"type":"computer_use_preview"}]})",
               "tools[0].type"},
          Case{R"({"model":"m","input":"x","tools":[{"type":"function"}]})", "tools[0].name"},
          Case{R"({"model":"m","input":"x","tool_choice":"sometimes"})", "tool_choice"},
          Case{R"({"model":"m","input":"x","tool_choice":{"type":"file_search"}})", "tool_choice"},
          Case{R"({"model":"m","input":"x","max_output_tokens":-1})", "max_output_tokens"},
          Case{R"({"model":"m","input":"x","temperature":"hot"})", "temperature"},
          // Boost.JSON reads these as infinity and NaN (found by responses_request_fuzz): not
          // JSON a request can carry ("exponent overflow"), wherever they are.
          Case{R"({"model":"m","input":"x","temperature":1e999})", ""},
          Case{R"({"model":"m","input":"x","top_p":0e99999})", ""},
          Case{R"({"model":"m","input":"x","tools":[{"type":"function","name":"f",
                  "parameters":{"type":"object","maximum":-1e999}}]})",
               ""},
          Case{R"({"model":"m","input":"x","reasoning":{"effort":1}})", "reasoning.effort"},
          Case{R"({"model":"m","input":"x","stream":"yes"})", "stream"},
          Case{R"({"model":"m","input":"x","store":1})", "store"},
          Case{R"({"model":"m","input":"x","previous_response_id":3})", "previous_response_id"},
          Case{R"({"model":"m","input":"x","instructions":["a"]})", "instructions"},
      }) {
    SCOPED_TRACE(c.body);
    const Error e = decode_error(c.body);
    EXPECT_EQ(e.kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(e.param(), c.param) << e.message();
  }
  EXPECT_EQ(decode_error(R"({"input":"x"})").message(), "Missing required parameter: 'model'.");
  EXPECT_EQ(decode_error(R"({"model":"m","input":42})").message(),
            "Invalid type for 'input': expected a string or an array of input items.");
}

TEST(ResponsesRequest, EncodesTheIr) {
  const ir::Request r = decode_ok(kConversation);
  EncodeStats stats;
  const json::value body = json::parse(encode_ok(r, /*stream=*/true, &stats));
  EXPECT_EQ(body.at("model").as_string(), "up-model");
  // Two system parts: a leading system message rather than instructions.
  EXPECT_FALSE(body.as_object().contains("instructions"));
  const json::array& input = body.at("input").as_array();
  ASSERT_EQ(input.size(), 8u);
  EXPECT_EQ(input[0],
            json::parse(R"({"role":"system","content":[{"type":"input_text","text":"Be brief."},
                                     {"type":"input_text","text":"Use metric units."}]})"));
  EXPECT_EQ(input[1].at("content").as_array().size(), 3u);
  EXPECT_EQ(input[1].at("content").at(2).at("image_url").as_string(), "data:image/png;base64,AAAA");
  EXPECT_EQ(input[2], json::parse(R"({"type":"reasoning","id":"rs_1","summary":[
      {"type":"summary_text","text":"Look it up."}],"encrypted_content":"gAAA-enc"})"));
  EXPECT_EQ(input[3], json::parse(R"({"role":"assistant","content":"Checking."})"));
  EXPECT_EQ(input[4], json::parse(R"({"type":"function_call","call_id":"call_1","name":"weather",
                                     "arguments":"{\"city\":\"Paris\"}"})"));
  EXPECT_EQ(input[5], json::parse(R"({"type":"function_call_output","call_id":"call_1",
                                     "output":"18C, sunny"})"));
  EXPECT_EQ(input[7].at("role").as_string(), "system");
  EXPECT_EQ(body.at("tools").at(0).at("strict"), json::value(false));
  EXPECT_EQ(body.at("tool_choice"), json::parse(R"({"type":"function","name":"weather"})"));
  EXPECT_EQ(body.at("parallel_tool_calls"), json::value(false));
  EXPECT_EQ(body.at("max_output_tokens").as_int64(), 256);
  EXPECT_EQ(body.at("reasoning"), json::parse(R"({"effort":"low","summary":"auto"})"));
  EXPECT_EQ(body.at("store"), json::value(false));
  EXPECT_EQ(body.at("stream"), json::value(true));
  EXPECT_EQ(body.at("user").as_string(), "u-1");
  EXPECT_EQ(stats.dropped_reasoning, 0u);
}

// decode -> encode -> decode -> encode: the second encoding equals the first.
TEST(ResponsesRequest, EncodingIsAFixedPointAfterOneDecode) {
  for (std::string_view body :
       {kConversation, std::string_view(R"({"model":"m","input":"hello","instructions":"sys"})"),
        std::string_view(R"({"model":"m","input":[{"type":"reasoning","id":"r","summary":[]},
          {"type":"reasoning","id":"r2","summary":[],"encrypted_content":"E"},
          {"role":"assistant","content":"a"},{"role":"assistant","content":"b"}]})")}) {
    const std::string first = encode_ok(decode_ok(body));
    const std::string second = encode_ok(decode_ok(first));
    EXPECT_EQ(first, second);
  }
}

TEST(ResponsesRequest, ReasoningFromOtherProtocolsIsDropped) {
  ir::Request r;
  r.model = "m";
  ir::Message& m = r.messages.emplace_back();
  m.role = ir::Role::kAssistant;
  ir::ContentPart thinking;
  thinking.kind = PartKind::kReasoning;
  thinking.text = "anthropic thinking";
  thinking.signature = "anthropic-signature";
  m.content.push_back(thinking);
  m.content.push_back(ir::ContentPart::make_text("answer"));
  r.stop = {"END"};
  r.top_k = 5;
  EncodeStats stats;
  const json::value body = json::parse(encode_ok(r, false, &stats));
  EXPECT_EQ(body.at("input").as_array().size(), 1u);
  EXPECT_EQ(stats.dropped_reasoning, 1u);
  EXPECT_EQ(stats.dropped_fields, 2u);  // stop, top_k
  EXPECT_FALSE(body.as_object().contains("stream"));
}

// Found by responses_request_fuzz: reasoning without an id is dropped, so one id on both sides
// of it was written as two adjacent items with the same id, which a Responses upstream refuses
// as a duplicate item. It is one item, without the id-less part's summary.
TEST(ResponsesRequest, OneReasoningIdAcrossADroppedPartIsOneItem) {
  ir::Request r;
  r.model = "m";
  ir::Message& m = r.messages.emplace_back();
  m.role = ir::Role::kAssistant;
  for (const auto& [id, text] : {std::pair{"rs_1", "first"}, std::pair{"", "stateless"},
                                 std::pair{"rs_1", "second"}, std::pair{"rs_2", "other"}}) {
    ir::ContentPart& p = m.content.emplace_back();
    p.kind = PartKind::kReasoning;
    p.id = id;
    p.text = text;
  }
  EncodeStats stats;
  const json::value body = json::parse(encode_ok(r, false, &stats));
  EXPECT_EQ(body.at("input"), json::parse(R"([
      {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"first"},
                                                 {"type":"summary_text","text":"second"}]},
      {"type":"reasoning","id":"rs_2","summary":[{"type":"summary_text","text":"other"}]}])"));
  EXPECT_EQ(stats.dropped_reasoning, 1u);
}

// Found by responses_request_fuzz: a conversation whose only turn is reasoning without an id
// would reach the upstream as an empty input; it is refused instead, naming the messages.
TEST(ResponsesRequest, NothingLeftToSendIsRefused) {
  ir::Request r;
  r.model = "m";
  r.system.push_back(ir::ContentPart::make_text("Be brief."));
  ir::ContentPart thinking;
  thinking.kind = PartKind::kReasoning;
  thinking.text = "anthropic thinking";
  thinking.signature = "anthropic-signature";
  ir::Message& m = r.messages.emplace_back();
  m.role = ir::Role::kAssistant;
  m.content.push_back(thinking);
  auto encoded = encode_request(r, "up-model", false);
  ASSERT_FALSE(encoded);
  EXPECT_EQ(encoded.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(encoded.error().param(), "messages");

  m.content.push_back(ir::ContentPart::make_text("answer"));
  EXPECT_TRUE(encode_request(r, "up-model", false));

  // System text and a user turn without content: nothing to answer either (fuzz found it).
  ir::Request bare;
  bare.model = "m";
  bare.system = {ir::ContentPart::make_text("Be brief."), ir::ContentPart::make_text("Metric.")};
  bare.messages.emplace_back().role = ir::Role::kUser;
  auto empty = encode_request(bare, "up-model", false);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().param(), "messages");
}

TEST(ResponsesRequest, ReasoningControls) {
  ir::Request r;
  r.model = "m";
  r.messages.emplace_back().content.push_back(ir::ContentPart::make_text("q"));
  r.reasoning.enabled = true;
  r.reasoning.budget_tokens = 8000;
  EncodeStats stats;
  json::value body = json::parse(encode_ok(r, false, &stats));
  EXPECT_EQ(body.at("reasoning"), json::parse(R"({"effort":"medium","summary":"auto"})"));
  EXPECT_EQ(stats.dropped_fields, 1u);
  r.reasoning = {};
  r.reasoning.enabled = true;
  r.reasoning.effort = "none";
  body = json::parse(encode_ok(r));
  EXPECT_EQ(body.at("reasoning"), json::parse(R"({"effort":"none"})"));
  r.reasoning = {};
  body = json::parse(encode_ok(r));
  EXPECT_FALSE(body.as_object().contains("reasoning"));
}

TEST(ResponsesRequest, MaxTokensBelowTheApiMinimumIsRefused) {
  ir::Request r;
  r.model = "m";
  r.messages.emplace_back().content.push_back(ir::ContentPart::make_text("q"));
  r.max_tokens = 15;
  auto encoded = encode_request(r, "m", false);
  ASSERT_FALSE(encoded);
  EXPECT_EQ(encoded.error().param(), "max_tokens");
  r.max_tokens = 16;
  EXPECT_TRUE(encode_request(r, "m", false));
}

// Structured output: text.format <-> response_format.
TEST(ResponsesRequest, TextFormatBothWays) {
  DecodeStats stats;
  const ir::Request r = decode_ok(
      R"({"model":"m","input":"hi","text":{"verbosity":"low","format":{"type":"json_schema",)"
      R"("name":"person","description":"A person","strict":true,)"
      R"("schema":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}}}})",
      &stats);
  EXPECT_EQ(stats.ignored_fields, 1u) << "text.verbosity";
  const ir::ResponseFormat& f = r.response_format;
  EXPECT_EQ(f.kind, ir::ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(f.name, "person");
  EXPECT_EQ(f.description, "A person");
  EXPECT_EQ(f.strict, true);
  EXPECT_EQ(f.schema, R"({"type":"object","properties":{"n":{"type":"string"}},"required":["n"]})");

  const json::value body = json::parse(encode_ok(r));
  EXPECT_EQ(json::serialize(body.at("text")),
            R"({"format":{"type":"json_schema","name":"person","description":"A person",)"
            R"("schema":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]},)"
            R"("strict":true}})");
  const ir::Request back = decode_ok(json::serialize(body));
  EXPECT_EQ(back.response_format.name, "person");
  EXPECT_EQ(back.response_format.schema, f.schema);

  ir::Request unnamed = r;
  unnamed.response_format.name.clear();
  unnamed.response_format.description.clear();
  unnamed.response_format.strict.reset();
  EXPECT_EQ(
      json::serialize(json::parse(encode_ok(unnamed)).at("text")),
      R"({"format":{"type":"json_schema","name":"response",)"
      R"("schema":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}}})");

  const ir::Request object =
      decode_ok(R"({"model":"m","input":"hi","text":{"format":{"type":"json_object"}}})");
  EXPECT_EQ(object.response_format.kind, ir::ResponseFormat::Kind::kJsonObject);
  EXPECT_EQ(json::serialize(json::parse(encode_ok(object)).at("text")),
            R"({"format":{"type":"json_object"}})");
  EXPECT_FALSE(json::parse(encode_ok(decode_ok(R"({"model":"m","input":"hi"})")))
                   .as_object()
                   .contains("text"));
}

TEST(ResponsesRequest, MalformedTextFormatInTheApisWords) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"("text":[])", "text"},
      {R"("text":{"format":"json"})", "text.format"},
      {R"("text":{"format":{}})", "text.format.type"},
      {R"("text":{"format":{"type":"xml"}})", "text.format.type"},
      {R"("text":{"format":{"type":"json_schema","schema":{}}})", "text.format.name"},
      {R"("text":{"format":{"type":"json_schema","name":"n"}})", "text.format.schema"},
      {R"("text":{"format":{"type":"json_schema","name":"n","schema":true}})",
       "text.format.schema"},
      {R"("text":{"format":{"type":"json_schema","name":"n","schema":{},"strict":"yes"}})",
       "text.format.strict"},
  };
  for (const auto& [field, param] : cases) {
    const Error e = decode_error(R"({"model":"m","input":"hi",)" + std::string(field) + "}");
    EXPECT_EQ(e.kind(), ErrorKind::kBadRequest) << field;
    EXPECT_EQ(e.param(), param) << field << " -> " << e.message();
  }
  EXPECT_EQ(
      decode_error(
          R"({"model":"m","input":"hi","text":{"format":{"type":"json_schema","schema":{}}}})")
          .message(),
      "Missing required parameter: 'text.format.name'.");
  EXPECT_EQ(
      decode_error(R"({"model":"m","input":"hi","text":{"format":{"type":"xml"}}})").message(),
      "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and 'json_schema'.");
}

TEST(ResponsesRequest, StrictRejectsWhatWouldBeIgnored) {
  DecodeOptions strict;
  strict.strict = true;
  auto top = decode_request(R"({"model":"m","input":"hi","metadata":{"a":"b"}})", nullptr, strict);
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().param(), "metadata");
  EXPECT_EQ(top.error().code(), "unsupported_parameter");
  auto nested =
      decode_request(R"({"model":"m","input":"hi","text":{"verbosity":"low"}})", nullptr, strict);
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().param(), "text.verbosity");
  // What the ingress reads, and values that ask for nothing, are fine.
  DecodeStats stats;
  auto ok = decode_request(
      R"({"model":"m","input":"hi","store":false,"stream_options":null,"truncation":"disabled",)"
      R"("include":[],"service_tier":"auto","metadata":null})",
      &stats, strict);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(stats.ignored_fields, 0u);
}

}  // namespace
}  // namespace sluice::protocol::openai_responses
