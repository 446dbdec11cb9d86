#include "protocol/openai_chat/stream_sniffer.h"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/openai_chat/errors.h"

namespace sluice::protocol::openai_chat {
namespace {

std::string fixture(std::string_view name) { return test::read_fixture("openai-chat", name); }

struct Relayed {
  std::string forwarded;
  StreamSniffer monitor;
};

Relayed relay(const std::string& bytes, bool strip) {
  Relayed r{{}, StreamSniffer(strip)};
  test::for_each_sse_event(bytes, 0, [&](const codec::SseEvent& ev) {
    if (r.monitor.on_event(ev) == StreamSniffer::Action::kForward) {
      r.forwarded.append(ev.raw);
    }
  });
  return r;
}

TEST(ChatStreamSniffer, ExtractsUsageAndStripsTheUsageChunkWhenAsked) {
  const std::string bytes = fixture("chat-stream-text-include-usage.sse");
  Relayed kept = relay(bytes, false);
  EXPECT_EQ(kept.forwarded, bytes);  // passthrough is byte-identical
  ASSERT_TRUE(kept.monitor.usage().has_value());
  EXPECT_GT(kept.monitor.usage()->input_tokens, 0u);
  EXPECT_GT(kept.monitor.usage()->output_tokens, 0u);
  EXPECT_TRUE(kept.monitor.done());
  EXPECT_EQ(kept.monitor.finish_reason(), "stop");

  Relayed stripped = relay(bytes, true);
  EXPECT_EQ(stripped.monitor.usage(), kept.monitor.usage());
  EXPECT_EQ(stripped.forwarded.find("\"choices\":[]"), std::string::npos);
  EXPECT_LT(stripped.forwarded.size(), bytes.size());
  EXPECT_NE(stripped.forwarded.find("data: [DONE]"), std::string::npos);
}

TEST(ChatStreamSniffer, ReadsReasoningTokensAndLengthFinish) {
  Relayed r = relay(fixture("chat-stream-finish-length-usage.sse"), true);
  ASSERT_TRUE(r.monitor.usage().has_value());
  EXPECT_EQ(r.monitor.finish_reason(), "length");
  EXPECT_GT(r.monitor.usage()->reasoning_tokens, 0u);
}

TEST(ChatStreamSniffer, ToolCallStreamsPassUnchanged) {
  for (const char* name : {"chat-stream-tool-call.sse", "chat-stream-parallel-tool-calls.sse",
                           "chat-stream-parallel-tool-calls-2.sse"}) {
    const std::string bytes = fixture(name);
    Relayed r = relay(bytes, false);
    EXPECT_EQ(r.forwarded, bytes) << name;
    EXPECT_TRUE(r.monitor.done()) << name;
    EXPECT_EQ(r.monitor.finish_reason(), "tool_calls") << name;
  }
}

TEST(ChatStreamSniffer, StreamWithoutUsageHasNone) {
  Relayed r = relay(fixture("chat-stream-text.sse"), true);
  EXPECT_FALSE(r.monitor.usage().has_value());
  EXPECT_TRUE(r.monitor.done());
  EXPECT_TRUE(r.monitor.saw_output());
}

TEST(ChatStreamSniffer, NoticesInStreamErrors) {
  Relayed r = relay("data: {\"error\": {\"message\":\"overloaded\"}}\n\n", true);
  EXPECT_TRUE(r.monitor.saw_error());
  EXPECT_FALSE(r.monitor.done());
}

TEST(UsageFromResponse, ReadsCachedTokens) {
  auto u = usage_from_response(fixture("chat-completion-cached-tokens.json"));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->cache_read_tokens, 9984u);
  EXPECT_GE(u->input_tokens, u->cache_read_tokens);
}

TEST(Errors, EncodeUsesOpenAiShape) {
  auto v = boost::json::parse(encode_error(
      Error(ErrorKind::kNotFound, "nope").with_code("model_not_found").with_param("model")));
  EXPECT_EQ(v.at("error").at("message").as_string(), "nope");
  EXPECT_EQ(v.at("error").at("type").as_string(), "invalid_request_error");
  EXPECT_EQ(v.at("error").at("param").as_string(), "model");
  EXPECT_EQ(v.at("error").at("code").as_string(), "model_not_found");
}

TEST(Errors, UpstreamOpenAiErrorsPassThroughOthersAreWrapped) {
  const std::string real = fixture("error-404-model-not-found.json");
  EXPECT_EQ(normalise_upstream_error(real, 404, "p"), real);
  auto vllm = boost::json::parse(
      normalise_upstream_error(R"({"object":"error","message":"bad","code":400})", 400, "vllm"));
  EXPECT_EQ(vllm.at("error").at("message").as_string(),
            "upstream provider 'vllm' returned 400: bad");
  auto html = boost::json::parse(normalise_upstream_error("<html>502</html>", 502, "p"));
  EXPECT_EQ(html.at("error").at("type").as_string(), "server_error");
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
