// Provider adapters as built from config: wire protocol, request framing and authentication,
// failure classification, relayed and passed headers, option defaults.

#include <cstdlib>
#include <ctime>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "aws/sigv4.h"
#include "codec/sse.h"
#include "providers/adapter.h"
#include "providers/registry.h"
#include "providers/vertex/vertex_adapter.h"

namespace sluice::providers {
namespace {

// An Exchange that only has headers, for classify_failure.
class HeadersOnly final : public Exchange {
 public:
  using Fields = std::vector<std::pair<std::string, std::string>>;
  explicit HeadersOnly(Fields h) : headers_(std::move(h)) {}
  int status() const override { return 0; }
  std::string_view header(std::string_view name) const override {
    for (const auto& [n, v] : headers_) {
      if (iequals(n, name)) {
        return v;
      }
    }
    return {};
  }
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)>) const override {}
  const ExchangeTimings& timings() const override { return timings_; }
  Awaitable<Result<std::size_t>> read_some(std::string&) override { co_return std::size_t{0}; }
  Awaitable<Result<std::string>> read_all(std::size_t) override { co_return std::string(); }
  void abort() override {}

 private:
  std::vector<std::pair<std::string, std::string>> headers_;
  ExchangeTimings timings_;
};

struct Built {
  std::shared_ptr<const config::Config> config;
  std::unique_ptr<ProviderAdapter> adapter;
};

Built build(const std::string& provider_yaml) {
  config::LoadOptions options;
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto cfg = load_config_string("version: 1\nauth: none\nproviders:\n" + provider_yaml +
                                    "routes:\n  - alias: a\n    provider: p\n    model: m\n",
                                "test.yaml", options);
  EXPECT_TRUE(cfg.has_value()) << cfg.error().message();
  Built b;
  b.config = *cfg;
  auto adapter = make_adapter(b.config->providers.at(0));
  EXPECT_TRUE(adapter.has_value()) << adapter.error().message();
  b.adapter = std::move(*adapter);
  return b;
}

// A translated request's body for `adapter`: its wire protocol's codec, its options.
Result<std::string> translated_body(const ProviderAdapter& adapter, const ir::Request& request,
                                    std::string_view model, bool stream) {
  const protocol::UpstreamCodec* codec = adapter.upstream_codec(protocol::Operation::kChat);
  EXPECT_NE(codec, nullptr);
  return codec->encode_request(request, adapter.encode_target(model, stream));
}

ir::Request one_message(std::optional<std::uint32_t> max_tokens) {
  ir::Request r;
  r.messages.push_back(ir::Message{ir::Role::kUser, {ir::ContentPart::make_text("x")}, {}});
  r.max_tokens = max_tokens;
  return r;
}

std::string head_for(const ProviderAdapter& adapter, bool stream,
                     std::vector<Header> forwarded = {}) {
  std::string head;
  codec::HeadWriter writer(head);
  RequestSpec spec;
  spec.model = "m";
  spec.stream = stream;
  spec.request_id = "rid";
  spec.content_length = 2;
  spec.forwarded = forwarded;
  adapter.write_request_head(spec, "{}", writer);
  return head;
}

// The head for `spec` with the protocol set (passthrough of a Responses caller), or a retrieval.
std::string head_with(const ProviderAdapter& adapter, protocol::ProtocolId wire,
                      std::string_view resource = {}) {
  std::string head;
  codec::HeadWriter writer(head);
  RequestSpec spec;
  spec.protocol = wire;
  spec.resource = resource;
  spec.model = "m";
  spec.request_id = "rid";
  spec.content_length = resource.empty() ? 2 : 0;
  if (resource.empty()) {
    adapter.write_request_head(spec, "{}", writer);
  } else if (!adapter.write_retrieval_head(spec, writer)) {
    return "(cannot retrieve)";
  }
  return head;
}

