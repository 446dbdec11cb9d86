#include "pipeline/metrics_observer.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace sluice::pipeline {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

bool contains(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

// A streamed call that failed over from a 503 to a second target, with usage and a price.
RequestContext failed_over_stream(const config::Key& key) {
  RequestContext ctx;
  ctx.started = RequestContext::Clock::time_point{} + std::chrono::seconds(100);
  ctx.ended = ctx.started + milliseconds(2000);
  ctx.key = &key;
  ctx.alias = "chat";
  ctx.status = 200;
  ctx.outcome = Outcome::kComplete;
  ctx.first_token = milliseconds(1000);
  ctx.usage = ir::Usage{.input_tokens = 100,
                        .output_tokens = 50,
                        .cache_read_tokens = 40,
                        .cache_write_tokens = 0,
                        .reasoning_tokens = 7};
  ctx.charge.emplace();
  ctx.charge->priced = true;
  ctx.charge->micros = 1234;
  return ctx;
}

Attempt& add_attempt(RequestContext& ctx, std::string_view provider, int status) {
  Attempt& a = ctx.attempts.emplace_back();
  a.provider = provider;
  a.model = "m";
  a.status = status;
  return a;
}

TEST(MetricsObserver, CountsRequestsAttemptsRetriesTokensAndCost) {
  observability::MetricsRegistry reg(1);
  const RequestMetrics families = RequestMetrics::register_in(reg);
  MetricsObserver observer(reg.shard(0), families);
  config::Key key;
  key.name = "team-a";
  RequestContext ctx = failed_over_stream(key);

  Attempt& first = ctx.attempts.emplace_back();
  first.provider = "p1";
  first.model = "m1";
  first.path = "0";
  first.status = 503;
  first.error = Error(ErrorKind::kUpstreamStatus, 503, "busy");
  first.first_byte = milliseconds(100);
  first.duration = milliseconds(120);
  observer.on_attempt(ctx, ctx.attempts.back());
  Attempt& second = ctx.attempts.emplace_back();
  second.provider = "p2";
  second.model = "m2";
  second.path = "1";
  second.status = 200;
  second.first_byte = milliseconds(300);
  second.duration = milliseconds(1850);
  observer.on_attempt(ctx, ctx.attempts.back());
  observer.on_finish(ctx);

  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text,
                       "sluice_requests_total{alias=\"chat\",provider=\"p2\",model=\"m2\","
                       "status=\"200\",outcome=\"complete\"} 1\n"))
      << text;
  EXPECT_TRUE(contains(
      text, "sluice_upstream_attempts_total{provider=\"p1\",model=\"m1\",result=\"5xx\"} 1\n"));
  EXPECT_TRUE(contains(
      text, "sluice_upstream_attempts_total{provider=\"p2\",model=\"m2\",result=\"2xx\"} 1\n"));
  EXPECT_TRUE(contains(text,
                       "sluice_upstream_retries_total{provider=\"p1\",model=\"m1\","
                       "reason=\"5xx\",kind=\"failover\"} 1\n"));
  EXPECT_TRUE(
      contains(text, "sluice_tokens_total{key=\"team-a\",model=\"m2\",type=\"input\"} 100\n"));
  EXPECT_TRUE(
      contains(text, "sluice_tokens_total{key=\"team-a\",model=\"m2\",type=\"output\"} 50\n"));
  EXPECT_TRUE(
      contains(text, "sluice_tokens_total{key=\"team-a\",model=\"m2\",type=\"cache_read\"} 40\n"));
  EXPECT_TRUE(
      contains(text, "sluice_tokens_total{key=\"team-a\",model=\"m2\",type=\"reasoning\"} 7\n"));
  EXPECT_TRUE(contains(
      text, "sluice_cost_micros_total{key=\"team-a\",model=\"m2\",currency=\"USD\"} 1234\n"));
  // 2 s total - (0.12 + 1.85) s upstream = 30 ms of gateway time.
  EXPECT_TRUE(contains(text, "sluice_gateway_overhead_seconds_sum 0.03\n")) << text;
  EXPECT_TRUE(contains(text,
                       "sluice_time_to_first_token_seconds_bucket{provider=\"p2\",model=\"m2\","
                       "le=\"1\"} 1\n"));
  // 50 tokens over the second after the first token.
  EXPECT_TRUE(
      contains(text, "sluice_output_tokens_per_second_sum{provider=\"p2\",model=\"m2\"} 50\n"));
  EXPECT_TRUE(contains(text,
                       "sluice_upstream_time_to_first_byte_seconds_count{provider=\"p1\","
                       "model=\"m1\"} 1\n"));
  EXPECT_TRUE(contains(text, "sluice_request_duration_seconds_count{alias=\"chat\"} 1\n"));
}

