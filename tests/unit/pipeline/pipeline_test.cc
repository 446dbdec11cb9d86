// The request pipeline without sockets: a fake Downstream records what the caller would
// receive, a fake UpstreamConnector plays scripted upstream exchanges, and a SimulatedClock
// drives the timings. Coroutines run on a plain io_context.

#include "pipeline/pipeline.h"

#include <deque>
#include <map>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "pipeline/usage_observer.h"
#include "pipeline_fakes.h"
#include "providers/registry.h"

namespace sluice::pipeline {
namespace {

using namespace fakes;

namespace json = boost::json;
namespace asio = boost::asio;

constexpr const char* kGatewayKey = "sk-gateway-key-00000001";
constexpr const char* kProviderKey = "sk-provider-secret-0000000009";

constexpr const char* kConfig = R"(
version: 4
listen: 127.0.0.1:0
providers:
  - id: up
    adapter: openai
    base_url: http://127.0.0.1:9/v1
    api_key: sk-provider-secret-0000000009
    forward_headers: [x-trace-*]
  - id: up2
    adapter: openai
    base_url: http://127.0.0.1:9/v2
    api_key: sk-provider-secret-0000000008
  - id: mock
    adapter: mock
  - id: gem
    adapter: gemini
    base_url: http://127.0.0.1:9
    api_key: gemini-provider-secret-000007
routes:
  - alias: gem-ha
    targets:
      - { provider: gem, model: gemini-2.5-flash }
      - { provider: up2, model: second-model }
    retry: { per_target_attempts: 3, retry_after_max_ms: 5000 }
  - alias: ha
    targets:
      - { provider: up, model: upstream-model }
      - { provider: up2, model: second-model }
  - alias: gpt
    provider: up
    model: upstream-model
  - alias: embed
    kind: embeddings
    provider: up
    model: upstream-embed
  - alias: local
    provider: mock
    model: mock-1
  - alias: priced
    provider: up
    model: gpt-4o
keys:
  - name: team
    key: sk-gateway-key-00000001
)";

// --- fixture ------------------------------------------------------------------------------

class PipelineTest : public ::testing::Test {
 protected:
  PipelineTest() {
    config::LoadOptions options;
    options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    auto cfg = providers::load_config_string(kConfig, "test.yaml", options);
    EXPECT_TRUE(cfg.has_value()) << cfg.error().message();
    auto snap = Snapshot::build(*cfg);
    EXPECT_TRUE(snap.has_value()) << snap.error().message();
    host_.snapshot = *snap;
    PipelineParts parts;
    parts.host = &host_;
    parts.connector = &connector_;
    parts.clock = &clock_;
    parts.observers = observers_;
    parts.affinity = &affinity_;
    parts.store_keys = &store_keys_;
    pipeline_.emplace(parts);
  }

  // Runs one request through every phase, as the session would.
  RequestContext run(const std::string& method, const std::string& target,
                     std::vector<std::pair<std::string, std::string>> headers,
                     const std::string& body) {
    RequestContext ctx;
    pipeline_->begin(ctx);
    ctx.request_id = "req-1";
    headers.emplace_back("content-length", std::to_string(body.size()));
    FakeHead head(method, target, std::move(headers));
    std::optional<Error> early = pipeline_->on_head(ctx, head);
    asio::io_context ioc;
    asio::co_spawn(
        ioc,
        [&]() -> Awaitable<void> {
          if (early) {
            co_await pipeline_->reject(ctx, *early, downstream_);
          } else {
            clock_.advance(std::chrono::milliseconds(3));
            co_await pipeline_->serve(ctx, head, body, downstream_);
          }
        },
        asio::detached);
    ioc.run();
    pipeline_->end(ctx);
    return ctx;
  }

  RequestContext chat(const std::string& body,
                      std::vector<std::pair<std::string, std::string>> extra = {}) {
    extra.emplace_back("authorization", std::string("Bearer ") + kGatewayKey);
    return run("POST", "/v1/chat/completions", std::move(extra), body);
  }
  RequestContext messages(const std::string& body) {
    return run("POST", "/v1/messages",
               {{"x-api-key", kGatewayKey}, {"anthropic-version", "2023-06-01"}}, body);
  }

  static Script sse(std::vector<std::string> reads) {
    Script s;
    s.headers = {{"content-type", "text/event-stream"}};
    s.reads.assign(reads.begin(), reads.end());
    return s;
  }
  static std::string chunk(const std::string& delta, const std::string& finish = "null") {
    return R"(data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"upstream-model","choices":[{"index":0,"delta":)" +
           delta + R"(,"finish_reason":)" + finish + "}]}\n\n";
  }
  static std::string usage_chunk() {
    return R"(data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"upstream-model","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}})"
           "\n\n";
  }

  SimulatedClock clock_;
  FakeHost host_;
  FakeConnector connector_;
  FakeDownstream downstream_;
  RecordingObserver observer_;
  std::vector<RequestObserver*> observers_{&observer_};
  ResponseAffinity affinity_;
  tenancy::KeySetHolder store_keys_;  // empty unless a test publishes a key set
  std::optional<Pipeline> pipeline_;
};

constexpr const char* kChatBody = R"({"model":"gpt","messages":[{"role":"user","content":"hi"}]})";
constexpr const char* kChatStreamBody =
    R"({"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]})";

// --- passthrough ----------------------------------------------------------------------------