TEST(OpenAiAdapter, SpeaksChatCompletionsAndResponses) {
  Built b = build("  - id: p\n    adapter: openai\n    api_key: sk-openai-secret-0000001\n");
  const ProviderAdapter& a = *b.adapter;
  // Translated traffic keeps Chat Completions; Responses callers are passed through.
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kChat), "openai_chat");
  EXPECT_TRUE(a.speaks("openai_chat", protocol::Operation::kChat));
  EXPECT_TRUE(a.speaks("openai_responses", protocol::Operation::kChat));
  EXPECT_FALSE(a.speaks("openai_responses", protocol::Operation::kEmbeddings));
  EXPECT_FALSE(a.speaks("anthropic_messages", protocol::Operation::kChat));
  EXPECT_TRUE(a.speaks("openai_embeddings", protocol::Operation::kEmbeddings));

  std::string head = head_with(a, "openai_responses");
  EXPECT_EQ(head.rfind("POST /v1/responses HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_EQ(head_with(a, "openai_chat").rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u);

  head = head_with(a, "openai_responses", "/responses/resp_1?include[]=x");
  EXPECT_EQ(head.rfind("GET /v1/responses/resp_1?include[]=x HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\nAuthorization: Bearer sk-openai-secret-0000001\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nx-request-id: rid\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos) << "a GET has no body";
  EXPECT_EQ(head.find("Content-Type"), std::string::npos);
  EXPECT_TRUE(head.ends_with("\r\n\r\n"));
  EXPECT_EQ(head_with(a, "anthropic_messages", "/messages/x"), "(cannot retrieve)");
}

TEST(OpenAiAdapter, ResponsesApiCanBeTurnedOff) {
  Built b = build(
      "  - id: p\n    adapter: openai\n    base_url: http://127.0.0.1:9/v1\n"
      "    responses_api: false\n");
  const ProviderAdapter& a = *b.adapter;
  EXPECT_FALSE(a.speaks("openai_responses", protocol::Operation::kChat));
  EXPECT_TRUE(a.speaks("openai_chat", protocol::Operation::kChat));
  EXPECT_EQ(head_with(a, "openai_responses", "/responses/resp_1"), "(cannot retrieve)");
}

TEST(AzureOpenAiAdapter, ResponsesLiveOnTheV1Surface) {
  Built deployments = build(
      "  - id: p\n    adapter: azure_openai\n    base_url: https://res.openai.azure.com/openai\n"
      "    api_key: azure-secret-key-0000000001\n");
  const ProviderAdapter& d = *deployments.adapter;
  EXPECT_TRUE(d.speaks("openai_responses", protocol::Operation::kChat));
  std::string head = head_with(d, "openai_responses");
  // No deployment segment and no dated api-version: the v1 API takes the model in the body.
  EXPECT_EQ(head.rfind("POST /openai/v1/responses HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\napi-key: azure-secret-key-0000000001\r\n"), std::string::npos);
  head = head_with(d, "openai_responses", "/responses/resp_9");
  EXPECT_EQ(head.rfind("GET /openai/v1/responses/resp_9 HTTP/1.1\r\n", 0), 0u) << head;

  Built v1 = build(
      "  - id: p\n    adapter: azure_openai\n    base_url: https://res.openai.azure.com/openai\n"
      "    api_style: v1\n    api_version: preview\n");
  head = head_with(*v1.adapter, "openai_responses");
  EXPECT_EQ(head.rfind("POST /openai/v1/responses?api-version=preview HTTP/1.1\r\n", 0), 0u)
      << head;
  head = head_with(*v1.adapter, "openai_responses", "/responses/resp_9/input_items?limit=2");
  EXPECT_EQ(
      head.rfind("GET /openai/v1/responses/resp_9/input_items?limit=2&api-version=preview ", 0), 0u)
      << head;
}

TEST(AnthropicAdapter, SpeaksOnlyMessagesAndRetrievesNothing) {
  Built b = build("  - id: p\n    adapter: anthropic\n");
  EXPECT_FALSE(b.adapter->speaks("openai_responses", protocol::Operation::kChat));
  EXPECT_TRUE(b.adapter->speaks("anthropic_messages", protocol::Operation::kChat));
  EXPECT_EQ(head_with(*b.adapter, "openai_responses", "/responses/resp_1"), "(cannot retrieve)");
}

TEST(AnthropicAdapter, FramesMessagesWithItsKeyVersionAndTheCallersBeta) {
  Built b = build("  - id: p\n    adapter: anthropic\n    api_key: sk-ant-secret-000000000001\n");
  const ProviderAdapter& a = *b.adapter;
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kChat), "anthropic_messages");
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kEmbeddings), "");
  ASSERT_NE(a.endpoint(), nullptr);
  EXPECT_EQ(a.endpoint()->host, "api.anthropic.com");
  EXPECT_TRUE(a.endpoint()->tls);
  EXPECT_TRUE(a.passes_caller_header("anthropic-beta"));
  EXPECT_TRUE(a.passes_caller_header("Anthropic-Beta"));
  EXPECT_FALSE(a.passes_caller_header("x-api-key"));
  EXPECT_TRUE(a.forwards_caller_headers());
  const std::string head = head_for(a, true, {{"anthropic-beta", "context-management-2025-06-27"}});
  EXPECT_EQ(head.rfind("POST /v1/messages HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\nHost: api.anthropic.com\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nx-api-key: sk-ant-secret-000000000001\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nanthropic-version: 2023-06-01\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nanthropic-beta: context-management-2025-06-27\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nAccept: text/event-stream\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Authorization"), std::string::npos);
  ASSERT_EQ(a.secrets().size(), 1u);
  EXPECT_TRUE(a.relays_response_header("anthropic-ratelimit-tokens-remaining"));
  EXPECT_TRUE(a.relays_response_header("retry-after"));
  EXPECT_FALSE(a.relays_response_header("set-cookie"));
}

