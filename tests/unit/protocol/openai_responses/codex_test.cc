// OpenAI's Codex CLI (`codex exec`, wire_api = "responses") through a translated upstream: the
// request body exactly as codex-rs serializes it (codex-rs/core/src/client_common.rs /
// codex-api ResponsesApiRequest; tools per codex-rs/tools/src/tool_spec.rs ToolSpec and
// responses_api.rs; input items per codex-rs/protocol/src/models.rs ResponseItem, whose `id`
// fields are skip_serializing), and the answers Codex reads back (codex-rs/core/src/tools/
// router.rs build_tool_call: FunctionCall {name, namespace, arguments, call_id} and
// CustomToolCall {name, namespace, input, call_id}).
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/responses_stream_check.h"
#include "codec/request_head.h"
#include "helpers.h"
#include "protocol/anthropic/request_encoder.h"
#include "protocol/openai_responses/ingress.h"
#include "protocol/openai_responses/request_decoder.h"
#include "protocol/openai_responses/response.h"
#include "protocol/openai_responses/tool_names.h"

namespace sluice::protocol::openai_responses {
namespace {
namespace json = boost::json;
using ir::PartKind;

constexpr std::string_view kGrammar =
    "start: begin_patch hunk+ end_patch\nbegin_patch: \"*** Begin Patch\" LF\n"
    "end_patch: \"*** End Patch\" LF?\n";

constexpr std::string_view kPatch =
    "*** Begin Patch\n*** Update File: README.md\n@@\n-# Demo\n+# Demo app\n*** End Patch\n";

// A second turn of `codex exec`: the first turn's reasoning, a shell call, an MCP call (a
// namespace tool), an apply_patch (freeform) call and their outputs are sent back in `input`.
const std::string& codex_body() {
  static const std::string kBody = [] {
    json::object body;
    body["model"] = "gpt-5-codex";
    body["instructions"] = "You are Codex, based on GPT-5. You are running as a coding agent.";
    json::array input;
    input.push_back(json::parse(R"({"type":"message","role":"developer","content":[
        {"type":"input_text","text":"<permissions instructions>never</permissions instructions>"}]})"));
    input.push_back(json::parse(R"({"type":"message","role":"user","content":[
        {"type":"input_text","text":"<environment_context><cwd>/w</cwd></environment_context>"}]})"));
    input.push_back(json::parse(R"({"type":"message","role":"user","content":[
        {"type":"input_text","text":"Rename the demo in README.md."}]})"));
    input.push_back(json::parse(R"({"type":"reasoning","summary":[
        {"type":"summary_text","text":"Look at the files first."}],"encrypted_content":"SIG-1"})"));
    input.push_back(json::parse(R"({"type":"function_call","name":"exec_command",
        "arguments":"{\"cmd\":\"ls\"}","call_id":"toolu_01"})"));
    input.push_back(json::parse(R"({"type":"function_call_output","call_id":"toolu_01",
        "output":"README.md\nsrc\n"})"));
    input.push_back(json::parse(R"({"type":"function_call","name":"read_file",
        "namespace":"mcp__fs__","arguments":"{\"path\":\"README.md\"}","call_id":"toolu_02"})"));
    input.push_back(json::parse(R"({"type":"function_call_output","call_id":"toolu_02",
        "output":[{"type":"input_text","text":"# Demo"}]})"));
    json::object patch_call =
        json::parse(
            R"({"type":"custom_tool_call","status":"completed","call_id":"toolu_03",
            "name":"apply_patch"})")
            .as_object();
    patch_call["input"] = kPatch;
    input.push_back(patch_call);
    input.push_back(json::parse(R"({"type":"custom_tool_call_output","call_id":"toolu_03",
        "output":"Success. Updated the following files:\nM README.md\n"})"));
    input.push_back(json::parse(R"({"type":"message","role":"assistant","content":[
        {"type":"output_text","text":"Renamed."}],"phase":"final_answer"})"));
    input.push_back(json::parse(R"({"type":"message","role":"user","content":[
        {"type":"input_text","text":"Now check the docs online."}]})"));
    body["input"] = std::move(input);
    json::array tools;
    tools.push_back(json::parse(R"({"type":"function","name":"exec_command",
        "description":"Runs a command in a PTY.","strict":false,"parameters":{"type":"object",
        "properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}})"));
    tools.push_back(json::parse(R"({"type":"function","name":"write_stdin",
        "description":"Writes to a session.","strict":false,"parameters":{"type":"object",
        "properties":{"session_id":{"type":"number"},"chars":{"type":"string"}},
        "required":["session_id"],"additionalProperties":false}})"));
    tools.push_back(json::parse(R"({"type":"function","name":"update_plan",
        "description":"Updates the task plan.","strict":false,"parameters":{"type":"object",
        "properties":{"plan":{"type":"array","items":{"type":"object"}}},"required":["plan"],
        "additionalProperties":false}})"));
    json::object apply_patch = json::parse(R"({"type":"custom","name":"apply_patch",
        "description":"Use the `apply_patch` tool to edit files."})")
                                   .as_object();
    json::object format;
    format["type"] = "grammar";
    format["syntax"] = "lark";
    format["definition"] = kGrammar;
    apply_patch["format"] = std::move(format);
    tools.push_back(apply_patch);
    tools.push_back(json::parse(R"({"type":"namespace","name":"mcp__fs__",
        "description":"Tools in the mcp__fs__ namespace.","tools":[
          {"type":"function","name":"read_file","description":"Reads a file.","strict":false,
           "defer_loading":true,"parameters":{"type":"object","properties":{"path":{"type":
           "string"}},"required":["path"],"additionalProperties":false}},
          {"type":"function","name":"write_file","description":"Writes a file.","strict":false,
           "parameters":{"type":"object","properties":{"path":{"type":"string"},"text":{"type":
           "string"}},"required":["path","text"],"additionalProperties":false}}]})"));
    tools.push_back(json::parse(R"({"type":"web_search","external_web_access":true})"));
    body["tools"] = std::move(tools);
    body["tool_choice"] = "auto";
    body["parallel_tool_calls"] = false;
    body["reasoning"] = json::parse(R"({"effort":"medium","summary":"auto"})");
    body["store"] = false;
    body["stream"] = true;
    body["include"] = json::parse(R"(["reasoning.encrypted_content"])");
    body["prompt_cache_key"] = "0199a213-81c0-7800-8aa1-bbab2a035a53";
    body["text"] = json::parse(R"({"verbosity":"low"})");
    body["client_metadata"] = json::parse(R"({"x-codex-installation-id":"inst-1"})");
    return json::serialize(body);
  }();
  return kBody;
}