TEST_F(PipelineTest, PassthroughAnswerIsRelayedVerbatimWithUsageAndOneAttempt) {
  Script s;
  s.reads = {R"({"id":"x","object":"chat.completion","choices":[{"index":0,"message":)",
             R"({"role":"assistant","content":"yo"},"finish_reason":"stop"}],)"
             R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = chat(kChatBody, {{"x-trace-id", "t1"}, {"x-other", "no"}});

  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(downstream_.json_body().at("choices").at(0).at("message").at("content"), "yo");
  EXPECT_EQ(downstream_.headers["x-sluice-provider"], "up");
  EXPECT_EQ(downstream_.headers["x-sluice-model"], "upstream-model");
  EXPECT_EQ(downstream_.headers["x-sluice-attempts"], "1");
  EXPECT_EQ(downstream_.headers["x-request-id"], "req-1");
  ASSERT_TRUE(ctx.usage.has_value());
  EXPECT_EQ(ctx.usage->input_tokens, 5u);
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  ASSERT_EQ(ctx.attempts.size(), 1u);
  EXPECT_TRUE(ctx.attempts[0].passthrough);
  EXPECT_EQ(ctx.attempts[0].status, 200);
  EXPECT_EQ(ctx.attempts[0].acquire.count(), 7);
  EXPECT_EQ(ctx.attempts[0].first_byte.count(), 11);
  EXPECT_EQ(ctx.alias, "gpt");

  // What went upstream: the provider's key, never the caller's; the upstream model; the
  // forwarded header the provider allows, and only it.
  ASSERT_EQ(connector_.sent.size(), 1u);
  const std::string& head = connector_.sent[0].head;
  EXPECT_EQ(head.rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find(std::string("Authorization: Bearer ") + kProviderKey), std::string::npos);
  EXPECT_EQ(head.find(kGatewayKey), std::string::npos);
  EXPECT_NE(head.find("x-trace-id: t1\r\n"), std::string::npos);
  EXPECT_EQ(head.find("x-other"), std::string::npos);
  EXPECT_EQ(json::parse(connector_.sent[0].body).at("model"), "upstream-model");

  EXPECT_EQ(observer_.calls, (std::vector<std::string>{"attempt:200", "usage:5/2", "finish:200"}));
}

TEST_F(PipelineTest, PassthroughStreamIsRelayedAsItArrivesAndTheGatewaysUsageChunkDropped) {
  // Bytes split mid-event: the relay writes whole events only.
  const std::string role = chunk(R"({"role":"assistant","content":""})");
  const std::string text = chunk(R"({"content":"Hi"})");
  const std::string stop = chunk("{}", R"("stop")");
  connector_.scripts.push_back(
      sse({role, text.substr(0, 30), text.substr(30), stop, usage_chunk(), "data: [DONE]\n\n"}));
  RequestContext ctx = chat(kChatStreamBody);

  EXPECT_TRUE(downstream_.streamed);
  EXPECT_TRUE(downstream_.ended);
  EXPECT_EQ(downstream_.headers["content-type"], "text/event-stream");
  EXPECT_EQ(downstream_.headers["x-accel-buffering"], "no");
  EXPECT_EQ(downstream_.body, role + text + stop + "data: [DONE]\n\n");
  ASSERT_GE(downstream_.writes.size(), 2u);
  // The streaming commit point: the role chunk is held back until the first content, then both
  // go out at once (a split event once, whole); later events go out as they arrive.
  EXPECT_EQ(downstream_.writes[0], role + text);
  EXPECT_EQ(downstream_.writes[1], stop);
  ASSERT_TRUE(ctx.usage.has_value()) << "usage was requested upstream and metered";
  EXPECT_EQ(ctx.usage->input_tokens, 12u);
  EXPECT_EQ(ctx.finish_reason, "stop");
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  EXPECT_EQ(ctx.first_token, std::chrono::microseconds(3000));  // simulated clock
  // The gateway asked for usage on the caller's behalf.
  EXPECT_EQ(json::parse(connector_.sent[0].body).at("stream_options").at("include_usage"), true);
}

TEST_F(PipelineTest, StreamEndingAfterItsFinishWithoutDoneIsComplete) {
  connector_.scripts.push_back(sse({chunk(R"({"content":"Hi"})"), chunk("{}", R"("stop")")}));
  RequestContext ctx = chat(kChatStreamBody);
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  EXPECT_EQ(downstream_.body.find("error"), std::string::npos) << downstream_.body;
  EXPECT_TRUE(downstream_.ended);
}

TEST_F(PipelineTest, StreamEndingBeforeItsFinishGetsATerminalErrorEvent) {
  connector_.scripts.push_back(sse({chunk(R"({"content":"Hi"})")}));
  RequestContext ctx = chat(kChatStreamBody);
  EXPECT_EQ(ctx.outcome, Outcome::kMidstreamError);
  ASSERT_TRUE(ctx.error.has_value());
  EXPECT_EQ(ctx.error->code(), "upstream_stream_truncated");
  EXPECT_NE(downstream_.writes.back().find("upstream_stream_truncated"), std::string::npos);
}

TEST_F(PipelineTest, StreamBrokenUpstreamEndsWithTheErrorItHad) {
  Script s = sse({chunk(R"({"content":"Hi"})")});
  s.fail = Error(ErrorKind::kUpstreamTimeout, "silent").with_code("upstream_idle_timeout");
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = chat(kChatStreamBody);
  EXPECT_EQ(ctx.outcome, Outcome::kMidstreamError);
  EXPECT_NE(downstream_.writes.back().find("upstream_idle_timeout"), std::string::npos);
  EXPECT_TRUE(downstream_.ended);
}

TEST_F(PipelineTest, CallerLeavingMidStreamAbortsTheUpstream) {
  downstream_.disconnect_before_write = 1;
  connector_.scripts.push_back(
      sse({chunk(R"({"content":"a"})"), chunk(R"({"content":"b"})"), chunk("{}", R"("stop")")}));
  RequestContext ctx = chat(kChatStreamBody);
  EXPECT_EQ(ctx.outcome, Outcome::kClientGone);
  EXPECT_TRUE(connector_.last_aborted) << "the upstream kept generating for nobody";
  EXPECT_FALSE(downstream_.ended);
}

// --- errors ---------------------------------------------------------------------------------

TEST_F(PipelineTest, UpstreamErrorInTheCallersProtocolIsRelayedWithItsHeaders) {
  Script s;
  s.status = 429;
  s.headers = {{"content-type", "application/json"},
               {"retry-after", "4"},
               {"x-ratelimit-remaining-requests", "0"},
               {"set-cookie", "no"}};
  s.reads = {
      R"({"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}})"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = chat(kChatBody);
  EXPECT_EQ(downstream_.status, 429);
  EXPECT_EQ(downstream_.json_body().at("error").at("message"), "slow down");
  EXPECT_EQ(downstream_.headers["retry-after"], "4");
  EXPECT_EQ(downstream_.headers["x-ratelimit-remaining-requests"], "0");
  EXPECT_EQ(downstream_.headers.count("set-cookie"), 0u);
  EXPECT_EQ(downstream_.headers["x-should-retry"], "true");
  EXPECT_EQ(ctx.outcome, Outcome::kUpstreamError);
  EXPECT_EQ(ctx.attempts[0].status, 429);
  ASSERT_TRUE(ctx.attempts[0].error.has_value());
}