TEST(AnthropicAdapter, OptionsAndBaseUrl) {
  Built b = build(
      "  - id: p\n    adapter: anthropic\n    base_url: http://127.0.0.1:9/anthropic/v1\n"
      "    anthropic_version: 2099-01-01\n    default_max_tokens: 512\n");
  const std::string head = head_for(*b.adapter, false);
  EXPECT_EQ(head.rfind("POST /anthropic/v1/messages HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\nanthropic-version: 2099-01-01\r\n"), std::string::npos);
  EXPECT_EQ(head.find("x-api-key"), std::string::npos) << "no key configured, none sent";

  auto body = translated_body(*b.adapter, one_message(std::nullopt), "claude", false);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_NE(body->find("\"max_tokens\":512"), std::string::npos)
      << "default_max_tokens reaches the codec: " << *body;
}

TEST(AnthropicAdapter, TranslatesWithTheMessagesCodecAndItsOptions) {
  Built plain = build("  - id: p\n    adapter: anthropic\n");
  EXPECT_EQ(plain.adapter->upstream_codec(protocol::Operation::kChat)->protocol(),
            "anthropic_messages");
  EXPECT_EQ(plain.adapter->upstream_codec(protocol::Operation::kEmbeddings), nullptr);
  ir::Request r = one_message(std::nullopt);
  r.reasoning.enabled = true;
  r.reasoning.effort = "low";
  auto budget = translated_body(*plain.adapter, r, "claude", true);
  ASSERT_TRUE(budget.has_value()) << budget.error().message();
  EXPECT_NE(budget->find("\"max_tokens\":4096"), std::string::npos) << *budget;
  EXPECT_NE(budget->find("\"budget_tokens\""), std::string::npos) << *budget;
  EXPECT_NE(budget->find("\"stream\":true"), std::string::npos) << *budget;

  Built adaptive = build("  - id: p\n    adapter: anthropic\n    adaptive_thinking: true\n");
  auto body = translated_body(*adaptive.adapter, r, "claude", false);
  ASSERT_TRUE(body.has_value()) << body.error().message();
  EXPECT_NE(body->find(R"("thinking":{"type":"adaptive"})"), std::string::npos) << *body;
  EXPECT_EQ(body->find("budget_tokens"), std::string::npos) << *body;
}

TEST(AnthropicAdapter, OptionsOfOtherAdaptersAreConfigErrors) {
  config::LoadOptions options;
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto cfg = load_config_string(
      "version: 1\nauth: none\nproviders:\n  - id: p\n    adapter: openai\n"
      "    anthropic_version: x\nroutes:\n  - alias: a\n    provider: p\n    model: m\n",
      "test.yaml", options);
  ASSERT_FALSE(cfg.has_value());
  EXPECT_EQ(cfg.error().message(),
            "test.yaml:6:24: providers[0].anthropic_version: only valid for adapter anthropic");
}