TEST(ResponsesCodex, ARealCodexTurnDecodesToTheIr) {
  DecodeStats stats;
  auto decoded = decode_request(codex_body(), &stats);
  ASSERT_TRUE(decoded) << decoded.error().message() << " (" << decoded.error().param() << ")";
  const ir::Request& r = *decoded;
  EXPECT_EQ(r.model, "gpt-5-codex");
  ASSERT_EQ(r.system.size(), 2u);  // instructions, then the leading developer message
  EXPECT_EQ(r.system[1].text, "<permissions instructions>never</permissions instructions>");

  // user, user, assistant [reasoning, call], user [result], assistant [call], user [result],
  // assistant [call], user [result], assistant [text], user
  ASSERT_EQ(r.messages.size(), 10u);
  const ir::Message& first = r.messages[2];
  ASSERT_EQ(first.role, ir::Role::kAssistant);
  ASSERT_EQ(first.content.size(), 2u);
  EXPECT_EQ(first.content[0].kind, PartKind::kReasoning);
  EXPECT_EQ(first.content[0].text, "Look at the files first.");
  EXPECT_EQ(first.content[0].signature, "SIG-1");  // no id: Codex never sends one
  EXPECT_EQ(first.content[1].name, "exec_command");
  const ir::ContentPart& mcp = r.messages[4].content.at(0);
  EXPECT_EQ(mcp.kind, PartKind::kToolCall);
  EXPECT_EQ(mcp.id, "toolu_02");
  EXPECT_EQ(mcp.name, "mcp__fs__read_file");
  EXPECT_EQ(mcp.arguments, R"({"path":"README.md"})");
  EXPECT_EQ(r.messages[5].content.at(0).kind, PartKind::kToolResult);
  EXPECT_EQ(r.messages[5].content.at(0).parts.at(0).text, "# Demo");
  const ir::ContentPart& patch = r.messages[6].content.at(0);
  EXPECT_EQ(patch.name, "apply_patch");
  EXPECT_EQ(patch.id, "toolu_03");
  EXPECT_EQ(json::parse(patch.arguments), json::value({{"input", kPatch}}));
  const ir::ContentPart& patched = r.messages[7].content.at(0);
  EXPECT_EQ(patched.kind, PartKind::kToolResult);
  EXPECT_EQ(patched.id, "toolu_03");
  EXPECT_EQ(patched.parts.at(0).text, "Success. Updated the following files:\nM README.md\n");
  EXPECT_EQ(r.messages[8].content.at(0).text, "Renamed.");

  std::vector<std::string> names;
  for (const ir::Tool& t : r.tools) {
    names.push_back(t.name);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"exec_command", "write_stdin", "update_plan", "apply_patch",
                                      "mcp__fs__read_file", "mcp__fs__write_file"}));
  const ir::Tool& freeform = r.tools[3];
  EXPECT_EQ(json::parse(freeform.parameters), json::parse(R"({"type":"object","properties":
      {"input":{"type":"string","description":"The tool's free-form input text."}},
      "required":["input"],"additionalProperties":false})"));
  EXPECT_NE(freeform.description.find("Use the `apply_patch` tool to edit files."),
            std::string::npos);
  EXPECT_NE(freeform.description.find("lark grammar:\n" + std::string(kGrammar)),
            std::string::npos);
  EXPECT_EQ(r.tools[4].description, "Reads a file.");
  EXPECT_EQ(json::parse(r.tools[4].parameters).at("required"), json::parse(R"(["path"])"));

  EXPECT_EQ(r.tool_choice.mode, ir::ToolChoiceMode::kAuto);
  EXPECT_TRUE(r.tool_choice.disable_parallel_tool_use);
  EXPECT_EQ(r.reasoning.effort, "medium");
  EXPECT_TRUE(r.stream);
  // web_search is left out, not a failure; text.verbosity is the one ignored field (store,
  // include of encrypted reasoning, prompt_cache_key and client_metadata change nothing).
  EXPECT_EQ(stats.dropped_tools, 1u);
  EXPECT_EQ(stats.dropped_tool_types, "web_search");
  EXPECT_EQ(stats.ignored_fields, 1u);
  EXPECT_TRUE(stats.tool_names.restores());
}