TEST_F(PipelineTest, ProviderRefusingTheGatewaysKeyIsA502ThatKeepsTheProviderStatus) {
  Script s;
  s.status = 401;
  s.reads = {std::string(R"({"error":{"message":"Incorrect API key provided: )") + kProviderKey +
             R"(","type":"invalid_request_error","code":"invalid_api_key"}})"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = chat(kChatBody);
  EXPECT_EQ(downstream_.status, 502);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "upstream_auth_failed");
  EXPECT_EQ(downstream_.body.find(kProviderKey), std::string::npos) << downstream_.body;
  EXPECT_EQ(downstream_.headers["x-should-retry"], "false");
  EXPECT_EQ(ctx.attempts[0].status, 401);
  EXPECT_EQ(observer_.calls.front(), "attempt:401");
}

TEST_F(PipelineTest, UnreachableUpstreamIsA502AndTheAttemptRecordsWhy) {
  connector_.scripts.push_back(
      Error(ErrorKind::kUpstreamUnreachable, "refused").with_code("upstream_connect_failed"));
  RequestContext ctx = chat(kChatBody);
  EXPECT_EQ(downstream_.status, 502);
  EXPECT_EQ(downstream_.headers["x-should-retry"], "true");
  ASSERT_EQ(ctx.attempts.size(), 1u);
  EXPECT_EQ(ctx.attempts[0].status, 0);
  EXPECT_EQ(ctx.attempts[0].error->code(), "upstream_connect_failed");
  EXPECT_EQ(ctx.outcome, Outcome::kUpstreamError);
}

// --- routing: failover before anything reached the caller ------------------------------------

constexpr const char* kHaBody = R"({"model":"ha","messages":[{"role":"user","content":"hi"}]})";
constexpr const char* kHaStreamBody =
    R"({"model":"ha","stream":true,"messages":[{"role":"user","content":"hi"}]})";

TEST_F(PipelineTest, A5xxFailsOverToTheNextTargetAndTheCallerSeesOnlyTheAnswer) {
  Script bad;
  bad.status = 503;
  bad.reads = {
      R"({"error":{"message":"overloaded","type":"server_error","param":null,"code":null}})"};
  connector_.scripts.push_back(std::move(bad));
  Script good;
  good.reads = {
      R"({"id":"c2","object":"chat.completion","created":1,"model":"second-model","choices":[{"index":0,"message":{"role":"assistant","content":"from b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})"};
  connector_.scripts.push_back(std::move(good));
  RequestContext ctx = chat(kHaBody);
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(downstream_.json_body().at("choices").at(0).at("message").at("content"), "from b");
  EXPECT_EQ(downstream_.headers["x-sluice-attempts"], "2");
  EXPECT_EQ(downstream_.headers["x-sluice-target"], "1");
  EXPECT_EQ(downstream_.headers["x-sluice-provider"], "up2");
  ASSERT_EQ(ctx.attempts.size(), 2u);
  EXPECT_EQ(ctx.attempts[0].status, 503);
  EXPECT_EQ(ctx.attempts[1].path, "1");
  ASSERT_EQ(connector_.sent.size(), 2u);
  EXPECT_EQ(json::parse(connector_.sent[1].body).at("model"), "second-model");
  EXPECT_EQ(observer_.calls,
            (std::vector<std::string>{"attempt:503", "attempt:200", "usage:3/2", "finish:200"}));
}

// Gemini says how long to wait in the error body (google.rpc.RetryInfo), not in a header: the
// plan must hear it like a Retry-After, so a wait longer than retry_after_max moves on at once
// instead of hammering the same target after a short backoff, and the target backs off.
TEST_F(PipelineTest, GeminiRetryInfoInTheErrorBodyIsHonouredLikeRetryAfter) {
  Script limited;
  limited.status = 429;
  limited.headers = {{"content-type", "application/json"}};
  limited.reads = {
      R"({"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}})"};
  connector_.scripts.push_back(std::move(limited));
  Script good;
  good.reads = {
      R"({"id":"c2","object":"chat.completion","created":1,"model":"second-model","choices":[{"index":0,"message":{"role":"assistant","content":"from b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})"};
  connector_.scripts.push_back(std::move(good));
  RequestContext ctx = chat(R"({"model":"gem-ha","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  ASSERT_EQ(ctx.attempts.size(), 2u);
  EXPECT_EQ(ctx.attempts[0].provider, "gem");
  EXPECT_EQ(ctx.attempts[1].provider, "up2") << "30 s asked, 5 s cap: no same-target retry";
  EXPECT_EQ(ctx.attempts[1].backoff.count(), 0);
  const auto* route = ctx.snapshot->find_route("gem-ha");
  ASSERT_NE(route, nullptr);
  EXPECT_TRUE(route->targets[0].health->in_backoff(clock_.now()))
      << "the 429 puts the target in backoff for the time it asked (capped)";
}

TEST_F(PipelineTest, A400NeverMovesToTheNextTarget) {
  Script bad;
  bad.status = 400;
  bad.reads = {
      R"({"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}})"};
  connector_.scripts.push_back(std::move(bad));
  RequestContext ctx = chat(kHaBody);
  EXPECT_EQ(downstream_.status, 400);
  EXPECT_EQ(connector_.sent.size(), 1u);
  EXPECT_EQ(ctx.attempts.size(), 1u);
}