TEST(ProviderAdapter, ClassifiesFailuresFromAnyDialect) {
  Built b = build("  - id: p\n    adapter: anthropic\n");
  const ProviderAdapter& a = *b.adapter;
  Error overloaded = a.classify_failure(
      529, HeadersOnly(HeadersOnly::Fields{{"retry-after", "7"}}),
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
  EXPECT_EQ(overloaded.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(overloaded.http_status(), 529);
  EXPECT_EQ(overloaded.message(), "Overloaded");
  EXPECT_EQ(overloaded.code(), "overloaded_error");
  EXPECT_EQ(overloaded.retry_after_seconds(), 7u);
  EXPECT_TRUE(overloaded.retryable());

  Error ms =
      a.classify_failure(429, HeadersOnly(HeadersOnly::Fields{{"retry-after-ms", "1200"}}), "");
  EXPECT_EQ(ms.retry_after_seconds(), 2u) << "rounded up";

  Error refused = a.classify_failure(
      401, HeadersOnly(HeadersOnly::Fields{}),
      R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})");
  EXPECT_EQ(refused.http_status(), 502);
  EXPECT_EQ(refused.code(), "upstream_auth_failed");

  Error html =
      a.classify_failure(502, HeadersOnly(HeadersOnly::Fields{}), "<html>bad gateway</html>");
  EXPECT_EQ(html.message(), "upstream provider 'p' returned 502");
  Error detail =
      a.classify_failure(422, HeadersOnly(HeadersOnly::Fields{}), R"({"detail":"field required"})");
  EXPECT_EQ(detail.message(), "upstream provider 'p' returned 422: field required");
}

TEST(OpenAiAdapter, MaxTokensFieldDefaultsByHost) {
  const ir::Request r = one_message(7);
  for (const auto& [yaml, field] : std::vector<std::pair<std::string, std::string>>{
           {"", "max_completion_tokens"},
           {"    base_url: http://vllm.internal:8000/v1\n", "max_tokens"},
           {"    base_url: https://api.openai.com.example.net/v1\n", "max_tokens"},
           {"    base_url: http://vllm.internal:8000/v1\n    max_tokens_field: "
            "max_completion_tokens\n",
            "max_completion_tokens"},
           {"    max_tokens_field: max_tokens\n", "max_tokens"}}) {
    Built b = build("  - id: p\n    adapter: openai\n" + yaml);
    EXPECT_EQ(b.adapter->upstream_codec(protocol::Operation::kChat)->protocol(), "openai_chat");
    auto body = translated_body(*b.adapter, r, "m", false);
    ASSERT_TRUE(body.has_value());
    EXPECT_NE(body->find("\"" + field + "\":7"), std::string::npos) << yaml << *body;
  }
}

TEST(AzureOpenAiAdapter, DeploymentPathsApiVersionAndKeyHeader) {
  Built b = build(
      "  - id: p\n    adapter: azure_openai\n    base_url: https://res.openai.azure.com/openai\n"
      "    api_key: azure-secret-key-0000000001\n");
  const ProviderAdapter& a = *b.adapter;
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kChat), "openai_chat");
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kEmbeddings), "openai_embeddings");
  std::string head;
  codec::HeadWriter writer(head);
  RequestSpec spec;
  spec.model = "gpt 4o/mini";  // a deployment name needing escapes
  spec.content_length = 2;
  a.write_request_head(spec, "{}", writer);
  EXPECT_EQ(head.rfind("POST /openai/deployments/gpt%204o%2Fmini/chat/completions"
                       "?api-version=2024-10-21 HTTP/1.1\r\n",
                       0),
            0u)
      << head;
  EXPECT_NE(head.find("\r\napi-key: azure-secret-key-0000000001\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Authorization"), std::string::npos);

  spec.operation = protocol::Operation::kEmbeddings;
  spec.model = "embed";
  codec::HeadWriter again(head);
  a.write_request_head(spec, "{}", again);
  EXPECT_EQ(head.rfind("POST /openai/deployments/embed/embeddings?api-version=2024-10-21 ", 0), 0u)
      << head;

  auto body = translated_body(a, one_message(9), "dep", false);
  ASSERT_TRUE(body.has_value());
  EXPECT_NE(body->find("\"max_completion_tokens\":9"), std::string::npos) << *body;
}

TEST(AzureOpenAiAdapter, V1StyleAndRequiredBaseUrl) {
  Built b = build(
      "  - id: p\n    adapter: azure_openai\n    base_url: https://res.openai.azure.com/openai\n"
      "    api_style: v1\n");
  std::string head = head_for(*b.adapter, false);
  EXPECT_EQ(head.rfind("POST /openai/v1/chat/completions HTTP/1.1\r\n", 0), 0u) << head;

  config::LoadOptions options;
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto cfg = load_config_string(
      "version: 1\nauth: none\nproviders:\n  - id: p\n    adapter: azure_openai\n"
      "routes:\n  - alias: a\n    provider: p\n    model: m\n",
      "test.yaml", options);
  ASSERT_TRUE(cfg.has_value());
  auto adapter = make_adapter((*cfg)->providers.at(0));
  ASSERT_FALSE(adapter.has_value());
  EXPECT_NE(adapter.error().message().find("base_url is required"), std::string::npos);
}

TEST(AzureOpenAiAdapter, ContentFilterRefusalsKeepTheirCode) {
  Built b = build(
      "  - id: p\n    adapter: azure_openai\n    base_url: https://res.openai.azure.com/openai\n");
  Error filtered = b.adapter->classify_failure(
      400, HeadersOnly(HeadersOnly::Fields{}),
      R"({"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}})");
  EXPECT_EQ(filtered.http_status(), 400);
  EXPECT_EQ(filtered.code(), "content_filter");
  EXPECT_FALSE(filtered.retryable()) << "a refusal is not retried";
}