// The whole turn is something an Anthropic upstream takes: names within its limits, the
// freeform call's arguments a JSON object, the reasoning's signature kept.
TEST(ResponsesCodex, TheIrEncodesForAnAnthropicUpstream) {
  auto decoded = decode_request(codex_body());
  ASSERT_TRUE(decoded);
  auto body = anthropic::encode_request(*decoded, "claude-sonnet-4-5", true);
  ASSERT_TRUE(body) << body.error().message() << " (" << body.error().param() << ")";
  const json::value doc = json::parse(*body);
  std::vector<std::string> names;
  for (const json::value& t : doc.at("tools").as_array()) {
    names.emplace_back(t.at("name").as_string());
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(names[4], "mcp__fs__read_file");
  EXPECT_NE(body->find(R"("signature":"SIG-1")"), std::string::npos);
}

TEST(ResponsesCodex, StrictFieldsRefuseTheDroppedTool) {
  DecodeOptions strict;
  strict.strict = true;
  auto decoded = decode_request(codex_body(), nullptr, strict);
  ASSERT_FALSE(decoded);
  // text.verbosity is met first; without it the hosted tool is what strict refuses.
  EXPECT_EQ(decoded.error().param(), "tools[5]");
  EXPECT_EQ(decoded.error().code(), "unsupported_parameter");
}

ir::Response codex_answer() {
  ir::Response answer;
  answer.id = "msg_01";
  answer.model = "claude-sonnet-4-5";
  answer.finish = ir::FinishReason::kToolCalls;
  answer.content.push_back(ir::ContentPart::make_text("Checking."));
  ir::ContentPart read;
  read.kind = PartKind::kToolCall;
  read.id = "toolu_10";
  read.name = "mcp__fs__read_file";
  read.arguments = R"({"path":"docs/index.md"})";
  answer.content.push_back(read);
  ir::ContentPart patch;
  patch.kind = PartKind::kToolCall;
  patch.id = "toolu_11";
  patch.name = "apply_patch";
  json::object args;
  args["input"] = kPatch;
  patch.arguments = json::serialize(args);
  answer.content.push_back(patch);
  ir::ContentPart shell;
  shell.kind = PartKind::kToolCall;
  shell.id = "toolu_12";
  shell.name = "exec_command";
  shell.arguments = R"({"cmd":"ls"})";
  answer.content.push_back(shell);
  return answer;
}

TEST(ResponsesCodex, AnswerRestoresNamespacedAndCustomCalls) {
  DecodeStats stats;
  ASSERT_TRUE(decode_request(codex_body(), &stats));
  auto body = encode_response(codex_answer(), 1700000000, &stats.tool_names);
  ASSERT_TRUE(body) << body.error().message();
  const json::value doc = json::parse(*body);
  const json::array& output = doc.at("output").as_array();
  ASSERT_EQ(output.size(), 4u);
  EXPECT_EQ(output[1], json::parse(R"({"id":"fc_msg_01_1","type":"function_call",
      "status":"completed","arguments":"{\"path\":\"docs/index.md\"}","call_id":"toolu_10",
      "name":"read_file","namespace":"mcp__fs__"})"));
  json::object custom = json::parse(R"({"id":"ctc_msg_01_2","type":"custom_tool_call",
      "status":"completed","call_id":"toolu_11","name":"apply_patch"})")
                            .as_object();
  custom["input"] = kPatch;
  EXPECT_EQ(output[2], json::value(custom));
  EXPECT_EQ(output[3].at("name"), "exec_command");
  EXPECT_FALSE(output[3].as_object().contains("namespace"));

  // Without the request's names nothing is restored (the flattened name is all there is).
  auto plain = encode_response(codex_answer(), 1700000000);
  ASSERT_TRUE(plain);
  EXPECT_EQ(json::parse(*plain).at("output").at(1).at("name"), "mcp__fs__read_file");
}