TEST_F(PipelineTest, AStreamBrokenBeforeItsCommitPointFailsOverWithoutAByteSent) {
  Script broken = sse({chunk(R"({"role":"assistant","content":""})")});
  broken.fail = Error(ErrorKind::kUpstreamProtocol, "connection reset").with_code("upstream_reset");
  connector_.scripts.push_back(std::move(broken));
  const std::string role = chunk(R"({"role":"assistant","content":""})");
  const std::string text = chunk(R"({"content":"Hi"})");
  const std::string stop = chunk("{}", R"("stop")");
  connector_.scripts.push_back(sse({role, text, stop, "data: [DONE]\n\n"}));
  RequestContext ctx = chat(kHaStreamBody);
  EXPECT_TRUE(downstream_.streamed);
  EXPECT_EQ(downstream_.body, role + text + stop + "data: [DONE]\n\n") << "one role chunk";
  EXPECT_EQ(downstream_.headers["x-sluice-attempts"], "2");
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  ASSERT_EQ(ctx.attempts.size(), 2u);
  EXPECT_EQ(ctx.attempts[0].error->code(), "upstream_reset");
  EXPECT_TRUE(connector_.last_aborted == false);
}

TEST_F(PipelineTest, AStreamBrokenAfterItsCommitPointEndsWithAnErrorEventAndNoFailover) {
  Script broken =
      sse({chunk(R"({"role":"assistant","content":""})"), chunk(R"({"content":"Hi"})")});
  broken.fail = Error(ErrorKind::kUpstreamProtocol, "connection reset").with_code("upstream_reset");
  connector_.scripts.push_back(std::move(broken));
  connector_.scripts.push_back(sse({chunk(R"({"content":"never"})")}));
  RequestContext ctx = chat(kHaStreamBody);
  EXPECT_EQ(connector_.sent.size(), 1u) << "committed: never re-sent elsewhere";
  EXPECT_NE(downstream_.body.find("\"Hi\""), std::string::npos);
  EXPECT_NE(downstream_.body.find("upstream_reset"), std::string::npos);
  EXPECT_EQ(downstream_.body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(ctx.outcome, Outcome::kMidstreamError);
  ASSERT_TRUE(ctx.attempts[0].error.has_value()) << "the broken stream counts against its target";
}

TEST_F(PipelineTest, ErrorsBeforeAnyUpstreamAreInTheCallersProtocol) {
  chat(R"({"model":"nope","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 404);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "model_not_found");
  EXPECT_EQ(downstream_.headers["x-should-retry"], "false");
  EXPECT_TRUE(connector_.sent.empty());

  downstream_ = FakeDownstream();
  messages(R"({"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 404);
  EXPECT_EQ(downstream_.json_body().at("type"), "error");
  EXPECT_EQ(downstream_.json_body().at("error").at("type"), "not_found_error");

  downstream_ = FakeDownstream();
  run("POST", "/v1/chat/completions", {{"authorization", "Bearer wrong-key-0000000000"}},
      kChatBody);
  EXPECT_EQ(downstream_.status, 401);
  EXPECT_EQ(downstream_.headers["x-should-retry"], "false");

  downstream_ = FakeDownstream();
  run("GET", "/v1/chat/completions", {{"authorization", std::string("Bearer ") + kGatewayKey}}, "");
  EXPECT_EQ(downstream_.status, 405);

  downstream_ = FakeDownstream();
  chat(R"({"model":"embed","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 404) << "a chat caller cannot reach an embeddings route";
}

// --- translation ----------------------------------------------------------------------------

