// Where callers present gateway keys (IngressCodec::credential_sources, credential()) and the
// registry's union of them, which the gateway never forwards upstream.

#include <algorithm>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "../support/fake_head.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/gemini/conventions.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/registry.h"

namespace sluice::protocol {
namespace {

using Head = test::FakeHead;

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

const IngressCodec& ingress(ProtocolId protocol) {
  const IngressCodec* codec = ingress_of(protocol);
  EXPECT_NE(codec, nullptr) << protocol;
  return *codec;
}

TEST(CredentialSources, EveryOneOfEveryIngressIsInTheRefusedSets) {
  for (const IngressCodec* codec : ingress_codecs()) {
    ASSERT_FALSE(codec->credential_sources().empty()) << codec->protocol();
    for (const CredentialSource& source : codec->credential_sources()) {
      SCOPED_TRACE(std::string(codec->protocol()) + " " + std::string(source.name));
      if (source.kind == CredentialSource::Kind::kQuery) {
        const auto params = credential_query_params();
        EXPECT_NE(std::find(params.begin(), params.end(), source.name), params.end());
        EXPECT_EQ(without_credentials("/p?a=1&" + std::string(source.name) + "=secret&b=2"),
                  "/p?a=1&b=2");
      } else {
        EXPECT_TRUE(is_credential_header(source.name));
        EXPECT_TRUE(is_credential_header(upper(source.name))) << "header names have no case";
      }
    }
  }
}

TEST(CredentialSources, GeminiKeysAreAmongThem) {
  // The header a Gemini caller sends its gateway key in was once missing from the headers the
  // gateway refuses to forward (forward_headers: ["x-goog-*"] sent it upstream).
  EXPECT_TRUE(is_credential_header("x-goog-api-key"));
  EXPECT_TRUE(is_credential_header("X-Goog-Api-Key"));
  const auto params = credential_query_params();
  EXPECT_NE(std::find(params.begin(), params.end(), "key"), params.end());
  for (std::string_view name : {"authorization", "x-api-key", "api-key"}) {
    EXPECT_TRUE(is_credential_header(name)) << name;
  }
  for (std::string_view other : {"x-goog-user-project", "anthropic-beta", "content-type", "key"}) {
    EXPECT_FALSE(is_credential_header(other)) << other;
  }
}

TEST(CredentialSources, CredentialReadsOnlyItsSourcesInOrder) {
  const IngressCodec& chat = ingress(openai_chat::kChatProtocol);
  EXPECT_EQ(chat.credential(Head("/v1/chat/completions", {{"authorization", "Bearer  k1"}})), "k1");
  EXPECT_EQ(chat.credential(Head("/v1/chat/completions", {{"x-api-key", "k2"}, {"api-key", "k3"}})),
            "k2");
  EXPECT_EQ(chat.credential(Head("/v1/chat/completions", {{"api-key", "k3"}})), "k3");
  EXPECT_EQ(chat.credential(Head("/v1/chat/completions",
                                 {{"authorization", "Basic dXNlcg=="}, {"x-api-key", "k2"}})),
            "")
      << "another scheme is no gateway key, and ends the search";
  EXPECT_EQ(chat.credential(Head("/v1/chat/completions?key=k4", {{"x-goog-api-key", "k5"}})), "")
      << "Gemini's sources are Gemini's";

  const IngressCodec& messages = ingress(anthropic::kMessagesProtocol);
  EXPECT_EQ(messages.credential(Head("/v1/messages", {{"x-api-key", "k2"}})), "k2");

  const IngressCodec& gemini = ingress(gemini::kGeminiProtocol);
  const std::string path = "/v1beta/models/m:generateContent";
  EXPECT_EQ(gemini.credential(Head(path + "?key=k4", {{"x-goog-api-key", "k5"}})), "k5");
  EXPECT_EQ(gemini.credential(Head(path + "?alt=sse&key=k4", {{"authorization", "Bearer k1"}})),
            "k4");
  EXPECT_EQ(gemini.credential(Head(path + "?key=", {{"authorization", "Bearer k1"}})), "k1");
  EXPECT_EQ(gemini.credential(Head(path, {})), "");
}

TEST(CredentialSources, WithoutCredentialsKeepsEverythingElseInOrder) {
  EXPECT_EQ(without_credentials("/responses/resp_1"), "/responses/resp_1");
  EXPECT_EQ(without_credentials("/responses/resp_1?key=sk-1"), "/responses/resp_1");
  EXPECT_EQ(without_credentials("/responses/resp_1?key"), "/responses/resp_1");
  EXPECT_EQ(without_credentials("/r?key=a&stream=true&key=b&include=x"),
            "/r?stream=true&include=x");
  EXPECT_EQ(without_credentials("/r?keys=1&akey=2&key_=3"), "/r?keys=1&akey=2&key_=3");
  EXPECT_EQ(without_credentials("/r?"), "/r");
}

}  // namespace
}  // namespace sluice::protocol
