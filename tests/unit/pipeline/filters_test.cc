// The filter chain without sockets: which filters a route's chain holds, what each hook may do
// to a call (refuse, answer, rewrite, fail an attempt over), and the max_output_tokens cap in
// every protocol's field, passthrough and translated.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "pipeline/call_context.h"
#include "pipeline/filters/registry.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream_request.h"
#include "pipeline_fakes.h"
#include "protocol/registry.h"
#include "providers/registry.h"

namespace sluice::pipeline {
namespace {

using namespace fakes;
namespace asio = boost::asio;

constexpr const char* kGatewayKey = "sk-gateway-key-00000001";

constexpr const char* kConfig = R"(
version: 1
listen: 127.0.0.1:0
providers:
  - id: compat
    adapter: openai
    base_url: http://127.0.0.1:9/v1
    api_key: sk-provider-secret-0000000009
  - id: openai
    adapter: openai
    base_url: http://127.0.0.1:9/v2
    api_key: sk-provider-secret-0000000008
    max_tokens_field: max_completion_tokens
  - id: claude
    adapter: anthropic
    base_url: http://127.0.0.1:9
    api_key: sk-ant-provider-secret-00000007
  - id: gem
    adapter: gemini
    base_url: http://127.0.0.1:9
    api_key: gemini-provider-secret-000007
routes:
  - alias: plain
    provider: compat
    model: m
  - alias: ha
    targets:
      - { provider: compat, model: first }
      - { provider: openai, model: second }
  - alias: capped
    provider: compat
    model: m
    max_output_tokens: 100
  - alias: capped-openai
    provider: openai
    model: o
    max_output_tokens: 100
  - alias: capped-claude
    provider: claude
    model: c
    max_output_tokens: 100
  - alias: capped-gemini
    provider: gem
    model: gemini-2.5-flash
    max_output_tokens: 100
  - alias: strict
    provider: compat
    model: m
    max_output_tokens: { limit: 64, action: refuse }
keys:
  - name: team
    key: sk-gateway-key-00000001
)";

// A filter a test scripts: what each hook does, and which hooks ran.
class ScriptedFilter final : public Filter {
 public:
  std::function<FilterStatus(CallContext&)> decode;
  std::function<FilterStatus(CallContext&)> plan;
  std::function<FilterStatus(CallContext&, UpstreamRequest&)> attempt;
  std::function<FilterStatus(CallContext&, std::string&)> body;
  std::function<FilterStatus(CallContext&, std::string&)> stream;
  std::vector<std::string> calls;

  std::string_view name() const override { return "scripted"; }
  FilterHooks hooks() const override {
    return {FilterHook::kAfterDecode,  FilterHook::kBeforePlan,   FilterHook::kBeforeAttempt,
            FilterHook::kResponseHead, FilterHook::kResponseBody, FilterHook::kStreamData,
            FilterHook::kEnd};
  }
  FilterStatus after_decode(CallContext& call) override {
    calls.push_back("after_decode");
    return decode ? decode(call) : FilterStatus::proceed();
  }
  Awaitable<FilterStatus> before_plan(CallContext& call) override {
    calls.push_back("before_plan");
    co_return plan ? plan(call) : FilterStatus::proceed();
  }
  Awaitable<FilterStatus> before_attempt(CallContext& call, UpstreamRequest& up) override {
    calls.push_back("before_attempt:" + up.adapter().id());
    co_return attempt ? attempt(call, up) : FilterStatus::proceed();
  }
  FilterStatus on_response_head(CallContext&, ResponseHead& head) override {
    calls.push_back("head:" + std::to_string(head.status));
    return FilterStatus::proceed();
  }
  FilterStatus on_response_body(CallContext& call, std::string& b) override {
    calls.push_back("body");
    return body ? body(call, b) : FilterStatus::proceed();
  }
  FilterStatus on_stream_data(CallContext& call, std::string& data) override {
    calls.push_back("stream");
    return stream ? stream(call, data) : FilterStatus::proceed();
  }
  void on_end(CallContext&) override { calls.push_back("end"); }
};

// A filter with the out-of-line hooks: work beside the call, a release it may refuse.
class ReleasingFilter final : public Filter {
 public:
  std::function<void(CallContext&)> beside;
  std::function<FilterStatus(CallContext&, const std::string*)> release;
  bool release_waits_for_beside = false;
  std::vector<std::string> calls;