TEST_F(PipelineTest, AnthropicCallerIsTranslatedBothWays) {
  connector_.scripts.push_back(
      sse({chunk(R"({"role":"assistant","content":""})"), chunk(R"({"content":"Hello"})"),
           chunk("{}", R"("stop")"), usage_chunk(), "data: [DONE]\n\n"}));
  RequestContext ctx = messages(
      R"({"model":"gpt","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_NE(downstream_.body.find("event: message_start"), std::string::npos);
  EXPECT_NE(downstream_.body.find(R"("text":"Hello")"), std::string::npos) << downstream_.body;
  EXPECT_NE(downstream_.body.find("event: message_stop"), std::string::npos);
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  ASSERT_TRUE(ctx.usage.has_value());
  EXPECT_EQ(ctx.usage->input_tokens, 12u);
  EXPECT_FALSE(ctx.attempts[0].passthrough);
  // The upstream got an OpenAI request.
  json::value up = json::parse(connector_.sent[0].body);
  EXPECT_EQ(up.at("model"), "upstream-model");
  EXPECT_EQ(up.at("messages").at(0).at("role"), "user");
  EXPECT_EQ(up.at("stream"), true);
}

TEST_F(PipelineTest, SchemaDriftInATranslatedAnswerIsAttributedToTheAttempt) {
  // Stream: an unknown delta field in every chunk counts once, an unknown choice field once.
  connector_.scripts.push_back(
      sse({chunk(R"({"role":"assistant","content":"","novel":1})"),
           chunk(R"({"content":"Hello","novel":2})"), chunk("{}", R"("stop","x_choice":true)"),
           usage_chunk(), "data: [DONE]\n\n"}));
  const std::string body =
      R"({"model":"gpt","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"hi"}]})";
  RequestContext ctx = messages(body);
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  ASSERT_EQ(ctx.attempts.size(), 1u);
  EXPECT_EQ(ctx.attempts[0].unknown_fields, 2u);
  json::value line = json::parse(format_access_log(ctx));
  EXPECT_EQ(line.at("upstream").at(0).at("drift").to_number<std::uint64_t>(), 2u);

  // Non-streaming answer.
  Script s;
  s.reads = {
      R"({"id":"c","object":"chat.completion","model":"m","novel":1,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})"};
  connector_.scripts.push_back(std::move(s));
  downstream_ = FakeDownstream();
  ctx = messages(R"({"model":"gpt","max_tokens":20,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(ctx.attempts[0].unknown_fields, 1u);

  // Passthrough is relayed verbatim, not decoded: nothing is counted.
  Script p;
  p.reads = {
      R"({"id":"c","object":"chat.completion","model":"m","novel":1,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})"};
  connector_.scripts.push_back(std::move(p));
  downstream_ = FakeDownstream();
  ctx = chat(R"({"model":"gpt","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  ASSERT_TRUE(ctx.attempts[0].passthrough);
  EXPECT_EQ(ctx.attempts[0].unknown_fields, 0u);
  line = json::parse(format_access_log(ctx));
  EXPECT_FALSE(line.at("upstream").at(0).as_object().contains("drift"));
}

TEST_F(PipelineTest, InProcessProviderStillGoesThroughTheConnector) {
  Script s;
  s.reads = {
      R"({"id":"m","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"mock"},"finish_reason":"stop"}]})"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = chat(R"({"model":"local","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  ASSERT_EQ(connector_.sent.size(), 1u);
  EXPECT_EQ(connector_.sent[0].provider->adapter->endpoint(), nullptr);
  EXPECT_EQ(ctx.attempts[0].provider, "mock");
}

// --- OpenAI Responses: passthrough, stored responses, continuations --------------------------

class ResponsesTest : public PipelineTest {
 protected:
  RequestContext responses(const std::string& body) {
    return run("POST", "/v1/responses", {{"authorization", std::string("Bearer ") + kGatewayKey}},
               body);
  }
  RequestContext get(const std::string& target, const std::string& key = kGatewayKey) {
    return run("GET", target, {{"authorization", "Bearer " + key}}, "");
  }
  static std::string event(const std::string& type, const std::string& fields) {
    return "event: " + type + "\ndata: {\"type\":\"" + type + "\"," + fields + "}\n\n";
  }
  static constexpr const char* kAnswer =
      R"({"id":"resp_abc","object":"response","status":"completed","model":"upstream-model",)"
      R"("output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant",)"
      R"("content":[{"type":"output_text","text":"hi","annotations":[]}]}],"tools":[],)"
      R"("usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":4},"output_tokens":5,)"
      R"("output_tokens_details":{"reasoning_tokens":2},"total_tokens":14}})";
};

TEST_F(ResponsesTest, ResponsesCallerIsPassedThroughAndItsAnswerRemembered) {
  Script s;
  s.reads = {kAnswer};
  connector_.scripts.push_back(std::move(s));
  const std::string body =
      R"({"model":"gpt","input":"hi","tools":[{"type":"web_search"}],"store":true})";
  RequestContext ctx = responses(body);
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(downstream_.body, kAnswer);  // verbatim
  ASSERT_EQ(connector_.sent.size(), 1u);
  EXPECT_EQ(connector_.sent[0].head.rfind("POST /v1/responses HTTP/1.1\r\n", 0), 0u);
  // The caller's bytes with the model spliced: built-in tools reach the upstream untouched.
  std::string want = body;
  want.replace(want.find("\"gpt\""), 5, "\"upstream-model\"");
  EXPECT_EQ(connector_.sent[0].body, want);
  ASSERT_TRUE(ctx.attempts[0].passthrough);
  ASSERT_TRUE(ctx.usage);
  EXPECT_EQ(*ctx.usage, (ir::Usage{9, 5, 4, 0, 2}));
  auto stored = affinity_.find("resp_abc", clock_.now());
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->provider, "up");
  EXPECT_EQ(stored->owner, "config:team");
}

TEST_F(ResponsesTest, StreamedAnswersAreRememberedFromResponseCreated) {
  connector_.scripts.push_back(sse({
      event("response.created",
            R"("response":{"id":"resp_s1","status":"in_progress"},"sequence_number":0)"),
      event("response.output_text.delta",
            R"("item_id":"m","output_index":0,"content_index":0,"delta":"yo","sequence_number":1)"),
      event(
          "response.completed",
          R"("response":{"id":"resp_s1","status":"completed","usage":{"input_tokens":3,"output_tokens":1}},"sequence_number":2)"),
  }));
  RequestContext ctx = responses(R"({"model":"gpt","input":"hi","stream":true})");
  EXPECT_TRUE(downstream_.streamed);
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  EXPECT_EQ(ctx.finish_reason, "stop");
  EXPECT_EQ(ctx.usage->input_tokens, 3u);
  EXPECT_TRUE(affinity_.find("resp_s1", clock_.now()));
}

