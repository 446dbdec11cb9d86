#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::observability {

// Prometheus metrics: counters, gauges and fixed-bucket histograms, exposed in the text format
// 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
// Values written on the request path live in per-worker shards (MetricsShard): a worker only
// ever touches its own shard, with plain loads and stores (relaxed atomics, one writer per
// cell), so the hot path has no lock, no read-modify-write and no shared cache line. A scrape
// reads every shard and sums them. Values owned by other parts (pool sizes, queue depths,
// breaker states) are read at scrape time through callbacks (MetricsRegistry::observe).
//
// Cardinality is bounded by construction: label values must come from configuration (aliases,
// providers, models, key names) or from small fixed sets (status codes, outcomes, reasons),
// never from requests (ids, raw keys). On top of that each family has a per-worker series cap;
// past it, samples go to one series whose every label is "_overflow".

enum class MetricType : std::uint8_t { kCounter, kGauge, kHistogram };

class MetricsRegistry;

// A registered family whose values live in the worker shards. Cheap to copy.
struct FamilyId {
  std::uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
};

// What a family is; fixed at registration.
struct FamilySpec {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*; counters end in _total
  std::string help;
  MetricType type = MetricType::kCounter;
  std::vector<std::string> labels;  // names of the labels a series is looked up by
  // Counters only: an extra label whose values are known up front (e.g. token type). A series
  // then holds one cell per value, so one lookup serves all of them.
  std::string fixed_label;
  std::vector<std::string> fixed_values;
  std::vector<double> buckets;      // histograms: upper bounds, strictly increasing (+Inf implied)
  std::uint32_t max_series = 2000;  // per worker
};

// The values of one label set on one worker. Only the owning worker's thread may write.
class Series {
 public:
  // Counters: adds `n` to cell `slot` (the index into FamilySpec::fixed_values, else 0).
  void add(std::uint64_t n, std::size_t slot = 0) {
    std::atomic<std::uint64_t>& c = cells_[slot];
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  // Gauges: moves the worker's share of the value (the scrape sums the workers' shares).
  void add_signed(std::int64_t delta) {
    std::atomic<std::uint64_t>& c = cells_[0];
    c.store(c.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(delta),
            std::memory_order_relaxed);
  }
  // Histograms: counts `value` in its bucket and adds it to the sum. NaN is ignored.
  void observe(double value);

 private:
  friend class MetricsShard;
  friend class MetricsRegistry;
  std::uint32_t family_ = 0;
  std::uint64_t hash_ = 0;
  const double* bounds_ = nullptr;  // histograms: the family's bucket bounds
  std::uint32_t bucket_count_ = 0;  // without +Inf
  std::vector<std::string> labels_;
  // Counters: one per fixed value (or one). Gauges: one (two's complement). Histograms:
  // buckets + 1 (+Inf, non-cumulative), then the sum as the bits of a double.
  std::unique_ptr<std::atomic<std::uint64_t>[]> cells_;
};

// One worker's values. Every method runs on the owning worker's thread; the scrape (any
// thread) reads the series published so far. Lookups hash the label values into a small
// open-addressing table: no allocation once a label set has been seen.
class MetricsShard {
 public:
  static constexpr std::size_t kChunk = 256;
  static constexpr std::size_t kMaxChunks = 64;  // 16384 series per worker

  explicit MetricsShard(const MetricsRegistry& registry);
  ~MetricsShard();
  MetricsShard(const MetricsShard&) = delete;
  MetricsShard& operator=(const MetricsShard&) = delete;

  // The series of `family` for `labels` (one value per FamilySpec::labels entry, in order),
  // created on first use. Past the family's cap the "_overflow" series; past the shard's
  // capacity a series that is never exported (counted in sluice_metrics_series_dropped_total).
  // The reference stays valid for the shard's life.
  Series& at(FamilyId family, std::span<const std::string_view> labels);
  Series& at(FamilyId family, std::initializer_list<std::string_view> labels) {
    return at(family, std::span<const std::string_view>(labels.begin(), labels.size()));
  }

