#include "pipeline/usage_observer.h"

#include <filesystem>

#include <gtest/gtest.h>
#include <unistd.h>

#include "config/config.h"
#include "protocol/registry.h"
#include "store/usage_fields.h"

namespace sluice::pipeline {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// A streamed chat call that failed over once: every field the record takes from the context.
RequestContext two_attempt_stream(const config::Key& key) {
  RequestContext ctx;
  ctx.endpoint = Endpoint::kModelCall;
  ctx.ingress = protocol::find_ingress("/v1/chat/completions");
  ctx.request_id = "req-9";
  ctx.key = &key;
  ctx.feature = "search";
  ctx.alias = "fast";
  ctx.stream = true;
  ctx.started = RequestContext::Clock::time_point(std::chrono::seconds(100));
  ctx.ended = ctx.started + microseconds(2'000'000);
  ctx.wall_started = std::chrono::system_clock::time_point(milliseconds(1'800'000'000'000));
  ctx.wall_ended = ctx.wall_started + milliseconds(2000);
  Attempt& first = ctx.attempts.emplace_back();
  first.provider = "down";
  first.model = "m0";
  first.path = "0";
  first.status = 503;
  first.error = Error(ErrorKind::kUpstreamStatus, 503, "busy");
  first.acquire = microseconds(1000);
  first.first_byte = microseconds(20'000);
  first.duration = microseconds(30'000);
  Attempt& second = ctx.attempts.emplace_back();
  second.provider = "up";
  second.model = "m1";
  second.path = "1";
  second.status = 200;
  second.backoff = milliseconds(100);
  second.acquire = microseconds(500);
  second.first_byte = microseconds(300'000);
  second.duration = microseconds(1'800'000);
  second.reused_connection = true;
  ctx.status = 200;
  ctx.outcome = Outcome::kComplete;
  ctx.finish_reason = "stop";
  ctx.usage = ir::Usage{.input_tokens = 120,
                        .output_tokens = 50,
                        .cache_read_tokens = 100,
                        .cache_write_tokens = 7,
                        .reasoning_tokens = 9};
  ctx.first_token = microseconds(500'000);
  metering::Charge charge;
  charge.priced = true;
  charge.price_version = "2026-11-01";
  charge.currency = "USD";
  charge.micros = 1234;
  charge.items_json = R"([{"item":"input"}])";
  ctx.charge = charge;
  return ctx;
}

TEST(UsageRecord, EveryFieldComesFromTheContext) {
  config::Key key;
  key.name = "team-a";
  key.group = "research";
  const RequestContext ctx = two_attempt_stream(key);
  const store::UsageRecord r = build_usage_record(ctx, "inst-0-1");
  EXPECT_EQ(r.record_id, "inst-0-1");
  EXPECT_EQ(r.request_id, "req-9");
  EXPECT_EQ(r.started_at_ms, 1'800'000'000'000);
  EXPECT_EQ(r.ended_at_ms, 1'800'000'002'000);
  EXPECT_EQ(r.key_name, "team-a");
  EXPECT_EQ(r.key_group, "research");
  EXPECT_EQ(r.tenant, "");  // tenants come with the admission issue
  EXPECT_EQ(r.feature, "search");
  EXPECT_EQ(r.ingress, "openai_chat");
  EXPECT_EQ(r.operation, "chat");
  EXPECT_EQ(r.alias, "fast");
  EXPECT_EQ(r.provider, "up");  // the attempt that answered
  EXPECT_EQ(r.model, "m1");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.usage_reported);
  EXPECT_EQ(r.input_tokens, 120u);
  EXPECT_EQ(r.output_tokens, 50u);
  EXPECT_EQ(r.cache_read_tokens, 100u);
  EXPECT_EQ(r.cache_write_tokens, 7u);
  EXPECT_EQ(r.reasoning_tokens, 9u);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.outcome, "complete");
  EXPECT_EQ(r.error_class, "");
  EXPECT_EQ(r.finish_reason, "stop");
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].provider, "down");
  EXPECT_EQ(r.attempts[0].model, "m0");
  EXPECT_EQ(r.attempts[0].path, "0");
  EXPECT_EQ(r.attempts[0].status, 503);
  EXPECT_EQ(r.attempts[0].error_class, "upstream_status");
  EXPECT_EQ(r.attempts[0].acquire_us, 1000);
  EXPECT_EQ(r.attempts[0].first_byte_us, 20'000);
  EXPECT_EQ(r.attempts[0].duration_us, 30'000);
  EXPECT_EQ(r.attempts[0].backoff_ms, 0);
  EXPECT_EQ(r.attempts[1].backoff_ms, 100);
  EXPECT_EQ(r.attempts[1].error_class, "");
  EXPECT_TRUE(r.attempts[1].reused_connection);
  EXPECT_TRUE(r.priced);
  EXPECT_EQ(r.price_version, "2026-11-01");
  EXPECT_EQ(r.currency, "USD");
  EXPECT_EQ(r.cost_micros, 1234);
  EXPECT_EQ(r.cost_items, R"([{"item":"input"}])");
}

// The observer refills one record per request: a request with no key, no attempt, no usage and
// no charge, filled after a full one, must keep nothing of it.
TEST(UsageRecord, ARefilledRecordKeepsNothingOfTheOneBefore) {
  config::Key key;
  key.name = "team-a";
  key.group = "research";
  store::UsageRecord reused;
  fill_usage_record(two_attempt_stream(key), "inst-0-1", reused);
  RequestContext bare;
  bare.request_id = "req-bare";
  bare.status = 400;
  fill_usage_record(bare, "inst-0-2", reused);
  const store::UsageRecord fresh = build_usage_record(bare, "inst-0-2");
  std::string got;
  std::string want;
  for (auto [record, out] : {std::pair<const store::UsageRecord*, std::string*>{&reused, &got},
                             std::pair<const store::UsageRecord*, std::string*>{&fresh, &want}}) {
    store::visit_usage_fields(*record, [&](std::string_view name, const auto& v) {
      using T = std::decay_t<decltype(v)>;
      *out += std::string(name) + "=";
      if constexpr (std::is_same_v<T, std::string>) {
        *out += v;
      } else if constexpr (std::is_same_v<T, std::vector<store::AttemptRecord>>) {
        *out += store::encode_attempts(v);
      } else {
        *out += std::to_string(v);
      }
      *out += "\n";
    });
  }
  EXPECT_EQ(got, want);
}

TEST(UsageRecord, TimingsArithmetic) {
  config::Key key;
  const store::UsageRecord r = build_usage_record(two_attempt_stream(key), "x");
  EXPECT_EQ(r.total_us, 2'000'000);
  // 2 s total - (30 ms + 1.8 s in attempts) - 100 ms backoff
  EXPECT_EQ(r.overhead_us, 70'000);
  // backoff + both pool waits
  EXPECT_EQ(r.queue_us, 100'000 + 1000 + 500);
  EXPECT_EQ(r.upstream_ttfb_us, 300'000);  // the answering attempt's, not the failed one's
  EXPECT_EQ(r.ttft_us, 500'000);
  // 50 tokens from the first token (0.5 s) to the end (2 s): 33.333 tokens/s
  EXPECT_EQ(r.output_tokens_per_s_milli, 33'333);
}

TEST(UsageRecord, NonStreamRateUsesTheAnsweringAttemptAndHasNoTtft) {
  config::Key key;
  RequestContext ctx = two_attempt_stream(key);
  ctx.stream = false;
  ctx.first_token = microseconds(-1);
  const store::UsageRecord r = build_usage_record(ctx, "x");
  EXPECT_EQ(r.ttft_us, -1);
  EXPECT_EQ(r.output_tokens_per_s_milli, 50 * 1000 * 1'000'000LL / 1'800'000);
}

TEST(UsageRecord, NothingMeasuredStaysUnmeasured) {
  RequestContext ctx;
  ctx.endpoint = Endpoint::kModelCall;
  ctx.outcome = Outcome::kClientGone;
  ctx.status = 499;
  ctx.error = Error(ErrorKind::kClientGone, "gone");
  const store::UsageRecord r = build_usage_record(ctx, "x");
  EXPECT_EQ(r.outcome, "client_gone");
  EXPECT_EQ(r.error_class, "client_gone");
  EXPECT_FALSE(r.usage_reported);
  EXPECT_EQ(r.upstream_ttfb_us, -1);
  EXPECT_EQ(r.ttft_us, -1);
  EXPECT_EQ(r.output_tokens_per_s_milli, -1);
  EXPECT_FALSE(r.priced);  // no charge: unaccounted, never zero spend
  EXPECT_EQ(r.provider, "");
}

TEST(UsageRecord, OutcomeMapping) {
  const std::pair<Outcome, std::string_view> cases[] = {
      {Outcome::kComplete, "complete"},
      {Outcome::kTruncated, "truncated"},
      {Outcome::kClientGone, "client_gone"},
      {Outcome::kUpstreamError, "upstream_error"},
      {Outcome::kMidstreamError, "midstream_error"},
      // Failed over, then refused by the gateway before anything was sent.
      {Outcome::kNone, "upstream_error"},
  };
  for (const auto& [outcome, name] : cases) {
    RequestContext ctx;
    ctx.endpoint = Endpoint::kModelCall;
    ctx.attempts.emplace_back();
    ctx.outcome = outcome;
    EXPECT_EQ(build_usage_record(ctx, "x").outcome, name);
  }
}

TEST(UsageRecord, OnlyModelCallsPastRoutingGetOne) {
  RequestContext ctx;
  ctx.endpoint = Endpoint::kHealth;
  ctx.status = 200;
  EXPECT_FALSE(gets_usage_record(ctx));
  ctx.endpoint = Endpoint::kModels;
  EXPECT_FALSE(gets_usage_record(ctx));
  ctx.endpoint = Endpoint::kModelCall;  // refused by auth, decoding, routing or admission
  ctx.status = 401;
  EXPECT_FALSE(gets_usage_record(ctx));
  ctx.outcome = Outcome::kComplete;  // answered by the gateway (count_tokens estimate)
  EXPECT_TRUE(gets_usage_record(ctx));
  ctx.outcome = Outcome::kNone;
  ctx.attempts.emplace_back();
  EXPECT_TRUE(gets_usage_record(ctx));
  ctx.endpoint = Endpoint::kStoredObject;  // GET of a stored response: not a model call
  EXPECT_FALSE(gets_usage_record(ctx));
}

TEST(UsageRecord, FeatureIsVisibleAsciiAndBounded) {
  EXPECT_EQ(bounded_feature("search", 64), "search");
  EXPECT_EQ(bounded_feature("", 64), "");
  EXPECT_EQ(bounded_feature("abcdef", 4), "abcd");
  EXPECT_EQ(bounded_feature("two words\ttab", 64), "two_words_tab");
  EXPECT_EQ(bounded_feature("caf\xC3\xA9", 64), "caf__");
  EXPECT_EQ(bounded_feature(std::string("a\0b", 3), 64), "a_b");
  EXPECT_EQ(bounded_feature("\x7F~!", 64), "_~!");
  EXPECT_EQ(bounded_feature(std::string(1000, 'x'), 64).size(), 64u);
}

TEST(UsageRecord, ChargeInputIsTheAnsweringAttemptAtEntry) {
  config::Key key;
  const RequestContext ctx = two_attempt_stream(key);
  const metering::ChargeInput in = charge_input(ctx);
  EXPECT_EQ(in.provider, "up");
  EXPECT_EQ(in.model, "m1");
  EXPECT_EQ(in.operation, "chat");
  EXPECT_TRUE(in.usage_reported);
  EXPECT_EQ(in.usage.output_tokens, 50u);
  EXPECT_EQ(in.entered_at_ms, 1'800'000'000'000);
}

TEST(UsageObserver, QueuesOneRecordPerModelCallWithUniqueIds) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("sluice-usage-observer-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  metering::UsageSinkOptions options;
  options.workers = 2;
  options.spool_path = (dir / "spool").string();
  metering::UsageSink sink(options, [] { return Result<std::unique_ptr<store::Store>>(nullptr); });
  UsageObserver w0(sink, 0);
  UsageObserver w1(sink, 1);
  config::Key key;
  const RequestContext call = two_attempt_stream(key);
  RequestContext health;
  health.endpoint = Endpoint::kHealth;
  w0.on_finish(call);
  w0.on_finish(health);
  w0.on_finish(call);
  w1.on_finish(call);
  EXPECT_EQ(sink.queue_depth(), 3u);
  sink.stop(std::chrono::milliseconds(0));  // no store: all three go to the spool
  auto spool = metering::Spool::open(options.spool_path);
  ASSERT_TRUE(spool);
  auto chunk = (*spool)->read(0, 10);
  ASSERT_TRUE(chunk);
  ASSERT_EQ(chunk->records.size(), 3u);
  std::set<std::string> ids;
  for (const auto& r : chunk->records) {
    ids.insert(r.record_id);
    EXPECT_TRUE(r.record_id.starts_with(sink.instance_id() + "-"));
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_TRUE(ids.contains(sink.instance_id() + "-0-1"));
  EXPECT_TRUE(ids.contains(sink.instance_id() + "-0-2"));
  EXPECT_TRUE(ids.contains(sink.instance_id() + "-1-1"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::pipeline