  std::string_view name() const override { return "releasing"; }
  FilterHooks hooks() const override {
    return {FilterHook::kAlongside, FilterHook::kBeforeRelease, FilterHook::kResponseHead};
  }
  Awaitable<void> alongside(CallContext& call) override {
    calls.push_back("alongside");
    if (beside) beside(call);
    beside_done_ = true;
    if (waiting_) waiting_->cancel();
    co_return;
  }
  Awaitable<FilterStatus> before_release(CallContext& call, const std::string* answer) override {
    calls.push_back(answer != nullptr ? "release:" + *answer : "release");
    if (release_waits_for_beside && !beside_done_) {
      waiting_.emplace(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      co_await waiting_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
      calls.push_back("released");
    }
    co_return release ? release(call, answer) : FilterStatus::proceed();
  }
  FilterStatus on_response_head(CallContext&, ResponseHead& head) override {
    calls.push_back("head:" + std::to_string(head.status));
    return FilterStatus::proceed();
  }

 private:
  bool beside_done_ = false;
  std::optional<asio::steady_timer> waiting_;
};

class FiltersTest : public ::testing::Test {
 protected:
  FiltersTest() {
    config::LoadOptions options;
    options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    auto cfg = providers::load_config_string(kConfig, "test.yaml", options);
    EXPECT_TRUE(cfg.has_value()) << cfg.error().message();
    auto snap = Snapshot::build(*cfg);
    EXPECT_TRUE(snap.has_value()) << snap.error().message();
    host_.snapshot = *snap;
    parts_.host = &host_;
    parts_.connector = &connector_;
    parts_.clock = &clock_;
    parts_.observers = observers_;
  }

  Pipeline& pipeline() {
    if (!pipeline_) {
      pipeline_.emplace(parts_);
    }
    return *pipeline_;
  }
  // Appends `filter` to every chain (before the first request).
  void add(Filter& filter) {
    extra_.push_back(&filter);
    parts_.extra_filters_for_test = extra_;
  }

  RequestContext run(const std::string& target,
                     std::vector<std::pair<std::string, std::string>> headers,
                     const std::string& body) {
    RequestContext ctx;
    pipeline().begin(ctx);
    ctx.request_id = "req-1";
    headers.emplace_back("content-length", std::to_string(body.size()));
    FakeHead head("POST", target, std::move(headers));
    std::optional<Error> early = pipeline().on_head(ctx, head);
    asio::io_context ioc;
    asio::co_spawn(
        ioc,
        [&]() -> Awaitable<void> {
          if (early) {
            co_await pipeline().reject(ctx, *early, downstream_);
          } else {
            co_await pipeline().serve(ctx, head, body, downstream_);
          }
        },
        asio::detached);
    ioc.run();
    pipeline().end(ctx);
    return ctx;
  }
  RequestContext chat(const std::string& body) {
    return run("/v1/chat/completions", {{"authorization", std::string("Bearer ") + kGatewayKey}},
               body);
  }
  RequestContext messages(const std::string& body) {
    return run("/v1/messages", {{"x-api-key", kGatewayKey}, {"anthropic-version", "2023-06-01"}},
               body);
  }
  RequestContext gemini(const std::string& model, const std::string& body) {
    return run("/v1beta/models/" + model + ":generateContent", {{"x-goog-api-key", kGatewayKey}},
               body);
  }
  // The chain a route's callers of `path` get.
  std::string chain_of(std::string_view alias, std::string_view path) {
    const auto chains = pipeline().chains(host_.snapshot);
    return chains->of(*host_.snapshot->find_route(alias), *protocol::find_ingress(path)).describe();
  }
  // What the n-th upstream request's body says.
  json::value sent(std::size_t n) const { return json::parse(connector_.sent.at(n).body); }

  static Script chat_answer() {
    Script s;
    s.reads = {R"({"id":"x","object":"chat.completion","created":1,"model":"m","choices":[)"
               R"({"index":0,"message":{"role":"assistant","content":"yo"},)"
               R"("finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,)"
               R"("total_tokens":7}})"};
    return s;
  }
  static Script failing(int status) {
    Script s;
    s.status = status;
    s.reads = {R"({"error":{"message":"down","type":"server_error","param":null,"code":null}})"};
    return s;
  }