TEST_F(ResponsesTest, StoreFalseLeavesNoRecord) {
  Script s;
  s.reads = {kAnswer};
  connector_.scripts.push_back(std::move(s));
  responses(R"({"model":"gpt","input":"hi","store":false})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_FALSE(affinity_.find("resp_abc", clock_.now()));
}

TEST_F(ResponsesTest, GetByIdGoesToTheProviderThatStoredIt) {
  affinity_.remember("resp_abc", "up", "config:team", clock_.now());
  Script s;
  s.reads = {kAnswer};
  s.headers = {{"content-type", "application/json"}, {"x-ratelimit-remaining-requests", "9"}};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = get("/v1/responses/resp_abc?include[]=message.output_text.logprobs");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(downstream_.body, kAnswer);
  EXPECT_EQ(downstream_.headers["x-ratelimit-remaining-requests"], "9");
  EXPECT_EQ(downstream_.headers["x-sluice-provider"], "up");
  ASSERT_EQ(connector_.sent.size(), 1u);
  const std::string& head = connector_.sent[0].head;
  EXPECT_EQ(
      head.rfind("GET /v1/responses/resp_abc?include[]=message.output_text.logprobs HTTP/1.1\r\n",
                 0),
      0u)
      << head;
  EXPECT_NE(head.find(std::string("Authorization: Bearer ") + kProviderKey), std::string::npos);
  EXPECT_TRUE(connector_.sent[0].body.empty());
  EXPECT_EQ(ctx.endpoint, Endpoint::kStoredObject);
  EXPECT_EQ(ctx.outcome, Outcome::kComplete);
  EXPECT_EQ(observer_.calls, (std::vector<std::string>{"attempt:200", "finish:200"}));
}

TEST_F(ResponsesTest, GetOfAnUnknownExpiredOrOtherKeysResponseIsA404InOpenAisShape) {
  get("/v1/responses/resp_nope");
  EXPECT_EQ(downstream_.status, 404);
  const json::value e = downstream_.json_body().at("error");
  EXPECT_EQ(e.at("type"), "invalid_request_error");
  EXPECT_NE(
      std::string(e.at("message").as_string()).find("The gateway has no record of 'resp_nope'"),
      std::string::npos);
  EXPECT_TRUE(connector_.sent.empty());

  affinity_.remember("resp_old", "up", "config:team", clock_.now());
  clock_.advance(std::chrono::seconds(3601));
  downstream_ = FakeDownstream();
  get("/v1/responses/resp_old");
  EXPECT_EQ(downstream_.status, 404);

  affinity_.remember("resp_theirs", "up", "another-key", clock_.now());
  downstream_ = FakeDownstream();
  get("/v1/responses/resp_theirs");
  EXPECT_EQ(downstream_.status, 404);
  EXPECT_TRUE(connector_.sent.empty());

  downstream_ = FakeDownstream();
  run("POST", "/v1/responses/resp_theirs",
      {{"authorization", std::string("Bearer ") + kGatewayKey}}, "{}");
  EXPECT_EQ(downstream_.status, 405);

  // Endpoints below /v1/responses/ that are not response ids are not stored objects.
  downstream_ = FakeDownstream();
  run("POST", "/v1/responses/input_tokens",
      {{"authorization", std::string("Bearer ") + kGatewayKey}}, "{}");
  EXPECT_EQ(downstream_.status, 404);
}

TEST_F(ResponsesTest, UpstreamNotFoundIsRelayedAsItIs) {
  affinity_.remember("resp_gone", "up", "config:team", clock_.now());
  Script s;
  s.status = 404;
  s.reads = {
      R"({"error":{"message":"Response with id 'resp_gone' not found.","type":"invalid_request_error","param":null,"code":null}})"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = get("/v1/responses/resp_gone");
  EXPECT_EQ(downstream_.status, 404);
  EXPECT_EQ(downstream_.json_body().at("error").at("message"),
            "Response with id 'resp_gone' not found.");
  EXPECT_EQ(downstream_.headers["x-should-retry"], "false");
  EXPECT_EQ(ctx.outcome, Outcome::kUpstreamError);
}

TEST_F(ResponsesTest, ContinuationsToAnUpstreamOfAnotherProtocolAreA400) {
  RequestContext ctx =
      responses(R"({"model":"local","input":"and then?","previous_response_id":"resp_abc"})");
  EXPECT_EQ(downstream_.status, 400);
  const json::value e = downstream_.json_body().at("error");
  EXPECT_EQ(e.at("param"), "previous_response_id");
  EXPECT_NE(std::string(e.at("message").as_string()).find("does not speak the Responses API"),
            std::string::npos);
  EXPECT_TRUE(connector_.sent.empty());
}

TEST_F(ResponsesTest, ResponsesCallerToAChatOnlyUpstreamIsTranslated) {
  Script s;
  s.reads = {
      R"({"id":"m","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"mock"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}})"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx = responses(R"({"model":"local","input":"hello","instructions":"be kind"})");
  EXPECT_EQ(downstream_.status, 200);
  const json::value r = downstream_.json_body();
  EXPECT_EQ(r.at("object"), "response");
  EXPECT_EQ(r.at("status"), "completed");
  EXPECT_EQ(r.at("output").at(0).at("type"), "message");
  EXPECT_EQ(r.at("output").at(0).at("content").at(0).at("text"), "mock");
  EXPECT_EQ(r.at("usage").at("input_tokens"), 4);
  EXPECT_FALSE(ctx.attempts[0].passthrough);
  const json::value up = json::parse(connector_.sent[0].body);  // a chat request
  EXPECT_EQ(up.at("messages").at(0).at("role"), "system");
  // Translated answers were not stored upstream: nothing to remember.
  EXPECT_EQ(affinity_.size(), 0u);
}

// --- ops endpoints --------------------------------------------------------------------------

TEST_F(PipelineTest, ReadinessFollowsTheHostAndNamesTheConfigVersion) {
  // Not ready until the key directory tried its first load (store keys would 401 meanwhile).
  run("GET", "/readyz", {}, "");
  EXPECT_EQ(downstream_.status, 503);
  EXPECT_EQ(downstream_.json_body().at("status"), "starting");
  EXPECT_NE(downstream_.body.find("key directory"), std::string::npos);
  store_keys_.set_attempted();  // attempted, whether or not the store answered
  downstream_ = FakeDownstream();
  run("GET", "/readyz", {}, "");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(downstream_.json_body().at("config_version"), 4);
  host_.is_draining = true;
  downstream_ = FakeDownstream();
  run("GET", "/readyz", {}, "");
  EXPECT_EQ(downstream_.status, 503);
}

TEST_F(PipelineTest, ModelListUsesTheShapeOfTheProtocolThatAsks) {
  run("GET", "/v1/models", {{"authorization", std::string("Bearer ") + kGatewayKey}}, "");
  EXPECT_EQ(downstream_.json_body().at("object"), "list");
  downstream_ = FakeDownstream();
  run("GET", "/v1/models", {{"x-api-key", kGatewayKey}, {"anthropic-version", "2023-06-01"}}, "");
  EXPECT_EQ(downstream_.json_body().at("has_more"), false);
  EXPECT_EQ(downstream_.json_body().at("data").at(0).at("type"), "model");
}

TEST_F(PipelineTest, TheSnapshotIsPinnedAtBegin) {
  RequestContext ctx;
  pipeline_->begin(ctx);
  auto pinned = ctx.snapshot;
  host_.snapshot = nullptr;  // a reload replaced (and dropped) the host's snapshot
  EXPECT_EQ(ctx.snapshot, pinned);
  EXPECT_EQ(ctx.snapshot->version(), 4u);
}

// --- metering -------------------------------------------------------------------------------

