#include <filesystem>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/response.h"

namespace sluice::protocol::openai_chat {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

using test::read_file;

const fs::path kDir = test::fixture_dir("openai-chat");

std::uint64_t u64(const json::value& v) { return v.to_number<std::uint64_t>(); }

// Every chat.completion fixture, checked against values read from the fixture itself.
TEST(OpenAiIrDecodeResponse, EveryCompletionFixtureMatchesItsJson) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json" || name.rfind("chat-completion-", 0) != 0) {
      continue;
    }
    SCOPED_TRACE(name);
    const std::string body = read_file(entry.path());
    const json::object doc = json::parse(body).as_object();
    const json::object& choice = doc.at("choices").as_array()[0].as_object();
    const json::object& msg = choice.at("message").as_object();

    Result<ir::Response> r = decode_response(body);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(r->id, doc.at("id").as_string());
    EXPECT_EQ(r->model, doc.at("model").as_string());
    EXPECT_EQ(r->created, doc.at("created").to_number<std::int64_t>());

    std::string text;
    std::vector<const ir::ContentPart*> calls;
    for (const ir::ContentPart& p : r->content) {
      if (p.kind == ir::PartKind::kText) {
        text += p.text;
      } else if (p.kind == ir::PartKind::kToolCall) {
        calls.push_back(&p);
      }
    }
    EXPECT_EQ(text, msg.at("content").is_string() ? std::string(msg.at("content").as_string())
                                                  : std::string());
    const json::value* tc = msg.if_contains("tool_calls");
    const std::size_t expected_calls = tc ? tc->as_array().size() : 0;
    ASSERT_EQ(calls.size(), expected_calls);
    for (std::size_t i = 0; i < expected_calls; ++i) {
      const json::object& c = tc->as_array()[i].as_object();
      EXPECT_EQ(calls[i]->id, c.at("id").as_string());
      EXPECT_EQ(calls[i]->name, c.at("function").at("name").as_string());
      EXPECT_EQ(calls[i]->arguments, c.at("function").at("arguments").as_string());
    }
    EXPECT_EQ(ir::to_string(r->finish), choice.at("finish_reason").as_string());

    const json::object& u = doc.at("usage").as_object();
    ASSERT_TRUE(r->usage.has_value());
    EXPECT_EQ(r->usage->input_tokens, u64(u.at("prompt_tokens")));
    EXPECT_EQ(r->usage->output_tokens, u64(u.at("completion_tokens")));
    EXPECT_EQ(r->usage->cache_read_tokens, u64(u.at("prompt_tokens_details").at("cached_tokens")));
    EXPECT_EQ(r->usage->reasoning_tokens,
              u64(u.at("completion_tokens_details").at("reasoning_tokens")));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(OpenAiIrDecodeResponse, KnownFixtureNumbers) {
  Result<ir::Response> cached =
      decode_response(read_file(kDir / "chat-completion-cached-tokens.json"));
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->usage->input_tokens, 10122u);  // includes the cached part (OpenAI)
  EXPECT_EQ(cached->usage->cache_read_tokens, 9984u);
  EXPECT_EQ(cached->usage->output_tokens, 1u);
  ASSERT_EQ(cached->content.size(), 1u);
  EXPECT_EQ(cached->content[0].text, "ok");
  EXPECT_EQ(cached->finish, ir::FinishReason::kStop);

  Result<ir::Response> tool = decode_response(read_file(kDir / "chat-completion-tool-call.json"));
  ASSERT_TRUE(tool.has_value());
  ASSERT_EQ(tool->content.size(), 1u);  // content null -> no text part
  EXPECT_EQ(tool->content[0].kind, ir::PartKind::kToolCall);
  EXPECT_EQ(tool->content[0].id, "call_8fxy20OEu9ulvvaa5b5CzVA4");
  EXPECT_EQ(tool->content[0].name, "get_current_weather");
  EXPECT_EQ(tool->content[0].arguments, R"({"location":"Boston, MA","unit":"fahrenheit"})");
  EXPECT_EQ(tool->finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(tool->usage->reasoning_tokens, 256u);
  EXPECT_EQ(tool->usage->input_tokens, 162u);
}