  SimulatedClock clock_;
  FakeHost host_;
  FakeConnector connector_;
  FakeDownstream downstream_;
  RecordingObserver observer_;
  std::vector<RequestObserver*> observers_{&observer_};
  std::vector<Filter*> extra_;
  PipelineParts parts_;
  std::optional<Pipeline> pipeline_;
};

// --- the chain -------------------------------------------------------------------------------

TEST_F(FiltersTest, AFilterNotConfiguredIsNotInTheChain) {
  // No store keys, no limits, no affinity store in these parts: nothing but what routes ask.
  EXPECT_EQ(chain_of("plain", "/v1/chat/completions"), "");
  EXPECT_EQ(chain_of("capped", "/v1/chat/completions"), "max_output_tokens");
  EXPECT_EQ(chain_of("capped", "/v1/messages"), "max_output_tokens");
  // A token count produces no output (no cap) and is answered locally when translated.
  EXPECT_EQ(chain_of("capped", "/v1/messages/count_tokens"), "local_answer");
  EXPECT_EQ(chain_of("plain", "/v1/messages/count_tokens"), "local_answer");
}

TEST_F(FiltersTest, ProcessPartsBringTheirFilters) {
  ResponseAffinity affinity;
  tenancy::KeySetHolder keys;
  parts_.affinity = &affinity;
  parts_.store_keys = &keys;
  EXPECT_EQ(chain_of("capped", "/v1/chat/completions"),
            "max_output_tokens, budget, responses_affinity");
}

// --- what hooks may do -----------------------------------------------------------------------

TEST_F(FiltersTest, EveryHookRunsInOrderAndTheEndOnce) {
  ScriptedFilter f;
  add(f);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(f.calls,
            (std::vector<std::string>{"after_decode", "before_plan", "before_attempt:compat",
                                      "head:200", "body", "end"}));
}

TEST_F(FiltersTest, TheReleaseRunsOnceBeforeTheHeadWithTheWholeAnswer) {
  ReleasingFilter f;
  add(f);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  // The work beside the call runs concurrently with it: before or after the release.
  std::vector<std::string> calls = f.calls;
  std::erase(calls, "alongside");
  EXPECT_EQ(f.calls.size(), 3u);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE(calls[0].starts_with("release:{")) << calls[0];
  EXPECT_NE(calls[0].find(R"("content":"yo")"), std::string::npos);
  EXPECT_EQ(calls[1], "head:200");
}

TEST_F(FiltersTest, AReleaseRefusedIsAnsweredInsteadOfTheAnswer) {
  ReleasingFilter f;
  bool cancelled = false;
  f.beside = [&](CallContext& call) { cancelled = call.cancel().cancelled(); };
  f.release = [](CallContext&, const std::string*) {
    return FilterStatus::stop(Error(ErrorKind::kForbidden, "withheld").with_code("verdict"));
  };
  add(f);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 403);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "verdict");
  EXPECT_EQ(downstream_.body.find("yo"), std::string::npos) << "nothing of the answer";
  EXPECT_FALSE(cancelled);
  // Once: the error that replaced the answer is not asked about again.
  EXPECT_EQ(std::count_if(f.calls.begin(), f.calls.end(),
                          [](const std::string& c) { return c.starts_with("release"); }),
            1);
}

TEST_F(FiltersTest, AReleaseMayWaitForTheWorkBesideTheCall) {
  ReleasingFilter f;
  f.release_waits_for_beside = true;
  f.beside = [](CallContext& call) { call.cancel().cancel(); };  // a block: the upstream stops
  f.release = [](CallContext& call, const std::string*) {
    return call.cancel().cancelled()
               ? FilterStatus::stop(Error(ErrorKind::kBadRequest, "blocked").with_code("verdict"))
               : FilterStatus::proceed();
  };
  add(f);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 400);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "verdict");
  EXPECT_NE(std::find(f.calls.begin(), f.calls.end(), "released"), f.calls.end())
      << "the answer came before the verdict and waited for it";
}

TEST_F(FiltersTest, AStopBeforeThePlanIsAnsweredInTheCallersProtocolAndNothingGoesUp) {
  ScriptedFilter f;
  f.plan = [](CallContext&) {
    return FilterStatus::stop(Error(ErrorKind::kForbidden, "not today").with_code("nope"));
  };
  add(f);
  messages(R"({"model":"plain","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 403);
  EXPECT_EQ(downstream_.json_body().at("type"), "error");  // Anthropic's error shape
  EXPECT_EQ(downstream_.json_body().at("error").at("message"), "not today");
  EXPECT_TRUE(connector_.sent.empty());
  EXPECT_EQ(f.calls.back(), "end");
}

TEST_F(FiltersTest, AFilterThatAnswersEndsTheCall) {
  ScriptedFilter f;
  // (A real one writes its answer through call.downstream() first: a cache hit.)
  f.plan = [](CallContext&) { return FilterStatus::answered(); };
  add(f);
  chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_TRUE(connector_.sent.empty());
  EXPECT_EQ(f.calls, (std::vector<std::string>{"after_decode", "before_plan", "end"}));
}