TEST(GeminiAdapter, FramesGenerateContentWithTheKeyHeaderAndTheModelInThePath) {
  Built b = build("  - id: p\n    adapter: gemini\n    api_key: AIza-secret-0000000001\n");
  const ProviderAdapter& a = *b.adapter;
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kChat), "gemini");
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kEmbeddings), "");
  ASSERT_NE(a.endpoint(), nullptr);
  EXPECT_EQ(a.endpoint()->host, "generativelanguage.googleapis.com");
  EXPECT_TRUE(a.endpoint()->tls);
  std::string head = head_for(a, false);
  EXPECT_EQ(head.rfind("POST /v1beta/models/m:generateContent HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\nHost: generativelanguage.googleapis.com\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nx-goog-api-key: AIza-secret-0000000001\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Authorization"), std::string::npos);
  EXPECT_EQ(head.find("key="), std::string::npos) << "never the key in the URL";
  head = head_for(a, true);
  EXPECT_EQ(head.rfind("POST /v1beta/models/m:streamGenerateContent?alt=sse HTTP/1.1\r\n", 0), 0u)
      << head;
  EXPECT_NE(head.find("\r\nAccept: text/event-stream\r\n"), std::string::npos);
  ASSERT_EQ(a.secrets().size(), 1u);
  EXPECT_TRUE(a.relays_response_header("retry-after"));

  // A configured prefix, a "models/" prefix in the route's model, a name needing escapes.
  Built local =
      build("  - id: p\n    adapter: gemini\n    base_url: http://127.0.0.1:9/gemini/v1beta\n");
  std::string h;
  codec::HeadWriter writer(h);
  RequestSpec spec;
  spec.model = "models/tuned:v2";
  spec.stream = true;
  local.adapter->write_request_head(spec, "{}", writer);
  EXPECT_EQ(h.rfind("POST /gemini/v1beta/models/tuned%3Av2:streamGenerateContent?alt=sse ", 0), 0u)
      << h;
  EXPECT_EQ(h.find("x-goog-api-key"), std::string::npos) << "no key configured, none sent";
}

// The value of field `name` in an HTTP head ("" when absent).
std::string field_of(const std::string& head, const std::string& name) {
  const std::string key = "\r\n" + name + ": ";
  const std::size_t at = head.find(key);
  if (at == std::string::npos) {
    return "";
  }
  const std::size_t from = at + key.size();
  return head.substr(from, head.find("\r\n", from) - from);
}

// "20150830T123600Z" as a time point.
std::chrono::system_clock::time_point amz_time(const std::string& text) {
  std::tm tm{};
  EXPECT_NE(strptime(text.c_str(), "%Y%m%dT%H%M%SZ", &tm), nullptr) << text;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

const char* const kBedrock =
    "  - id: p\n    adapter: bedrock\n    base_url: http://127.0.0.1:9\n"
    "    headers: { x-team: blue }\n"
    "    bedrock:\n      region: eu-central-1\n      access_key_id: AKIDEXAMPLE\n"
    "      secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n"
    "      session_token: session-token-0001\n";

TEST(BedrockAdapter, SignsConverseWithSigV4OverTheHostTheBodyAndItsOwnHeaders) {
  Built b = build(kBedrock);
  const ProviderAdapter& a = *b.adapter;
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kChat), "bedrock_converse");
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kEmbeddings), "bedrock_embeddings");
  std::string head;
  codec::HeadWriter writer(head);
  RequestSpec spec;
  spec.model = "anthropic.claude-3-5-sonnet-20240620-v1:0";
  spec.content_length = 2;
  const std::vector<Header> forwarded = {{"x-caller", "c"}};
  spec.forwarded = forwarded;
  a.write_request_head(spec, "{}", writer);
  EXPECT_EQ(
      head.rfind("POST /model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse HTTP/1.1", 0),
      0u)
      << head;
  EXPECT_EQ(field_of(head, "Accept"), "application/json");
  EXPECT_EQ(field_of(head, "x-amz-security-token"), "session-token-0001");
  const std::string authorization = field_of(head, "authorization");
  EXPECT_EQ(authorization.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u)
      << authorization;
  EXPECT_NE(authorization.find("/eu-central-1/bedrock/aws4_request, SignedHeaders=content-type;"
                               "host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-team,"),
            std::string::npos)
      << "the caller's forwarded header is not signed: " << authorization;
  EXPECT_EQ(head.find("wJalrXUtnFEMI"), std::string::npos) << "never the secret";

  // The signature is the one AWS computes for this request (the signer is tested against the
  // published suite; here: the adapter gives it the request as it goes out).
  aws::Signer signer("eu-central-1", "bedrock", {.add_content_sha256 = true});
  const std::vector<aws::HeaderView> signed_headers = {
      {"host", "127.0.0.1:9"}, {"content-type", "application/json"}, {"x-team", "blue"}};
  Result<aws::Signed> expected =
      signer.sign({.method = "POST",
                   .path = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
                   .query = {},
                   .headers = signed_headers,
                   .payload = aws::Payload::bytes("{}")},
                  {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token-0001"},
                  amz_time(field_of(head, "x-amz-date")));
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(authorization, expected->headers.back().value);

  head.clear();
  spec.stream = true;
  a.write_request_head(spec, "{}", writer);
  EXPECT_NE(head.find("/converse-stream HTTP/1.1\r\n"), std::string::npos) << head;
  EXPECT_EQ(field_of(head, "Accept"), "application/vnd.amazon.eventstream");
  EXPECT_EQ(a.secrets().size(), 2u) << "the secret key and the session token";
}