TEST_F(PipelineTest, AModelCallIsChargedOnceAtTheEndWithItsFeatureAndEntryTime) {
  Script s;
  s.reads = {R"({"id":"x","object":"chat.completion","choices":[{"index":0,"message":)",
             R"({"role":"assistant","content":"yo"},"finish_reason":"stop"}],)"
             R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})"};
  connector_.scripts.push_back(std::move(s));
  const auto entered = clock_.wall_now();
  const std::string feature = "checkout flow\x01" + std::string(100, 'x');
  RequestContext ctx = chat(kChatBody, {{"x-sluice-feature", feature}});
  EXPECT_EQ(ctx.wall_started, entered);
  EXPECT_GT(ctx.wall_ended, ctx.wall_started);  // the request took 3 simulated ms
  EXPECT_EQ(ctx.feature, "checkout_flow_" + std::string(64 - 14, 'x'));
  ASSERT_TRUE(ctx.charge.has_value());
  EXPECT_TRUE(gets_usage_record(ctx));
  const store::UsageRecord r = build_usage_record(ctx, "id");
  EXPECT_EQ(r.feature, ctx.feature);
  EXPECT_EQ(r.input_tokens, 5u);
  EXPECT_EQ(r.provider, "up");
  EXPECT_EQ(r.outcome, "complete");
  EXPECT_EQ(
      r.started_at_ms,
      std::chrono::duration_cast<std::chrono::milliseconds>(entered.time_since_epoch()).count());
}

TEST_F(PipelineTest, RequestsThatAreNotModelCallsAreNotCharged) {
  RequestContext refused = run("POST", "/v1/chat/completions", {}, kChatBody);  // no key
  EXPECT_EQ(refused.status, 401);
  EXPECT_FALSE(refused.charge.has_value());
  EXPECT_FALSE(gets_usage_record(refused));
  RequestContext unknown = chat(R"({"model":"nope","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_FALSE(unknown.charge.has_value());
  RequestContext health = run("GET", "/healthz", {}, "");
  EXPECT_FALSE(health.charge.has_value());
}

TEST_F(PipelineTest, AnUnreadablePriceCatalogueRefusesTheSnapshot) {
  config::LoadOptions options;
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  const std::string yaml =
      std::string(kConfig) + "metering: { prices: /nonexistent/prices.yaml }\n";
  auto cfg = providers::load_config_string(yaml, "test.yaml", options);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  auto snap = Snapshot::build(*cfg);
  ASSERT_FALSE(snap.has_value());
  EXPECT_NE(snap.error().message().find("metering.prices"), std::string::npos);
}

// --- keys and budgets from the store --------------------------------------------------------

constexpr const char* kStoreKey = "sk-slc-store-key-000000000001";
constexpr const char* kRevokedKey = "sk-slc-store-key-000000000002";
constexpr const char* kFrozenKey = "sk-slc-store-key-000000000003";

std::string hex(const char* secret) {
  const std::array<char, 64> h = sha256_hex(secret);
  return std::string(h.data(), h.size());
}

class StoreKeyTest : public PipelineTest {
 protected:
  StoreKeyTest() {
    store::KeyGroup research;
    research.name = "research";
    research.allowed_aliases = {"gpt", "priced"};
    store::Budget budget;
    budget.amount_micros = 1000;
    budget.mode = store::BudgetMode::kHard;
    research.budget = budget;
    store::KeyGroup frozen;
    frozen.name = "frozen";
    frozen.disabled = true;
    state_.revision = 3;
    state_.groups = {research, frozen};
    state_.keys = {key("key_1", "indexer", "research", kStoreKey),
                   key("key_2", "old", "research", kRevokedKey),
                   key("key_3", "cold", "frozen", kFrozenKey)};
    state_.keys[1].status = store::KeyStatus::kRevoked;
    tenancy::KeySet::Accounts accounts;
    accounts.group = [this](const store::KeyGroup& g) {
      return account(tenancy::BudgetAccount::Kind::kGroup, g, g.budget->amount_micros);
    };
    accounts.pool = [this](const store::KeyGroup& g, std::int64_t cap) {
      return account(tenancy::BudgetAccount::Kind::kPool, g, cap);
    };
    accounts.key = [this](const store::KeyGroup& g, const store::ApiKey&) {
      return account(tenancy::BudgetAccount::Kind::kKey, g, 0);
    };
    set_ = tenancy::KeySet::build(state_, accounts);
    store_keys_.publish(set_);
  }

  static store::ApiKey key(std::string id, std::string name, std::string group,
                           const char* secret) {
    store::ApiKey k;
    k.id = std::move(id);
    k.name = std::move(name);
    k.group = std::move(group);
    k.sha256_hex = hex(secret);
    return k;
  }

  std::shared_ptr<tenancy::BudgetAccount> account(tenancy::BudgetAccount::Kind kind,
                                                  const store::KeyGroup& g, std::int64_t cap) {
    auto a =
        std::make_shared<tenancy::BudgetAccount>(kind, g.name, g.name, *g.budget, cap, TimeZone());
    a->start_period(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now().time_since_epoch())
            .count());
    return a;
  }

  RequestContext call(const char* secret, const std::string& body = kChatBody) {
    return run("POST", "/v1/chat/completions", {{"authorization", std::string("Bearer ") + secret}},
               body);
  }

  static Script answer() {
    Script s;
    s.reads = {R"({"id":"x","object":"chat.completion","choices":[{"index":0,"message":)",
               R"({"role":"assistant","content":"yo"},"finish_reason":"stop"}],)"
               R"("usage":{"prompt_tokens":40,"completion_tokens":10,"total_tokens":50}})"};
    return s;
  }

  tenancy::BudgetAccount& pool() const { return *set_->find(hex(kStoreKey), 0).key->budget; }

  store::TenancyState state_;
  std::shared_ptr<const tenancy::KeySet> set_;
};