TEST(OpenAiIrDecodeResponse, ErrorFixturesBecomeUpstreamStatusErrors) {
  struct Case {
    const char* file;
    int status;
    const char* code;
    const char* message_start;
  };
  const Case cases[] = {
      {"error-400-unsupported-parameter.json", 400, "unsupported_parameter",
       "Unsupported parameter"},
      {"error-404-model-not-found.json", 404, "model_not_found", "The model `gpt-4.1-nano-wrong`"},
      {"error-429-insufficient-quota.json", 429, "insufficient_quota", "You exceeded"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    Result<ir::Response> r = decode_response(read_file(kDir / c.file));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamStatus);
    EXPECT_EQ(r.error().http_status(), c.status);
    EXPECT_EQ(r.error().code(), c.code);
    EXPECT_EQ(r.error().message().rfind(c.message_start, 0), 0u) << r.error().message();
  }
  Result<ir::Response> vllm = decode_response(
      R"({"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400})");
  ASSERT_FALSE(vllm.has_value());
  EXPECT_EQ(vllm.error().http_status(), 400);
  EXPECT_EQ(vllm.error().message(), "max_tokens is too large");
}

TEST(OpenAiIrDecodeResponse, MalformedBodiesAreProtocolErrors) {
  for (const char* body :
       {"", "{", "[]", "null", R"({"id":"x"})", R"({"choices":[]})", R"({"choices":[{"index":0}]})",
        R"({"choices":[{"message":{"content":42}}]})",
        R"({"choices":[{"message":{"tool_calls":{}}}]})"}) {
    Result<ir::Response> r = decode_response(body);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamProtocol) << body;
  }
  std::string deep = R"({"choices":[{"message":{"content":"x"}}],"x":)";
  deep += std::string(80, '[') + std::string(80, ']') + "}";
  EXPECT_FALSE(decode_response(deep).has_value());
}

TEST(OpenAiIrDecodeResponse, ReasoningContentRefusalAndFinishMapping) {
  // vLLM / DeepSeek put the chain of thought in message.reasoning_content.
  Result<ir::Response> r = decode_response(R"({
    "id":"chatcmpl-1","object":"chat.completion","created":1,"model":"deepseek-reasoner",
    "choices":[{"index":0,"message":{"role":"assistant","content":"42",
      "reasoning_content":"6 times 7"},"finish_reason":"length"}],
    "usage":{"prompt_tokens":5,"completion_tokens":9}})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->content.size(), 2u);
  EXPECT_EQ(r->content[0].kind, ir::PartKind::kReasoning);
  EXPECT_EQ(r->content[0].text, "6 times 7");
  EXPECT_EQ(r->content[1].text, "42");
  EXPECT_EQ(r->finish, ir::FinishReason::kLength);
  EXPECT_EQ(r->usage->cache_read_tokens, 0u);

  Result<ir::Response> refusal = decode_response(R"({"id":"c","model":"m","choices":[{"index":0,
    "message":{"role":"assistant","content":null,"refusal":"I can't help with that."},
    "finish_reason":"content_filter"}]})");
  ASSERT_TRUE(refusal.has_value());
  ASSERT_EQ(refusal->content.size(), 1u);
  EXPECT_EQ(refusal->content[0].text, "I can't help with that.");
  EXPECT_EQ(refusal->finish, ir::FinishReason::kContentFilter);
  EXPECT_FALSE(refusal->usage.has_value());

  EXPECT_EQ(finish_reason_from_openai("function_call"), ir::FinishReason::kToolCalls);
  EXPECT_EQ(finish_reason_from_openai("eos"), ir::FinishReason::kOther);
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
