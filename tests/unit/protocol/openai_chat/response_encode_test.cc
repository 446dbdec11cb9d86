#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/anthropic/response.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/ingress.h"
#include "protocol/openai_chat/response.h"

// openai_chat::encode_response: IR -> chat.completion. Recorded Anthropic messages translate
// into answers our OpenAI decoder reads back as the same IR (minus what Chat Completions cannot
// carry); recorded OpenAI answers survive decode -> encode -> decode unchanged.
namespace sluice::protocol::openai_chat {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr std::int64_t kCreated = 1'750'000'000;

std::string describe(const ir::Response& r) {
  std::ostringstream s;
  s << "id=" << r.id << " model=" << r.model << " created=" << r.created
    << " finish=" << ir::to_string(r.finish) << " stop_sequence=" << r.stop_sequence;
  if (r.usage) {
    s << " usage=" << r.usage->input_tokens << "/" << r.usage->output_tokens << "/"
      << r.usage->cache_read_tokens << "/" << r.usage->cache_write_tokens << "/"
      << r.usage->reasoning_tokens;
  }
  for (const ir::ContentPart& p : r.content) {
    s << "\n  part " << static_cast<int>(p.kind) << " text=" << p.text << " id=" << p.id
      << " name=" << p.name << " arguments=" << p.arguments << " signature=" << p.signature;
  }
  return s.str();
}

// The IR an OpenAI client can get back from `r`: Chat Completions has no reasoning signature,
// no redacted reasoning, no cache-write count (those tokens stay inside prompt_tokens), no
// stop_sequence and a smaller finish vocabulary.
ir::Response as_openai_sees_it(ir::Response r, std::int64_t created) {
  r.id = completion_id(r.id);
  r.created = created;
  r.finish = finish_reason_from_openai(finish_reason_to_openai(r.finish));
  r.stop_sequence.clear();
  if (r.usage) {
    r.usage->cache_write_tokens = 0;
  }
  std::erase_if(r.content, [](const ir::ContentPart& p) {
    return p.kind == ir::PartKind::kRedactedReasoning;
  });
  for (ir::ContentPart& p : r.content) {
    p.signature.clear();
  }
  return r;
}

std::vector<fs::path> fixtures(std::string_view corpus, std::string_view prefix) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(test::fixture_dir(corpus))) {
    if (entry.path().extension() == ".json" &&
        entry.path().filename().string().starts_with(prefix)) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// (d) Anthropic message -> IR -> chat.completion -> IR.
TEST(OpenAiResponseEncoder, AnthropicMessagesTranslate) {
  int checked = 0;
  for (const fs::path& path : fixtures("anthropic", "message-")) {
    SCOPED_TRACE(path.filename().string());
    const std::string body = test::read_file(path);
    const json::object want = json::parse(body).as_object();
    auto ir = anthropic::decode_response(body);
    ASSERT_TRUE(ir.has_value()) << ir.error().message();

    std::uint32_t dropped = 99;
    auto encoded = encode_response(*ir, kCreated, &dropped);
    ASSERT_TRUE(encoded.has_value()) << encoded.error().message();
    std::uint32_t signatures = 0;
    for (const ir::ContentPart& p : ir->content) {
      signatures += p.signature.empty() ? 0 : 1;
    }
    EXPECT_EQ(dropped, signatures);

    // The wire shape, read with a DOM.
    boost::system::error_code ec;
    const json::value doc = json::parse(*encoded, ec);
    ASSERT_FALSE(ec) << *encoded;
    const json::object& o = doc.as_object();
    EXPECT_EQ(o.at("object"), "chat.completion");
    EXPECT_EQ(o.at("created"), kCreated);
    EXPECT_EQ(o.at("id").as_string(), "chatcmpl-" + std::string(want.at("id").as_string()));
    const json::object& choice = o.at("choices").at(0).as_object();
    const json::object& msg = choice.at("message").as_object();
    EXPECT_EQ(msg.at("role"), "assistant");
    bool has_text = false;
    bool has_tool = false;
    for (const json::value& block : want.at("content").as_array()) {
      has_text |= block.at("type") == "text";
      has_tool |= block.at("type") == "tool_use";
    }
    EXPECT_EQ(msg.at("content").is_null(), has_tool && !has_text) << *encoded;
    EXPECT_EQ(msg.contains("tool_calls"), has_tool);
    const json::object& wire_usage = want.at("usage").as_object();
    const std::uint64_t prompt =
        wire_usage.at("input_tokens").to_number<std::uint64_t>() +
        wire_usage.at("cache_read_input_tokens").to_number<std::uint64_t>() +
        wire_usage.at("cache_creation_input_tokens").to_number<std::uint64_t>();
    const json::object& usage = o.at("usage").as_object();
    EXPECT_EQ(usage.at("prompt_tokens").to_number<std::uint64_t>(), prompt);
    EXPECT_EQ(usage.at("prompt_tokens_details").at("cached_tokens"),
              wire_usage.at("cache_read_input_tokens"));
    EXPECT_EQ(usage.at("completion_tokens"), wire_usage.at("output_tokens"));
    EXPECT_EQ(usage.at("total_tokens").to_number<std::uint64_t>(),
              prompt + wire_usage.at("output_tokens").to_number<std::uint64_t>());

    auto again = decode_response(*encoded);
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(describe(*again), describe(as_openai_sees_it(*ir, kCreated)));
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// Recorded OpenAI answers: decode -> encode -> decode is the identity on the IR.
TEST(OpenAiResponseEncoder, OpenAiCompletionsRoundTrip) {
  int checked = 0;
  for (const fs::path& path : fixtures("openai-chat", "chat-completion-")) {
    SCOPED_TRACE(path.filename().string());
    auto ir = decode_response(test::read_file(path));
    ASSERT_TRUE(ir.has_value()) << ir.error().message();
    std::uint32_t dropped = 99;
    auto encoded = encode_response(*ir, ir->created, &dropped);
    ASSERT_TRUE(encoded.has_value()) << encoded.error().message();
    EXPECT_EQ(dropped, 0u);
    auto again = decode_response(*encoded);
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(describe(*again), describe(*ir));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

ir::ContentPart part(ir::PartKind kind, std::string text = {}) {
  ir::ContentPart p;
  p.kind = kind;
  p.text = std::move(text);
  return p;
}

ir::ContentPart tool(std::string id, std::string name, std::string arguments) {
  ir::ContentPart p = part(ir::PartKind::kToolCall);
  p.id = std::move(id);
  p.name = std::move(name);
  p.arguments = std::move(arguments);
  return p;
}

TEST(OpenAiResponseEncoder, ExactBytes) {
  ir::Response r;
  r.id = "msg_1";
  r.model = "claude-x";
  r.content.push_back(part(ir::PartKind::kReasoning, "think"));
  r.content.back().signature = "sig";
  r.content.push_back(part(ir::PartKind::kRedactedReasoning));
  r.content.back().signature = "opaque";
  r.content.push_back(part(ir::PartKind::kText, "Hello, "));
  r.content.push_back(tool("toolu_1", "f", R"({"a":1})"));
  r.content.push_back(part(ir::PartKind::kText, "world"));
  r.content.push_back(tool("", "g", ""));
  r.finish = ir::FinishReason::kToolCalls;
  r.usage = ir::Usage{10, 5, 4, 2, 1};
  std::uint32_t dropped = 0;
  auto out = encode_response(r, kCreated, &dropped);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_EQ(dropped, 2u);
  EXPECT_EQ(
      *out,
      R"({"id":"chatcmpl-msg_1","object":"chat.completion","created":1750000000,)"
      R"("model":"claude-x","choices":[{"index":0,"message":{"role":"assistant",)"
      R"("content":"Hello, world","reasoning_content":"think","tool_calls":[)"
      R"({"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},)"
      R"({"id":"chatcmpl-msg_1_call_1","type":"function","function":{"name":"g","arguments":"{}"}}],)"
      R"("refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],)"
      R"("usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,)"
      R"("prompt_tokens_details":{"cached_tokens":4},)"
      R"("completion_tokens_details":{"reasoning_tokens":1}}})");
}

