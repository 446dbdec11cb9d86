#include "observability/metrics.h"

#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace sluice::observability {
namespace {

FamilySpec counter(std::string name, std::vector<std::string> labels) {
  FamilySpec s;
  s.name = std::move(name);
  s.help = "help of " + s.name;
  s.labels = std::move(labels);
  return s;
}

bool contains(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(Metrics, CounterExpositionHasHelpTypeAndSortedSeries) {
  MetricsRegistry reg(1);
  const FamilyId f = reg.add(counter("sluice_things_total", {"kind", "code"}));
  reg.shard(0).at(f, {"b", "200"}).add(2);
  reg.shard(0).at(f, {"a", "500"}).add(1);
  reg.shard(0).at(f, {"b", "200"}).add(3);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text,
                       "# HELP sluice_things_total help of sluice_things_total\n"
                       "# TYPE sluice_things_total counter\n"
                       "sluice_things_total{kind=\"a\",code=\"500\"} 1\n"
                       "sluice_things_total{kind=\"b\",code=\"200\"} 5\n"))
      << text;
}

TEST(Metrics, ShardsAreSummedAtScrape) {
  MetricsRegistry reg(3);
  const FamilyId f = reg.add(counter("sluice_x_total", {"alias"}));
  for (std::size_t w = 0; w < 3; ++w) {
    reg.shard(w).at(f, {"chat"}).add(w + 1);
  }
  reg.shard(2).at(f, {"embed"}).add(7);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text, "sluice_x_total{alias=\"chat\"} 6\n")) << text;
  EXPECT_TRUE(contains(text, "sluice_x_total{alias=\"embed\"} 7\n")) << text;
}

TEST(Metrics, SameLabelSetIsTheSameSeries) {
  MetricsRegistry reg(1);
  const FamilyId f = reg.add(counter("sluice_y_total", {"a", "b"}));
  Series& s1 = reg.shard(0).at(f, {"ab", "c"});
  Series& s2 = reg.shard(0).at(f, {"a", "bc"});
  Series& s3 = reg.shard(0).at(f, {"ab", "c"});
  EXPECT_EQ(&s1, &s3);
  EXPECT_NE(&s1, &s2);
}

TEST(Metrics, ManySeriesSurviveIndexGrowth) {
  MetricsRegistry reg(1);
  FamilySpec spec = counter("sluice_z_total", {"n"});
  spec.max_series = 5000;
  const FamilyId f = reg.add(spec);
  for (int i = 0; i < 3000; ++i) {
    reg.shard(0).at(f, {std::to_string(i)}).add(i);
  }
  for (int i = 0; i < 3000; i += 7) {
    reg.shard(0).at(f, {std::to_string(i)}).add(1);
  }
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text, "sluice_z_total{n=\"2999\"} 2999\n"));
  EXPECT_TRUE(contains(text, "sluice_z_total{n=\"2996\"} 2997\n"));  // 2996 = 7 * 428
  EXPECT_TRUE(contains(text, "sluice_metrics_series_dropped_total 0\n"));
}

TEST(Metrics, FixedLabelValuesShareOneLookup) {
  MetricsRegistry reg(2);
  FamilySpec spec = counter("sluice_tokens_total", {"key"});
  spec.fixed_label = "type";
  spec.fixed_values = {"input", "output"};
  const FamilyId f = reg.add(spec);
  Series& s = reg.shard(0).at(f, {"team-a"});
  s.add(10, 0);
  s.add(4, 1);
  reg.shard(1).at(f, {"team-a"}).add(1, 1);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text,
                       "sluice_tokens_total{key=\"team-a\",type=\"input\"} 10\n"
                       "sluice_tokens_total{key=\"team-a\",type=\"output\"} 5\n"))
      << text;
}

TEST(Metrics, HistogramIsCumulativeWithSumCountAndInf) {
  MetricsRegistry reg(2);
  FamilySpec spec = counter("sluice_latency_seconds", {"provider"});
  spec.type = MetricType::kHistogram;
  spec.buckets = {0.1, 0.5, 1};
  const FamilyId f = reg.add(spec);
  reg.shard(0).at(f, {"p"}).observe(0.05);
  reg.shard(0).at(f, {"p"}).observe(0.1);  // le is inclusive
  reg.shard(1).at(f, {"p"}).observe(0.7);
  reg.shard(1).at(f, {"p"}).observe(3);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text,
                       "# TYPE sluice_latency_seconds histogram\n"
                       "sluice_latency_seconds_bucket{provider=\"p\",le=\"0.1\"} 2\n"
                       "sluice_latency_seconds_bucket{provider=\"p\",le=\"0.5\"} 2\n"
                       "sluice_latency_seconds_bucket{provider=\"p\",le=\"1\"} 3\n"
                       "sluice_latency_seconds_bucket{provider=\"p\",le=\"+Inf\"} 4\n"
                       "sluice_latency_seconds_sum{provider=\"p\"} 3.85\n"
                       "sluice_latency_seconds_count{provider=\"p\"} 4\n"))
      << text;
}