TEST_F(FiltersTest, ARetryableRefusalBeforeAnAttemptMovesOnWithoutSendingIt) {
  ScriptedFilter f;
  f.attempt = [](CallContext&, UpstreamRequest& up) {
    if (up.adapter().id() == "compat") {
      return FilterStatus::stop(Error(ErrorKind::kRateLimited, "compat is full"));
    }
    return FilterStatus::proceed();
  };
  add(f);
  connector_.scripts.push_back(chat_answer());
  RequestContext ctx = chat(R"({"model":"ha","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  ASSERT_EQ(connector_.sent.size(), 1u);
  EXPECT_EQ(sent(0).at("model"), "second");
  ASSERT_EQ(ctx.attempts.size(), 1u) << "a refused attempt is not an upstream attempt";
  EXPECT_EQ(ctx.attempts[0].provider, "openai");
}

TEST_F(FiltersTest, ARefusalBeforeTheLastAttemptIsTheCallersAnswer) {
  ScriptedFilter f;
  f.attempt = [](CallContext&, UpstreamRequest&) {
    return FilterStatus::stop(
        Error(ErrorKind::kRateLimited, "every provider is full").with_retry_after(3));
  };
  add(f);
  RequestContext ctx = chat(R"({"model":"ha","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 429);
  EXPECT_EQ(downstream_.headers["retry-after"], "3");
  EXPECT_TRUE(connector_.sent.empty());
  EXPECT_TRUE(ctx.attempts.empty());
}

TEST_F(FiltersTest, ARewriteAfterDecodeIsWhatTheUpstreamGets) {
  ScriptedFilter f;
  f.decode = [](CallContext& call) {
    std::string body(call.request().body);
    auto rewritten = codec::set_member(body, {"temperature", ""}, "0.25");
    EXPECT_FALSE(call.replace_body(std::move(*rewritten)));
    return FilterStatus::proceed();
  };
  add(f);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"plain","temperature":1.5,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(sent(0).at("temperature").as_double(), 0.25);
  EXPECT_EQ(sent(0).at("model"), "m");
}

TEST_F(FiltersTest, ARewriteThatNoLongerDecodesIsRefused) {
  ScriptedFilter f;
  f.decode = [](CallContext& call) {
    if (std::optional<Error> e = call.replace_body(R"({"model":"plain"})")) {
      return FilterStatus::stop(std::move(*e));
    }
    return FilterStatus::proceed();
  };
  add(f);
  chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 400);
  EXPECT_TRUE(connector_.sent.empty());
}

TEST_F(FiltersTest, AStoppedAnswerIsReplacedByTheError) {
  ScriptedFilter f;
  f.body = [](CallContext&, std::string& body) {
    EXPECT_NE(body.find("\"yo\""), std::string::npos);
    return FilterStatus::stop(Error(ErrorKind::kBadRequest, "answer withheld").with_code("held"));
  };
  add(f);
  connector_.scripts.push_back(chat_answer());
  RequestContext ctx = chat(R"({"model":"plain","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 400);
  EXPECT_EQ(downstream_.json_body().at("error").at("code"), "held");
  ASSERT_TRUE(ctx.usage.has_value()) << "the upstream's work is still metered";
  EXPECT_EQ(ctx.usage->output_tokens, 2u);
}

TEST_F(FiltersTest, StreamDataMayBeChangedOrStopped) {
  ScriptedFilter f;
  int seen = 0;
  f.stream = [&seen](CallContext&, std::string& data) {
    if (++seen == 2) {
      return FilterStatus::stop(Error(ErrorKind::kBadRequest, "stopped here").with_code("held"));
    }
    data += ": noted\n\n";
    return FilterStatus::proceed();
  };
  add(f);
  auto chunk = [](const std::string& delta) {
    return R"(data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":)" +
           delta +
           R"(,"finish_reason":null}]})"
           "\n\n";
  };
  Script s;
  s.headers = {{"content-type", "text/event-stream"}};
  s.reads = {chunk(R"({"role":"assistant","content":"a"})"), chunk(R"({"content":"b"})"),
             chunk(R"({"content":"c"})"), "data: [DONE]\n\n"};
  connector_.scripts.push_back(std::move(s));
  RequestContext ctx =
      chat(R"({"model":"plain","stream":true,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_NE(downstream_.body.find(": noted"), std::string::npos);
  EXPECT_NE(downstream_.body.find("stopped here"), std::string::npos) << downstream_.body;
  EXPECT_EQ(downstream_.body.find("\"c\""), std::string::npos) << "nothing after the stop";
  EXPECT_TRUE(downstream_.ended);
  EXPECT_TRUE(connector_.last_aborted) << "the upstream is not left running";
  EXPECT_EQ(ctx.outcome, Outcome::kMidstreamError);
}