TEST(OpenAiResponseEncoder, ContentNullOnlyForToolCallsAlone) {
  ir::Response tools_only;
  tools_only.content.push_back(tool("c", "f", "{}"));
  auto a = encode_response(tools_only, kCreated);
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(json::parse(*a).at("choices").at(0).at("message").at("content").is_null());

  ir::Response empty;  // no content at all (a length stop during reasoning): "" not null
  empty.finish = ir::FinishReason::kLength;
  auto b = encode_response(empty, kCreated);
  ASSERT_TRUE(b.has_value());
  const json::value doc = json::parse(*b);
  EXPECT_EQ(doc.at("choices").at(0).at("message").at("content"), "");
  EXPECT_FALSE(doc.at("choices").at(0).at("message").as_object().contains("reasoning_content"));
  EXPECT_FALSE(doc.as_object().contains("usage"));  // the IR had none: not made up
  EXPECT_EQ(doc.at("choices").at(0).at("finish_reason"), "length");
}

// The finish vocabulary, shared with the stream encoder (finish_reason_to_openai).
TEST(OpenAiResponseEncoder, FinishReasons) {
  const std::pair<ir::FinishReason, const char*> cases[] = {
      {ir::FinishReason::kStop, "stop"},
      {ir::FinishReason::kStopSequence, "stop"},
      {ir::FinishReason::kLength, "length"},
      {ir::FinishReason::kToolCalls, "tool_calls"},
      {ir::FinishReason::kContentFilter, "content_filter"},
      {ir::FinishReason::kRefusal, "content_filter"},
      {ir::FinishReason::kPauseTurn, "stop"},
      {ir::FinishReason::kOther, "stop"},
      {ir::FinishReason::kUnset, "stop"},
  };
  for (const auto& [reason, want] : cases) {
    ir::Response r;
    r.finish = reason;
    r.stop_sequence = "END";
    auto out = encode_response(r, kCreated);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(json::parse(*out).at("choices").at(0).at("finish_reason"), want) << want;
    EXPECT_EQ(out->find("END"), std::string::npos);
  }
}