TEST_F(StoreKeyTest, AStoreKeyIsAKeyLikeAConfigKey) {
  connector_.scripts.push_back(answer());
  RequestContext ctx = call(kStoreKey);
  EXPECT_EQ(downstream_.status, 200);
  ASSERT_NE(ctx.key, nullptr);
  EXPECT_EQ(ctx.key->name, "indexer");
  EXPECT_EQ(ctx.key->group, "research");
  EXPECT_EQ(ctx.key_set, set_) << "the request holds the set its key points into";
  const store::UsageRecord r = build_usage_record(ctx, "id");
  EXPECT_EQ(r.key_name, "indexer");
  EXPECT_EQ(r.key_group, "research");
  // The config's keys still work, and come first.
  connector_.scripts.push_back(answer());
  RequestContext config_key = chat(kChatBody);
  EXPECT_EQ(config_key.key->name, "team");
  EXPECT_EQ(config_key.key_set, nullptr);
}

TEST_F(StoreKeyTest, ANewlyPublishedKeySetServesTheNextRequest) {
  connector_.scripts.push_back(answer());
  EXPECT_EQ(call(kStoreKey).key_set, set_);  // the worker now holds its copy of set_
  // The key is revoked in the next revision: the worker's copy must not outlive the publish.
  state_.revision = 4;
  state_.keys[0].status = store::KeyStatus::kRevoked;
  auto next = tenancy::KeySet::build(state_);
  store_keys_.publish(next);
  downstream_ = FakeDownstream();
  call(kStoreKey);
  EXPECT_EQ(downstream_.status, 401);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "key_revoked");
}

TEST_F(StoreKeyTest, StoredResponsesBelongToTheKeysIdNotItsName) {
  // key_1 ("indexer") stores a response; then it is renamed and a new key takes its old name.
  Script s;
  s.reads = {R"({"id":"resp_k1","object":"response","status":"completed","model":"m","output":[],)"
             R"("usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}})"};
  connector_.scripts.push_back(std::move(s));
  run("POST", "/v1/responses", {{"authorization", std::string("Bearer ") + kStoreKey}},
      R"({"model":"gpt","input":"hi"})");
  ASSERT_EQ(downstream_.status, 200);
  ASSERT_TRUE(affinity_.find("resp_k1", clock_.now()));
  constexpr const char* kNewKey = "sk-slc-store-key-000000000009";
  state_.revision = 4;
  state_.keys[0].name = "renamed";
  state_.keys.push_back(key("key_9", "indexer", "research", kNewKey));
  store_keys_.publish(tenancy::KeySet::build(state_));

  downstream_ = FakeDownstream();
  run("GET", "/v1/responses/resp_k1", {{"authorization", std::string("Bearer ") + kNewKey}}, "");
  EXPECT_EQ(downstream_.status, 404) << "a key that took the old name reads nothing of it";
  EXPECT_EQ(connector_.sent.size(), 1u);

  Script again;
  again.reads = {R"({"id":"resp_k1","object":"response","status":"completed"})"};
  connector_.scripts.push_back(std::move(again));
  downstream_ = FakeDownstream();
  run("GET", "/v1/responses/resp_k1", {{"authorization", std::string("Bearer ") + kStoreKey}}, "");
  EXPECT_EQ(downstream_.status, 200) << "the renamed key still owns what it stored";
}

TEST_F(StoreKeyTest, RefusedKeysAre401sInTheCallersProtocol) {
  call(kRevokedKey);
  EXPECT_EQ(downstream_.status, 401);
  EXPECT_EQ(downstream_.json_body().at("error").at("message"), "API key revoked");
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "key_revoked");
  EXPECT_EQ(downstream_.json_body().at("error").at("type"), "authentication_error");
  EXPECT_EQ(downstream_.headers["x-should-retry"], "false");

  downstream_ = FakeDownstream();
  run("POST", "/v1/messages", {{"x-api-key", kFrozenKey}, {"anthropic-version", "2023-06-01"}},
      R"({"model":"gpt","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 401);
  EXPECT_EQ(downstream_.json_body().at("error").at("type"), "authentication_error");
  EXPECT_EQ(downstream_.json_body().at("error").at("message"),
            "API key's key group frozen is disabled");

  downstream_ = FakeDownstream();
  call("sk-slc-never-issued-0000000009");
  EXPECT_EQ(downstream_.status, 401);
  EXPECT_EQ(downstream_.json_body().at("error").at("message"), "invalid API key");
  EXPECT_TRUE(connector_.sent.empty());
}

TEST_F(StoreKeyTest, TheGroupsAliasesBoundItsKeys) {
  call(kStoreKey, R"({"model":"local","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 403);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "model_not_allowed");
}

TEST_F(StoreKeyTest, SettledChargesCountAndAHardBudgetRefusesOnceReached) {
  connector_.scripts.push_back(answer());
  RequestContext first =
      call(kStoreKey, R"({"model":"priced","messages":[{"role":"user","content":"hi"}]})");
  ASSERT_TRUE(first.charge.has_value());
  ASSERT_TRUE(first.charge->priced);
  // gpt-4o: 40 input tokens at 2.50 and 10 output at 10.00 per million.
  EXPECT_EQ(first.charge->micros, 200);
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now().time_since_epoch())
          .count();
  EXPECT_EQ(pool().spent(now), 200);
  EXPECT_EQ(first.store_key->charge_to[1]->spent(now), 200) << "the group's account too";

  pool().add(800);  // the cap (1000) reached
  const std::size_t sent = connector_.sent.size();
  call(kStoreKey);
  EXPECT_EQ(downstream_.status, 429);
  const json::value body = downstream_.json_body();
  const json::value& error = body.at("error");
  EXPECT_EQ(error.at("type"), "insufficient_quota");
  EXPECT_EQ(error.at("code"), "insufficient_quota");
  EXPECT_NE(std::string(error.at("message").as_string()).find("key group research"),
            std::string::npos);
  EXPECT_EQ(downstream_.headers["x-should-retry"], "false");
  EXPECT_EQ(connector_.sent.size(), sent) << "refused before any upstream work";

  downstream_ = FakeDownstream();
  run("POST", "/v1/messages", {{"x-api-key", kStoreKey}, {"anthropic-version", "2023-06-01"}},
      R"({"model":"gpt","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 429);
  EXPECT_EQ(downstream_.json_body().at("error").at("type"), "rate_limit_error");
}

}  // namespace
}  // namespace sluice::pipeline