 private:
  friend class MetricsRegistry;
  Series* create(FamilyId family, std::span<const std::string_view> labels, std::uint64_t hash);
  void grow_index();

  const MetricsRegistry& registry_;
  std::array<std::unique_ptr<std::array<Series, kChunk>>, kMaxChunks> chunks_;
  std::atomic<std::uint32_t> published_{0};  // series readable by the scrape
  std::vector<std::uint32_t> index_;         // series number + 1; 0 = empty
  std::vector<std::uint32_t> per_family_;    // series per family on this shard
  std::vector<Series*> overflow_;            // per family, once created
  Series discard_;                           // when the shard is full
  std::atomic<std::uint64_t> dropped_{0};
};

// Receives the samples of a callback family at scrape time.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  // One sample; `labels` in the order the family declared them.
  virtual void sample(std::span<const std::string_view> labels, double value) = 0;
  void sample(std::initializer_list<std::string_view> labels, double value) {
    sample(std::span<const std::string_view>(labels.begin(), labels.size()), value);
  }
};

// Unregisters a callback when destroyed (or reset), so its owner may die before the registry.
class CallbackHandle {
 public:
  CallbackHandle() = default;
  CallbackHandle(MetricsRegistry* registry, std::uint64_t id) : registry_(registry), id_(id) {}
  CallbackHandle(CallbackHandle&& other) noexcept { *this = std::move(other); }
  CallbackHandle& operator=(CallbackHandle&& other) noexcept;
  ~CallbackHandle() { reset(); }
  void reset();

 private:
  MetricsRegistry* registry_ = nullptr;
  std::uint64_t id_ = 0;
};

// The families, the worker shards and the scrape. Registration and scrape take a mutex and may
// allocate (never on the request path); shard(i) is what workers write to.
class MetricsRegistry {
 public:
  static constexpr std::size_t kMaxFamilies = 256;

  // `workers` shards, one per worker thread.
  explicit MetricsRegistry(std::size_t workers);
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // A family whose values the workers write (Series). Start-up code; any thread. Registering
  // the same name again with the same spec returns the same id. Throws std::invalid_argument
  // for an invalid spec or a clash with an existing family.
  FamilyId add(FamilySpec spec);

  // A gauge or counter family read at scrape time: `read` is called on the scraping thread
  // (possibly concurrently with anything else the owner does: it must be thread-safe, quick and
  // must not call back into the registry). Several callbacks may feed one family name when
  // their type, help and labels agree. Throws std::invalid_argument as add() does.
  [[nodiscard]] CallbackHandle observe(MetricType type, std::string name, std::string help,
                                       std::vector<std::string> labels,
                                       std::function<void(SampleSink&)> read);

  std::size_t workers() const { return shards_.size(); }
  MetricsShard& shard(std::size_t worker) { return *shards_[worker]; }

  // Every family in registration order, as Prometheus text format 0.0.4. Any thread.
  std::string scrape() const;
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  friend class MetricsShard;
  friend class CallbackHandle;
  struct Family;
  struct Callback {
    std::uint64_t id;
    std::uint32_t family;
    std::function<void(SampleSink&)> read;
  };
  std::uint32_t find_or_add(FamilySpec spec, bool sharded);
  void remove_callback(std::uint64_t id);

  mutable std::mutex mu_;  // families (registration), callbacks; held for a whole scrape
  std::array<std::unique_ptr<Family>, kMaxFamilies> families_;
  std::atomic<std::uint32_t> family_count_{0};
  std::vector<Callback> callbacks_;
  std::uint64_t next_callback_ = 1;
  std::vector<std::unique_ptr<MetricsShard>> shards_;
  FamilyId dropped_family_;
};

// Text format escaping: label values escape backslash, double quote and newline; HELP text
// backslash and newline.
void append_escaped_label_value(std::string& out, std::string_view value);
void append_escaped_help(std::string& out, std::string_view help);

}  // namespace sluice::observability