std::vector<ir::StreamEvent> codex_stream() {
  std::vector<ir::StreamEvent> events;
  auto add = [&](ir::StreamEventKind kind) -> ir::StreamEvent& {
    ir::StreamEvent& e = events.emplace_back();
    e.kind = kind;
    return e;
  };
  ir::StreamEvent& start = add(ir::StreamEventKind::kStart);
  start.id = "msg_01";
  start.model = "claude-sonnet-4-5";
  add(ir::StreamEventKind::kTextDelta).text = "Checking.";
  ir::StreamEvent& read = add(ir::StreamEventKind::kToolCallStart);
  read.index = 0;
  read.id = "toolu_10";
  read.name = "mcp__fs__read_file";
  add(ir::StreamEventKind::kToolCallDelta).text = R"({"path":)";
  add(ir::StreamEventKind::kToolCallDelta).text = R"("docs/index.md"})";
  ir::StreamEvent& patch = add(ir::StreamEventKind::kToolCallStart);
  patch.index = 1;
  patch.id = "toolu_11";
  patch.name = "apply_patch";
  json::object args;
  args["input"] = kPatch;
  const std::string text = json::serialize(args);
  for (std::size_t at = 0; at < text.size(); at += 7) {
    ir::StreamEvent& d = add(ir::StreamEventKind::kToolCallDelta);
    d.index = 1;
    d.text = text.substr(at, 7);
  }
  add(ir::StreamEventKind::kFinish).finish = ir::FinishReason::kToolCalls;
  ir::StreamEvent& usage = add(ir::StreamEventKind::kUsage);
  usage.usage.input_tokens = 900;
  usage.usage.output_tokens = 40;
  add(ir::StreamEventKind::kDone);
  return events;
}