TEST(BedrockAdapter, AnApiKeyIsABearerTokenAndARegionIsRequired) {
  Built b = build(
      "  - id: p\n    adapter: bedrock\n    api_key: ABSKbedrock-key-0001\n"
      "    bedrock: { region: us-west-2 }\n");
  ASSERT_NE(b.adapter->endpoint(), nullptr);
  EXPECT_EQ(b.adapter->endpoint()->host, "bedrock-runtime.us-west-2.amazonaws.com");
  EXPECT_TRUE(b.adapter->endpoint()->tls);
  const std::string head = head_for(*b.adapter, false);
  EXPECT_EQ(field_of(head, "Authorization"), "Bearer ABSKbedrock-key-0001");
  EXPECT_EQ(head.find("x-amz-date"), std::string::npos);

  if (std::getenv("AWS_REGION") == nullptr && std::getenv("AWS_DEFAULT_REGION") == nullptr) {
    config::LoadOptions options;
    options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    auto cfg = load_config_string(
        "version: 1\nauth: none\nproviders:\n  - id: p\n    adapter: bedrock\n    api_key: k\n"
        "routes:\n  - alias: a\n    provider: p\n    model: m\n",
        "test.yaml", options);
    ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
    auto adapter = make_adapter((*cfg)->providers.at(0));
    ASSERT_FALSE(adapter.has_value());
    EXPECT_NE(adapter.error().message().find("bedrock.region"), std::string::npos);
  }
}

TEST(BedrockAdapter, InvokeSendsClaudeTheMessagesBodyBedrockTakes) {
  Built b = build(
      "  - id: p\n    adapter: bedrock\n    api_key: ABSKbedrock-key-0001\n"
      "    bedrock: { region: us-west-2, api: invoke }\n");
  const ProviderAdapter& a = *b.adapter;
  EXPECT_EQ(a.wire_protocol(protocol::Operation::kChat), "anthropic_messages");
  std::string body = R"({"model":"m","max_tokens":8,"stream":true,"messages":[]})";
  a.finish_body("anthropic_messages", true, body);
  EXPECT_EQ(body, R"({"anthropic_version":"bedrock-2023-05-31","max_tokens":8,"messages":[]})");
  EXPECT_NE(head_for(a, true).find("/model/m/invoke-with-response-stream HTTP/1.1\r\n"),
            std::string::npos);
  EXPECT_NE(head_for(a, false).find("/model/m/invoke HTTP/1.1\r\n"), std::string::npos);

  // Inside a passed-through stream, AWS's exceptions are the adapter's to read.
  codec::SseEvent exception;
  exception.event = "throttlingException";
  exception.data = R"({"message":"slow down"})";
  auto failed = a.stream_failure(exception);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->http_status(), 429);
  EXPECT_TRUE(failed->retryable());
  codec::SseEvent chunk;
  chunk.event = "content_block_delta";
  EXPECT_FALSE(a.stream_failure(chunk));
}

TEST(BedrockAdapter, EmbeddingsGoToInvokeModelWithTheirBodyAsTheCodecWroteIt) {
  Built b = build(kBedrock);  // Converse for chat: embeddings still take InvokeModel
  const ProviderAdapter& a = *b.adapter;
  std::string body = R"({"model":"x","inputText":"a"})";
  a.finish_body("bedrock_embeddings", false, body);
  EXPECT_EQ(body, R"({"model":"x","inputText":"a"})") << "only Claude's Messages bodies are edited";
  std::string head;
  codec::HeadWriter writer(head);
  RequestSpec spec;
  spec.operation = protocol::Operation::kEmbeddings;
  spec.protocol = "bedrock_embeddings";
  spec.model = "amazon.titan-embed-text-v2:0";
  spec.content_length = 2;
  a.write_request_head(spec, "{}", writer);
  EXPECT_EQ(head.rfind("POST /model/amazon.titan-embed-text-v2%3A0/invoke HTTP/1.1", 0), 0u)
      << head;
  EXPECT_EQ(field_of(head, "Accept"), "application/json");
  EXPECT_NE(field_of(head, "authorization").find("/bedrock/aws4_request"), std::string::npos);
}

TEST(BedrockAdapter, ReadsTheTokenCountsBedrockStatesInHeaders) {
  Built b = build(kBedrock);
  const ProviderAdapter& a = *b.adapter;
  using Fields = HeadersOnly::Fields;
  const auto usage = [&](Fields fields) { return a.usage_from_headers(HeadersOnly(fields)); };
  EXPECT_EQ(usage(Fields{{"X-Amzn-Bedrock-Input-Token-Count", "42"}}),
            (ir::Usage{.input_tokens = 42}));
  EXPECT_EQ(usage(Fields{{"x-amzn-bedrock-input-token-count", "7"},
                         {"x-amzn-bedrock-output-token-count", "3"}}),
            (ir::Usage{.input_tokens = 7, .output_tokens = 3}));
  EXPECT_FALSE(usage(Fields{}));
  EXPECT_FALSE(usage(Fields{{"X-Amzn-Bedrock-Input-Token-Count", "4x"}}));
  EXPECT_FALSE(usage(Fields{{"X-Amzn-Bedrock-Input-Token-Count", "-1"}}));
}