TEST(MetricsObserver, UnpricedCallIsUnaccountedNotFree) {
  observability::MetricsRegistry reg(1);
  MetricsObserver observer(reg.shard(0), RequestMetrics::register_in(reg));
  config::Key key;
  key.name = "k";
  RequestContext ctx = failed_over_stream(key);
  ctx.charge->priced = false;
  Attempt& a = ctx.attempts.emplace_back();
  a.provider = "p";
  a.model = "m";
  a.status = 200;
  a.duration = milliseconds(10);
  observer.on_finish(ctx);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text, "sluice_unaccounted_requests_total{key=\"k\",model=\"m\"} 1\n"));
  EXPECT_FALSE(contains(text, "sluice_cost_micros_total{"));
}

TEST(MetricsObserver, RequestWithoutModelCallCountsOnlyTheRequest) {
  observability::MetricsRegistry reg(1);
  MetricsObserver observer(reg.shard(0), RequestMetrics::register_in(reg));
  RequestContext ctx;
  ctx.status = 401;
  observer.on_finish(ctx);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text,
                       "sluice_requests_total{alias=\"\",provider=\"\",model=\"\","
                       "status=\"401\",outcome=\"none\"} 1\n"));
  EXPECT_TRUE(contains(text, "sluice_gateway_overhead_seconds_count 0\n")) << text;
}

// Schema drift per provider, so an operator can alert on a provider changing its shapes:
// unknown answer fields per attempt (each its own provider), the translation's losses against
// the provider that served the request.
TEST(MetricsObserver, SchemaDriftByProviderAndKind) {
  observability::MetricsRegistry reg(1);
  MetricsObserver observer(reg.shard(0), RequestMetrics::register_in(reg));
  config::Key key;
  key.name = "k";
  RequestContext ctx = failed_over_stream(key);
  ctx.ignored_fields = 2;
  ctx.dropped_events = 1;
  add_attempt(ctx, "p1", 503).unknown_fields = 3;
  add_attempt(ctx, "p2", 200).unknown_fields = 1;
  observer.on_finish(ctx);
  RequestContext clean = failed_over_stream(key);
  add_attempt(clean, "p3", 200);
  observer.on_finish(clean);

  const std::string text = reg.scrape();
  // p1's request_ignored is 0: the caller's request counts against the provider that served it.
  for (const char* series :
       {"provider=\"p1\",kind=\"answer_unknown\"} 3", "provider=\"p1\",kind=\"request_ignored\"} 0",
        "provider=\"p2\",kind=\"answer_unknown\"} 1", "provider=\"p2\",kind=\"request_ignored\"} 2",
        "provider=\"p2\",kind=\"event_dropped\"} 1"}) {
    EXPECT_TRUE(contains(text, "sluice_schema_drift_total{" + std::string(series) + "\n"))
        << series << "\n"
        << text;
  }
  EXPECT_FALSE(contains(text, "sluice_schema_drift_total{provider=\"p3\""))
      << "no drift, no series";
}

TEST(MetricsObserver, Labels) {
  EXPECT_EQ(status_label(200), "200");
  EXPECT_EQ(status_label(0), "0");
  EXPECT_EQ(status_label(1000), "other");
  Attempt a;
  a.error = Error(ErrorKind::kUpstreamTimeout, "slow");
  EXPECT_EQ(attempt_result(a), "upstream_timeout");
  a.error.reset();
  a.status = 429;
  EXPECT_EQ(attempt_result(a), "429");
}

}  // namespace
}  // namespace sluice::pipeline