struct Event {
  std::string name;
  json::value data;
};

std::vector<Event> parse_events(std::string_view bytes) {
  std::vector<Event> out;
  test::for_each_sse_event(bytes, 0, [&](const codec::SseEvent& ev) {
    out.push_back({std::string(ev.event), json::parse(ev.data)});
  });
  return out;
}

std::string encode_with(const ToolNames& names) {
  StreamEncoder encoder(1700000000, names);
  std::string out;
  for (const ir::StreamEvent& e : codex_stream()) {
    encoder.encode(e, out);
  }
  return out;
}

TEST(ResponsesCodex, StreamRestoresNamespacedAndCustomCalls) {
  DecodeStats stats;
  ASSERT_TRUE(decode_request(codex_body(), &stats));
  const std::vector<Event> events = parse_events(encode_with(stats.tool_names));
  auto find = [&](std::string_view name, std::size_t nth = 0) -> const json::value* {
    for (const Event& e : events) {
      if (e.name == name && nth-- == 0) {
        return &e.data;
      }
    }
    return nullptr;
  };
  // The namespaced call: added with its own name and namespace, arguments streamed as they came.
  const json::value* added = find("response.output_item.added", 1);
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->at("item"), json::parse(R"({"id":"fc_msg_01_1","type":"function_call",
      "status":"in_progress","arguments":"","call_id":"toolu_10","name":"read_file",
      "namespace":"mcp__fs__"})"));
  const json::value* delta = find("response.function_call_arguments.delta", 1);
  ASSERT_NE(delta, nullptr);
  EXPECT_EQ(delta->at("delta"), R"("docs/index.md"})");
  const json::value* args_done = find("response.function_call_arguments.done");
  ASSERT_NE(args_done, nullptr);
  EXPECT_EQ(args_done->at("name"), "read_file");
  EXPECT_EQ(args_done->at("arguments"), R"({"path":"docs/index.md"})");
  // Only the namespaced call's two deltas: the custom call's JSON is not streamed as arguments.
  EXPECT_EQ(find("response.function_call_arguments.delta", 2), nullptr);

  // The custom call: a custom_tool_call item whose input is the text.
  const json::value* custom_added = find("response.output_item.added", 2);
  ASSERT_NE(custom_added, nullptr);
  EXPECT_EQ(custom_added->at("item"), json::parse(R"({"id":"ctc_msg_01_2",
      "type":"custom_tool_call","status":"in_progress","call_id":"toolu_11","input":"",
      "name":"apply_patch"})"));
  const json::value* input_delta = find("response.custom_tool_call_input.delta");
  ASSERT_NE(input_delta, nullptr);
  EXPECT_EQ(input_delta->at("delta").as_string(), kPatch);
  EXPECT_EQ(input_delta->at("item_id"), "ctc_msg_01_2");
  EXPECT_EQ(input_delta->at("output_index"), 2);
  const json::value* input_done = find("response.custom_tool_call_input.done");
  ASSERT_NE(input_done, nullptr);
  EXPECT_EQ(input_done->at("input").as_string(), kPatch);
  const json::value* custom_done = find("response.output_item.done", 2);
  ASSERT_NE(custom_done, nullptr);
  json::object expected = json::parse(R"({"id":"ctc_msg_01_2","type":"custom_tool_call",
      "status":"completed","call_id":"toolu_11","name":"apply_patch"})")
                              .as_object();
  expected["input"] = kPatch;
  EXPECT_EQ(custom_done->at("item"), json::value(expected));

  const json::value* completed = find("response.completed");
  ASSERT_NE(completed, nullptr);
  const json::array& output = completed->at("response").at("output").as_array();
  ASSERT_EQ(output.size(), 3u);
  EXPECT_EQ(output[1].at("namespace"), "mcp__fs__");
  EXPECT_EQ(output[1].at("arguments"), R"({"path":"docs/index.md"})");
  EXPECT_EQ(output[2], json::value(expected));
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].data.at("sequence_number"), static_cast<std::int64_t>(i));
  }
}