TEST(BedrockAdapter, ClassifiesBedrockErrorsByTheirType) {
  Built b = build(kBedrock);
  const ProviderAdapter& a = *b.adapter;
  const auto typed = [&](int status, std::string type, std::string body) {
    return a.classify_failure(
        status,
        HeadersOnly(HeadersOnly::Fields{
            {"x-amzn-errortype", type + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}}),
        body);
  };
  Error throttled = typed(400, "ThrottlingException", R"({"message":"Too many requests"})");
  EXPECT_EQ(throttled.http_status(), 429);
  EXPECT_TRUE(throttled.retryable());
  EXPECT_EQ(throttled.code(), "ThrottlingException");
  Error invalid = typed(400, "ValidationException",
                        R"({"message":"The provided model identifier is invalid."})");
  EXPECT_EQ(invalid.http_status(), 400);
  EXPECT_FALSE(invalid.retryable());
  EXPECT_NE(invalid.message().find("model identifier is invalid"), std::string::npos);
  Error unavailable = typed(503, "ServiceUnavailableException", R"({"message":"busy"})");
  EXPECT_TRUE(unavailable.retryable());
  Error denied = typed(403, "AccessDeniedException",
                       R"({"message":"User: arn:aws:iam::123456789012:user/x is not authorized"})");
  EXPECT_EQ(denied.http_status(), 502);
  EXPECT_EQ(denied.code(), "upstream_auth_failed");
  EXPECT_EQ(denied.message().find("123456789012"), std::string::npos) << "no account id relayed";
  Error signature = typed(403, "InvalidSignatureException", R"({"message":"mismatch"})");
  EXPECT_EQ(signature.code(), "upstream_auth_failed");
  EXPECT_TRUE(a.relays_response_header("x-amzn-RequestId"));
}

TEST(GeminiAdapter, TranslatesWithTheGeminiCodecs) {
  Built b = build("  - id: p\n    adapter: gemini\n");
  auto body = translated_body(*b.adapter, one_message(9), "gemini-2.5-flash", true);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(*body, R"({"contents":[{"role":"user","parts":[{"text":"x"}]}],)"
                   R"("generationConfig":{"maxOutputTokens":9}})")
      << "model and stream go into the URL";
  const protocol::UpstreamCodec& codec = *b.adapter->upstream_codec(protocol::Operation::kChat);
  auto decoded = codec.decode_response(
      R"({"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP"}],)"
      R"("usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"thoughtsTokenCount":2}})");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->usage, (ir::Usage{3, 3, 0, 0, 2}));
  EXPECT_NE(codec.make_stream_decoder(), nullptr);
}