TEST(Metrics, GaugesSumSignedShares) {
  MetricsRegistry reg(2);
  FamilySpec spec = counter("sluice_in_flight", {});
  spec.type = MetricType::kGauge;
  const FamilyId f = reg.add(spec);
  EXPECT_TRUE(contains(reg.scrape(), "sluice_in_flight 0\n"));
  reg.shard(0).at(f, {}).add_signed(3);
  reg.shard(1).at(f, {}).add_signed(-1);  // a request that began on one worker's count
  EXPECT_TRUE(contains(reg.scrape(), "sluice_in_flight 2\n"));
}

TEST(Metrics, LabelValuesAndHelpAreEscaped) {
  MetricsRegistry reg(1);
  FamilySpec spec = counter("sluice_e_total", {"model"});
  spec.help = "line one\nback\\slash";
  const FamilyId f = reg.add(spec);
  reg.shard(0).at(f, {"a\"b\\c\nd"}).add(1);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text, "# HELP sluice_e_total line one\\nback\\\\slash\n")) << text;
  EXPECT_TRUE(contains(text, "sluice_e_total{model=\"a\\\"b\\\\c\\nd\"} 1\n")) << text;
}

TEST(Metrics, SeriesCapFoldsIntoOverflow) {
  MetricsRegistry reg(1);
  FamilySpec spec = counter("sluice_c_total", {"a", "b"});
  spec.max_series = 2;
  const FamilyId f = reg.add(spec);
  reg.shard(0).at(f, {"1", "x"}).add(1);
  reg.shard(0).at(f, {"2", "x"}).add(1);
  reg.shard(0).at(f, {"3", "x"}).add(1);
  reg.shard(0).at(f, {"4", "x"}).add(1);
  reg.shard(0).at(f, {"1", "x"}).add(1);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text, "sluice_c_total{a=\"1\",b=\"x\"} 2\n")) << text;
  EXPECT_TRUE(contains(text, "sluice_c_total{a=\"_overflow\",b=\"_overflow\"} 2\n")) << text;
  EXPECT_FALSE(contains(text, "a=\"3\""));
}

TEST(Metrics, WrongLabelCountIsDiscardedAndCounted) {
  MetricsRegistry reg(1);
  const FamilyId f = reg.add(counter("sluice_w_total", {"a"}));
  reg.shard(0).at(f, {"1", "2"}).add(5);
  const std::string text = reg.scrape();
  EXPECT_TRUE(contains(text, "sluice_metrics_series_dropped_total 1\n")) << text;
  EXPECT_FALSE(contains(text, "sluice_w_total{"));
}

TEST(Metrics, CallbacksAreReadAtScrapeAndUnregistered) {
  MetricsRegistry reg(1);
  double depth = 3;
  CallbackHandle a = reg.observe(MetricType::kGauge, "sluice_queue_depth", "Queue depth.",
                                 {"queue"}, [&](SampleSink& s) { s.sample({"usage"}, depth); });
  CallbackHandle b = reg.observe(MetricType::kGauge, "sluice_queue_depth", "Queue depth.",
                                 {"queue"}, [](SampleSink& s) { s.sample({"traces"}, 1.5); });
  depth = 9;
  std::string text = reg.scrape();
  EXPECT_TRUE(contains(text,
                       "# TYPE sluice_queue_depth gauge\n"
                       "sluice_queue_depth{queue=\"traces\"} 1.5\n"
                       "sluice_queue_depth{queue=\"usage\"} 9\n"))
      << text;
  b.reset();
  text = reg.scrape();
  EXPECT_FALSE(contains(text, "traces"));
  EXPECT_TRUE(contains(text, "sluice_queue_depth{queue=\"usage\"} 9\n"));
}

TEST(Metrics, InvalidSpecsThrow) {
  MetricsRegistry reg(1);
  EXPECT_THROW(reg.add(counter("9bad", {})), std::invalid_argument);
  EXPECT_THROW(reg.add(counter("ok_total", {"le"})), std::invalid_argument);
  EXPECT_THROW(reg.add(counter("ok_total", {"__x"})), std::invalid_argument);
  FamilySpec h = counter("h_seconds", {});
  h.type = MetricType::kHistogram;
  h.buckets = {1, 0.5};
  EXPECT_THROW(reg.add(h), std::invalid_argument);
  reg.add(counter("twice_total", {"a"}));
  EXPECT_EQ(reg.add(counter("twice_total", {"a"})).index,
            reg.add(counter("twice_total", {"a"})).index);
  EXPECT_THROW(reg.add(counter("twice_total", {"b"})), std::invalid_argument);
}

// Workers write their own shards while another thread scrapes (run under TSan in the tsan
// build): the totals seen at the end are exact.
TEST(Metrics, ConcurrentWritersAndScrapesAgree) {
  constexpr int kWorkers = 4;
  constexpr int kAdds = 20000;
  MetricsRegistry reg(kWorkers);
  const FamilyId f = reg.add(counter("sluice_n_total", {"w"}));
  std::atomic<bool> done{false};
  std::thread scraper([&] {
    while (!done.load()) {
      (void)reg.scrape();
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int i = 0; i < kAdds; ++i) {
        reg.shard(w).at(f, {std::to_string(i % 50)}).add(1);
      }
    });
  }
  for (auto& t : workers) {
    t.join();
  }
  done = true;
  scraper.join();
  const std::string text = reg.scrape();
  EXPECT_TRUE(
      contains(text, "sluice_n_total{w=\"0\"} " + std::to_string(kWorkers * kAdds / 50) + "\n"))
      << text;
}

}  // namespace
}  // namespace sluice::observability