// A stream of namespaced calls only is still what the SDK's accumulator accepts.
TEST(ResponsesCodex, StreamOfNamespacedCallsPassesTheSdkRules) {
  ToolNames names;
  names.add("", "exec_command", false);
  names.add("mcp__fs__", "read_file", false);
  names.assign();
  std::vector<ir::StreamEvent> events = codex_stream();
  // Drop the custom call (start and its deltas at index 1).
  std::erase_if(events, [](const ir::StreamEvent& e) {
    return (e.kind == ir::StreamEventKind::kToolCallStart ||
            e.kind == ir::StreamEventKind::kToolCallDelta) &&
           e.index == 1;
  });
  StreamEncoder encoder(1700000000, names);
  std::string out;
  for (const ir::StreamEvent& e : events) {
    encoder.encode(e, out);
  }
  test::ResponsesObserved observed;
  EXPECT_EQ(test::check_responses_stream(out, observed, true), "");
  ASSERT_EQ(observed.calls.size(), 1u);
  EXPECT_EQ(observed.calls[0].name, "read_file");
  EXPECT_EQ(observed.calls[0].arguments, R"({"path":"docs/index.md"})");
}

// Through the ingress, as the pipeline drives it: to_ir, then the stream encoder it makes.
TEST(ResponsesCodex, TheIngressRestoresNamesInItsStreams) {
  class NoHead final : public codec::RequestHead {
   public:
    std::string_view method() const override { return "POST"; }
    std::string_view target() const override { return "/v1/responses"; }
    std::string_view header(std::string_view) const override { return {}; }
    bool has_header(std::string_view) const override { return false; }
    void for_each_header(FunctionRef<void(std::string_view, std::string_view)>) const override {}
  };
  const ResponsesIngress ingress;
  auto request = ingress.decode(codex_body(), NoHead());
  ASSERT_TRUE(request);
  auto ir = ingress.to_ir(*request);
  ASSERT_TRUE(ir) << ir.error().message();
  EXPECT_EQ(request->ignored_fields, 2u);  // text.verbosity and the dropped web_search
  auto encoder = ingress.make_stream_encoder(*request);
  std::string out;
  for (const ir::StreamEvent& e : codex_stream()) {
    encoder->encode(e, out);
  }
  EXPECT_NE(out.find(R"("name":"read_file","namespace":"mcp__fs__")"), std::string::npos);
  EXPECT_NE(out.find("response.custom_tool_call_input.done"), std::string::npos);

  // A request without namespace or custom tools pays nothing and changes nothing.
  auto plain = ingress.decode(R"({"model":"m","input":"hi","stream":true,"tools":[
      {"type":"function","name":"mcp__fs__read_file"}]})",
                              NoHead());
  ASSERT_TRUE(plain);
  ASSERT_TRUE(ingress.to_ir(*plain));
  auto plain_encoder = ingress.make_stream_encoder(*plain);
  std::string plain_out;
  for (const ir::StreamEvent& e : codex_stream()) {
    plain_encoder->encode(e, plain_out);
  }
  EXPECT_NE(plain_out.find(R"("name":"mcp__fs__read_file")"), std::string::npos);
}