TEST(GeminiAdapter, ClassifiesGeminiErrors) {
  Built b = build("  - id: p\n    adapter: gemini\n");
  const ProviderAdapter& a = *b.adapter;
  Error invalid = a.classify_failure(
      400, HeadersOnly(HeadersOnly::Fields{}),
      R"({"error":{"code":400,"message":"Penalty is not enabled for models/gemini-2.5-flash","status":"INVALID_ARGUMENT"}})");
  EXPECT_EQ(invalid.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(invalid.http_status(), 400);
  EXPECT_EQ(invalid.message(), "Penalty is not enabled for models/gemini-2.5-flash");
  EXPECT_EQ(invalid.code(), "INVALID_ARGUMENT");

  const char* exhausted =
      R"({"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED",)"
      R"("details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},)"
      R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"36.5s"}]}})";
  Error quota = a.classify_failure(429, HeadersOnly(HeadersOnly::Fields{}), exhausted);
  EXPECT_EQ(quota.code(), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(quota.retry_after_seconds(), 37u) << "RetryInfo, rounded up";
  EXPECT_TRUE(quota.retryable());
  Error header =
      a.classify_failure(429, HeadersOnly(HeadersOnly::Fields{{"retry-after", "5"}}), exhausted);
  EXPECT_EQ(header.retry_after_seconds(), 5u) << "a Retry-After header wins";

  Error denied = a.classify_failure(
      403, HeadersOnly(HeadersOnly::Fields{}),
      R"({"error":{"code":403,"message":"Method doesn't allow unregistered callers","status":"PERMISSION_DENIED"}})");
  EXPECT_EQ(denied.http_status(), 502);
  EXPECT_EQ(denied.code(), "upstream_auth_failed");
}

// The whole in-process answer of `adapter` to `body`.
std::string mock_answer(const ProviderAdapter& adapter, std::string_view body, bool stream) {
  boost::asio::io_context ioc;
  std::string out;
  boost::asio::co_spawn(
      ioc,
      [&]() -> Awaitable<void> {
        Cancellation cancel;
        InProcessRequest request{protocol::Operation::kChat, stream, body};
        auto exchange = co_await adapter.call_in_process(ioc.get_executor(), request, cancel);
        EXPECT_TRUE(exchange) << exchange.error().message();
        if (exchange) {
          auto all = co_await (*exchange)->read_all(1 << 20);
          EXPECT_TRUE(all);
          out = all ? std::move(*all) : std::string();
        }
      },
      boost::asio::detached);
  ioc.run();
  return out;
}

TEST(VertexAdapter, ExpressModeIsAnApiKeyOnThePublishersPath) {
  Built b = build(
      "  - id: p\n    adapter: vertex\n    api_key: AIza-vertex-key-0001\n"
      "    vertex: { location: global }\n");
  ASSERT_NE(b.adapter->endpoint(), nullptr);
  EXPECT_EQ(b.adapter->endpoint()->host, "aiplatform.googleapis.com");
  EXPECT_EQ(b.adapter->wire_protocol(protocol::Operation::kChat), "gemini");
  std::string head = head_for(*b.adapter, false);
  EXPECT_TRUE(head.starts_with("POST /v1/publishers/google/models/m:generateContent HTTP/1.1\r\n"))
      << head;
  EXPECT_EQ(field_of(head, "x-goog-api-key"), "AIza-vertex-key-0001");
  EXPECT_EQ(field_of(head, "Authorization"), "");
  head = head_for(*b.adapter, true);
  EXPECT_TRUE(head.starts_with(
      "POST /v1/publishers/google/models/m:streamGenerateContent?alt=sse HTTP/1.1\r\n"))
      << head;
}

TEST(VertexAdapter, TargetsNameTheProjectLocationPublisherAndMethod) {
  EXPECT_EQ(vertex_target("/v1/projects/p/locations/us-east5/publishers/anthropic/models/",
                          "claude-sonnet-4-5@20250929", true, true),
            "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
            "claude-sonnet-4-5@20250929:streamRawPredict");
  EXPECT_EQ(vertex_target("/m/", "claude x", true, false), "/m/claude%20x:rawPredict");
  EXPECT_EQ(vertex_target("/m/", "models/gemini-2.5-pro", false, false),
            "/m/gemini-2.5-pro:generateContent");
}

TEST(VertexAdapter, ClaudeNeedsGoogleCredentialsNotAnApiKey) {
  config::LoadOptions options;
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto cfg = load_config_string(
      "version: 1\nauth: none\nproviders:\n  - id: p\n    adapter: vertex\n    api_key: k\n"
      "    vertex: { publisher: anthropic, project: x }\n"
      "routes:\n  - alias: a\n    provider: p\n    model: m\n",
      "test.yaml", options);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  auto adapter = make_adapter((*cfg)->providers.at(0));
  ASSERT_FALSE(adapter.has_value());
  EXPECT_NE(adapter.error().message().find("express mode"), std::string::npos);
}

TEST(MockAdapter, AnswersTranslatedRequestsInEveryProtocolItSpeaks) {
  ir::Request request = one_message(64);
  request.messages[0].content[0].text = "ping";
  const std::string want = "Hello from the Sluice mock provider. You said: ping";
  for (std::string_view wire :
       {"openai_chat", "anthropic_messages", "gemini", "openai_responses"}) {
    SCOPED_TRACE(std::string(wire));
    Built b = build(
        "  - id: p\n    adapter: mock\n    mock:\n      protocol: " + std::string(wire) + "\n");
    const protocol::UpstreamCodec* codec = b.adapter->upstream_codec(protocol::Operation::kChat);
    ASSERT_NE(codec, nullptr);
    EXPECT_EQ(codec->protocol(), wire);
    for (bool stream : {false, true}) {
      auto body = codec->encode_request(request, b.adapter->encode_target("mock-model", stream));
      ASSERT_TRUE(body) << body.error().message();
      const std::string answer = mock_answer(*b.adapter, *body, stream);
      std::string text;
      if (!stream) {
        auto decoded = codec->decode_response(answer);
        ASSERT_TRUE(decoded) << decoded.error().message() << answer;
        for (const ir::ContentPart& p : decoded->content) {
          text += p.text;
        }
      } else {
        auto decoder = codec->make_stream_decoder();
        std::vector<ir::StreamEvent> events;
        codec::SseParser parser;
        codec::SseEvent ev;
        parser.feed(answer);
        while (parser.next(ev) == codec::SseParser::Status::kEvent) {
          decoder->on_event(ev, events);
        }
        decoder->on_end(events);
        ASSERT_FALSE(events.empty());
        EXPECT_EQ(events.back().kind, ir::StreamEventKind::kDone) << answer;
        for (const ir::StreamEvent& e : events) {
          text += e.kind == ir::StreamEventKind::kTextDelta ? e.text : "";
        }
      }
      EXPECT_EQ(text, want) << (stream ? "stream: " : "body: ") << answer;
    }
  }
}

}  // namespace
}  // namespace sluice::providers