TEST(OpenAiResponseEncoder, ImpossibleInputIsAnError) {
  ir::Response bad_args;
  bad_args.content.push_back(tool("c", "f", R"({"a":)"));
  auto a = encode_response(bad_args, kCreated);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().kind(), ErrorKind::kUpstreamProtocol);
  EXPECT_EQ(a.error().message(),
            "tool call 'f' has arguments that are not JSON; cannot encode an OpenAI tool call");

  for (ir::PartKind kind : {ir::PartKind::kImage, ir::PartKind::kToolResult}) {
    ir::Response r;
    r.content.push_back(part(kind));
    auto out = encode_response(r, kCreated);
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().kind(), ErrorKind::kUpstreamProtocol);
  }
}

TEST(OpenAiResponseEncoder, ChatIngressStampsCreated) {
  ChatIngress ingress;
  ir::Response r;
  r.id = "msg_1";
  bool clamped = true;
  const std::int64_t before = std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  auto now = ingress.encode_response(r, clamped);
  ASSERT_TRUE(now.has_value()) << now.error().message();
  EXPECT_FALSE(clamped);
  const std::int64_t created = json::parse(*now).at("created").to_number<std::int64_t>();
  EXPECT_GE(created, before);
  EXPECT_LE(created, before + 60);

  r.created = 1'234;  // the upstream said when
  auto upstream = ingress.encode_response(r, clamped);
  ASSERT_TRUE(upstream.has_value());
  EXPECT_EQ(json::parse(*upstream).at("created"), 1'234);
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