TEST(ResponsesToolNames, FlattenedNamesFitEveryUpstream) {
  ToolNames names;
  names.add("", "a__b", false);                                  // a top-level tool keeps its name
  names.add("a", "b", false);                                    // would collide with it
  names.add("my.server", "get", false);                          // '.' is not a tool-name character
  names.add(std::string(50, 'n'), std::string(30, 't'), false);  // too long
  names.add("crm", "_lookup", true);   // Codex's join trims the underscore
  names.add("crm_", "lookup", false);  // and so collides with the one before
  names.assign();
  const std::vector<CallerTool>& t = names.tools();
  EXPECT_EQ(t[0].flat, "a__b");
  EXPECT_EQ(t[4].flat, "crm__lookup");
  for (const CallerTool& tool : t) {
    SCOPED_TRACE(tool.space + "/" + tool.name);
    EXPECT_LE(tool.flat.size(), ToolNames::kMaxName);
    EXPECT_FALSE(tool.flat.empty());
    EXPECT_TRUE(std::all_of(tool.flat.begin(), tool.flat.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    }));
    EXPECT_EQ(names.find(tool.flat), &tool);  // reversible: one tool per name
  }
  EXPECT_TRUE(t[1].flat.starts_with("a__b_"));
  EXPECT_EQ(t[1].flat.size(), 4u + 17u);
  EXPECT_TRUE(t[2].flat.starts_with("my_server__get_"));
  EXPECT_EQ(t[3].flat.size(), ToolNames::kMaxName);
  EXPECT_NE(t[5].flat, t[4].flat);

  // Deterministic: the same tools give the same names (a later turn's history matches).
  ToolNames again;
  for (const CallerTool& tool : t) {
    again.add(tool.space, tool.name, tool.custom);
  }
  again.assign();
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(again.tools()[i].flat, t[i].flat);
  }
  EXPECT_EQ(names.flat_name("a", "b"), t[1].flat);
  EXPECT_EQ(names.flat_name("", "x"), "x");
  EXPECT_EQ(names.flat_name("other", "tool"), "other__tool");  // a tool no longer offered
  EXPECT_EQ(names.find("nothing"), nullptr);
}

TEST(ResponsesToolNames, CustomToolInput) {
  EXPECT_EQ(custom_tool_input(R"({"input":"line 1\nline 2"})"), "line 1\nline 2");
  EXPECT_EQ(custom_tool_input(R"({"patch":"p"})"), "p");  // the only string a model wrote
  EXPECT_EQ(custom_tool_input("{}"), "");
  EXPECT_EQ(custom_tool_input("not json"), "not json");
  EXPECT_EQ(custom_tool_input(R"({"a":"1","b":"2"})"), R"({"a":"1","b":"2"})");
}

TEST(ResponsesCodex, MalformedNamespaceAndCustomToolsNameTheField) {
  struct Case {
    std::string_view body;
    std::string_view param;
  };
  for (const Case& c : {
           Case{R"({"model":"m","input":"x","tools":[{"type":"namespace","tools":[]}]})",
                "tools[0].name"},
           Case{R"({"model":"m","input":"x","tools":[{"type":"namespace","name":"n"}]})",
                "tools[0].tools"},
           Case{R"({"model":"m","input":"x","tools":[{"type":"namespace","name":"n",
                   "tools":[{"type":"web_search"}]}]})",
                "tools[0].tools[0].type"},
           Case{R"({"model":"m","input":"x","tools":[{"type":"namespace","name":"n",
                   "tools":[{"type":"function"}]}]})",
                "tools[0].tools[0].name"},
           Case{R"({"model":"m","input":"x","tools":[{"type":"custom","name":"c",
                   "format":{"type":"grammar","syntax":"lark"}}]})",
                "tools[0].format.definition"},
           Case{R"({"model":"m","input":"x","tools":[{"type":"custom","name":"c",
                   "format":{"type":"xml"}}]})",
                "tools[0].format.type"},
           Case{R"({"model":"m","input":[{"type":"custom_tool_call","call_id":"c","name":"n"}]})",
                "input[0].input"},
           Case{R"({"model":"m","input":[{"type":"function_call","call_id":"c","name":"n",
                   "namespace":3,"arguments":"{}"}]})",
                "input[0].namespace"},
       }) {
    SCOPED_TRACE(c.body);
    auto r = decode_request(c.body);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(r.error().param(), c.param) << r.error().message();
  }
  // Hosted tools of every kind are left out, each type named once.
  DecodeStats stats;
  auto ok = decode_request(R"({"model":"m","input":"x","tools":[{"type":"web_search"},
      {"type":"web_search_preview_2025_03_11"},{"type":"image_generation"},{"type":"web_search"}],
      "tool_choice":{"type":"custom","name":"c"}})",
                           &stats);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_TRUE(ok->tools.empty());
  EXPECT_EQ(stats.dropped_tools, 4u);
  EXPECT_EQ(stats.dropped_tool_types, "web_search,web_search_preview_2025_03_11,image_generation");
  EXPECT_EQ(ok->tool_choice.name, "c");
}

}  // namespace
}  // namespace sluice::protocol::openai_responses
