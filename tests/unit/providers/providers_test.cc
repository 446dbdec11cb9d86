#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "codec/sse.h"
#include "protocol/openai_chat/stream_sniffer.h"
#include "providers/base_url.h"
#include "providers/mock/mock_provider.h"

namespace sluice::providers {
namespace {

TEST(BaseUrl, ParsesSchemesPortsAndPrefix) {
  auto a = parse_base_url("https://api.openai.com/v1/");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "api.openai.com");
  EXPECT_EQ(a->port, 443);
  EXPECT_EQ(a->path_prefix, "/v1");
  EXPECT_EQ(a->host_header, "api.openai.com");

  auto b = parse_base_url("http://127.0.0.1:11434/v1");
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->tls);
  EXPECT_EQ(b->port, 11434);
  EXPECT_EQ(b->host_header, "127.0.0.1:11434");

  auto c = parse_base_url("http://[::1]:8000");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->path_prefix, "");
}

TEST(BaseUrl, RejectsWhatCannotBeAnUpstream) {
  for (const char* bad : {"ftp://x/v1", "https://user:pw@x/v1", "https://x/v1?a=b", "https://x/#f",
                          "not a url", "https://x:0/"}) {
    EXPECT_FALSE(parse_base_url(bad).has_value()) << bad;
  }
}

protocol::openai_chat::ChatRequest chat(const char* body) {
  auto r = protocol::openai_chat::decode_chat_request(body);
  EXPECT_TRUE(r.has_value());
  return std::move(*r);
}

TEST(MockProvider, ChatIsDeterministicAndOpenAiShaped) {
  auto req = chat(R"({"model":"a","messages":[{"role":"user","content":"ping"}]})");
  MockReply a = mock_chat(req, "mock-1");
  MockReply b = mock_chat(req, "mock-1");
  EXPECT_EQ(a.body, b.body);
  auto v = boost::json::parse(a.body);
  EXPECT_EQ(v.at("object").as_string(), "chat.completion");
  EXPECT_EQ(v.at("model").as_string(), "mock-1");
  EXPECT_NE(std::string(v.at("choices").at(0).at("message").at("content").as_string()).find("ping"),
            std::string::npos);
  EXPECT_GT(v.at("usage").at("total_tokens").as_int64(), 0);
}

TEST(MockProvider, StreamEndsWithUsageAndDone) {
  auto req = chat(R"({"model":"a","stream":true,"messages":[{"role":"user","content":"ping"}]})");
  MockReply r = mock_chat(req, "mock-1");
  ASSERT_GE(r.events.size(), 4u);
  EXPECT_EQ(r.events.back(), "data: [DONE]\n\n");
  protocol::openai_chat::StreamSniffer monitor(true);
  codec::SseParser parser;
  int dropped = 0;
  for (const auto& e : r.events) {
    parser.feed(e);
    codec::SseEvent ev;
    while (parser.next(ev) == codec::SseParser::Status::kEvent) {
      dropped += monitor.on_event(ev) == protocol::openai_chat::StreamSniffer::Action::kDrop;
    }
  }
  EXPECT_EQ(dropped, 1);
  EXPECT_TRUE(monitor.done());
  ASSERT_TRUE(monitor.usage().has_value());
  EXPECT_GT(monitor.usage()->output_tokens, 0u);
}

TEST(MockProvider, EmbeddingsHonourDimensionsAndFormat) {
  auto req = protocol::openai_chat::decode_embeddings_request(
      R"({"model":"e","input":["a","b"],"dimensions":16})");
  ASSERT_TRUE(req.has_value());
  auto v = boost::json::parse(mock_embeddings(*req, "e-1", 8).body);
  ASSERT_EQ(v.at("data").as_array().size(), 2u);
  EXPECT_EQ(v.at("data").at(0).at("embedding").as_array().size(), 16u);
  auto b64 = protocol::openai_chat::decode_embeddings_request(
      R"({"model":"e","input":"a","encoding_format":"base64"})");
  auto w = boost::json::parse(mock_embeddings(*b64, "e-1", 8).body);
  // 8 float32 = 32 bytes = 44 base64 characters with padding.
  EXPECT_EQ(w.at("data").at(0).at("embedding").as_string().size(), 44u);
}

}  // namespace
}  // namespace sluice::providers