// --- max_output_tokens -----------------------------------------------------------------------

TEST_F(FiltersTest, CapLowersALargerAskInPassthrough) {
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"capped","max_tokens":9000,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(sent(0).at("max_tokens"), 100);
}

TEST_F(FiltersTest, CapLeavesASmallerAskAlone) {
  connector_.scripts.push_back(chat_answer());
  const std::string body =
      R"({"model":"capped","max_completion_tokens":42,"messages":[{"role":"user","content":"hi"}]})";
  chat(body);
  EXPECT_EQ(sent(0).at("max_completion_tokens"), 42);
  EXPECT_FALSE(sent(0).as_object().contains("max_tokens"));
}

TEST_F(FiltersTest, CapAddsALimitWhereTheRequestHadNoneInTheFieldTheUpstreamReads) {
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"capped","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(sent(0).at("max_tokens"), 100) << "a compatible server reads max_tokens";
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"capped-openai","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(sent(1).at("max_completion_tokens"), 100);
  EXPECT_FALSE(sent(1).as_object().contains("max_tokens"));
}

TEST_F(FiltersTest, CapReplacesAValueThatIsNotACount) {
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"capped","max_tokens":"lots","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(sent(0).at("max_tokens"), 100);
}

TEST_F(FiltersTest, CapReachesATranslatedRequest) {
  connector_.scripts.push_back(chat_answer());
  messages(R"({"model":"capped","max_tokens":5000,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_FALSE(connector_.sent.empty());
  EXPECT_EQ(sent(0).at("max_tokens"), 100) << "Anthropic caller, OpenAI-compatible upstream";
}

TEST_F(FiltersTest, CapOfAnAnthropicPassthrough) {
  Script s;
  s.reads = {R"({"id":"msg_1","type":"message","role":"assistant","model":"c","content":[)"
             R"({"type":"text","text":"yo"}],"stop_reason":"end_turn","stop_sequence":null,)"
             R"("usage":{"input_tokens":3,"output_tokens":1}})"};
  connector_.scripts.push_back(std::move(s));
  messages(
      R"({"model":"capped-claude","max_tokens":64000,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(sent(0).at("max_tokens"), 100);
}

TEST_F(FiltersTest, CapOfAGeminiRequestIsItsNestedField) {
  auto answer = [] {
    Script s;
    s.reads = {R"({"candidates":[{"content":{"role":"model","parts":[{"text":"yo"}]},)"
               R"("finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2,)"
               R"("candidatesTokenCount":1,"totalTokenCount":3}})"};
    return s;
  };
  connector_.scripts.push_back(answer());
  gemini("capped-gemini", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(sent(0).at("generationConfig").at("maxOutputTokens"), 100);
  connector_.scripts.push_back(answer());
  gemini("capped-gemini", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],)"
                          R"("generationConfig":{"temperature":0.5,"maxOutputTokens":4096}})");
  EXPECT_EQ(sent(1).at("generationConfig").at("maxOutputTokens"), 100);
  EXPECT_EQ(sent(1).at("generationConfig").at("temperature").as_double(), 0.5);
}

TEST_F(FiltersTest, RefuseModeNamesTheFieldAndTheLimitInTheCallersProtocol) {
  chat(R"({"model":"strict","max_tokens":65,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 400);
  EXPECT_EQ(downstream_.json_body().at("error").at("param"), "max_tokens");
  EXPECT_NE(
      std::string(downstream_.json_body().at("error").at("message").as_string()).find("at most 64"),
      std::string::npos);
  chat(R"({"model":"strict","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 400) << "no limit is more than the route allows";
  EXPECT_TRUE(connector_.sent.empty());
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"strict","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(downstream_.status, 200);
  EXPECT_EQ(sent(0).at("max_tokens"), 64);
}

TEST_F(FiltersTest, TheCappedLimitIsWhatTheCallReportsForAdmission) {
  ScriptedFilter f;
  std::optional<std::uint64_t> seen;
  f.plan = [&seen](CallContext& call) {
    seen = call.output_limit();
    return FilterStatus::proceed();
  };
  add(f);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"capped","max_tokens":9000,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(seen, 100u);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"capped","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(seen, 100u);
  connector_.scripts.push_back(chat_answer());
  chat(R"({"model":"plain","max_tokens":9000,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(seen, 9000u) << "uncapped: what the request asks for";
}

}  // namespace
}  // namespace sluice::pipeline
