#include "observability/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace sluice::observability {

struct MetricsRegistry::Family {
  FamilySpec spec;
  bool sharded = true;
  std::uint32_t cells = 1;
};

namespace {

constexpr std::string_view kOverflow = "_overflow";

// The last n (1..7) bytes of `v` as one word, read with whole loads (a byte loop into a word
// stalls the load that follows it); overlapping bytes are fine since the length is hashed too.
std::uint64_t tail(std::string_view v, std::size_t n) {
  const char* end = v.data() + v.size();
  if (v.size() >= 8) {
    std::uint64_t word;
    std::memcpy(&word, end - 8, 8);
    return word;
  }
  const char* p = end - n;
  if (n >= 4) {
    std::uint32_t a;
    std::uint32_t b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, end - 4, 4);
    return (std::uint64_t{a} << 32) | b;
  }
  return (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
         (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
         static_cast<unsigned char>(end[-1]);
}

// Runs on every lookup (about ten per request): the words' multiplications are independent, so
// the processor overlaps them; only a rotate and an add are serial. Each value's length is mixed
// in, so ("ab","c") and ("a","bc") differ.
std::uint64_t hash_labels(std::uint32_t family, std::span<const std::string_view> labels) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  auto step = [](std::uint64_t acc, std::uint64_t word) {
    return std::rotl(acc, 23) + word * kMul;
  };
  std::uint64_t acc = step(0x243F6A8885A308D3ull, family);
  for (std::string_view v : labels) {
    const char* p = v.data();
    std::size_t n = v.size();
    acc = step(acc, n);
    for (; n >= 8; n -= 8, p += 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      acc = step(acc, word);
    }
    if (n > 0) {
      acc = step(acc, tail(v, n));
    }
  }
  acc ^= acc >> 32;
  acc *= kMul;
  return acc ^ (acc >> 29);
}

bool valid_name(std::string_view name, bool label) {
  if (name.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit) || (!label && c == ':'))) {
      return false;
    }
  }
  return !(label && name.starts_with("__"));  // reserved for Prometheus' own use
}

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Prometheus' number syntax: integers without a fraction, +Inf/-Inf/NaN spelled its way.
void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

void append_labels(std::string& out, const std::vector<std::string>& names,
                   const std::vector<std::string>& values, std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) {
    return;
  }
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!first) {
      out += ',';
    }
    first = false;
    out += names[i];
    out += "=\"";
    append_escaped_label_value(out, values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) {
      out += ',';
    }
    out += extra_name;
    out += "=\"";
    append_escaped_label_value(out, extra_value);
    out += '"';
  }
  out += '}';
}

// A family's merged values: per label set, the cells summed over the shards (counters and
// histogram buckets as integers, gauges as signed integers, histogram sums as doubles).
struct Merged {
  std::vector<std::uint64_t> cells;
  double sum = 0;
};

class CollectingSink final : public SampleSink {
 public:
  explicit CollectingSink(std::size_t labels) : labels_(labels) {}
  void sample(std::span<const std::string_view> labels, double value) override {
    std::vector<std::string> key;
    key.reserve(labels_);
    for (std::size_t i = 0; i < labels_; ++i) {
      key.emplace_back(i < labels.size() ? labels[i] : std::string_view());
    }
    samples[std::move(key)] += value;
  }
  std::map<std::vector<std::string>, double> samples;

 private:
  std::size_t labels_;
};

}  // namespace

void append_escaped_label_value(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void append_escaped_help(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void Series::observe(double value) {
  if (std::isnan(value)) {
    return;
  }
  std::uint32_t i = 0;
  while (i < bucket_count_ && value > bounds_[i]) {
    ++i;
  }
  add(1, i);
  std::atomic<std::uint64_t>& sum = cells_[bucket_count_ + 1];
  const double next = std::bit_cast<double>(sum.load(std::memory_order_relaxed)) + value;
  sum.store(std::bit_cast<std::uint64_t>(next), std::memory_order_relaxed);
}

MetricsShard::MetricsShard(const MetricsRegistry& registry)
    : registry_(registry),
      index_(1024, 0),
      per_family_(MetricsRegistry::kMaxFamilies, 0),
      overflow_(MetricsRegistry::kMaxFamilies, nullptr) {
  discard_.cells_ = std::make_unique<std::atomic<std::uint64_t>[]>(64);
}

MetricsShard::~MetricsShard() = default;

Series& MetricsShard::at(FamilyId family, std::span<const std::string_view> labels) {
  const std::uint64_t hash = hash_labels(family.index, labels);
  const std::size_t mask = index_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const std::uint32_t slot = index_[i];
    if (slot == 0) {
      break;
    }
    Series& s = (*chunks_[(slot - 1) / kChunk])[(slot - 1) % kChunk];
    if (s.hash_ == hash && s.family_ == family.index && s.labels_.size() == labels.size() &&
        std::equal(labels.begin(), labels.end(), s.labels_.begin())) {
      return s;
    }
  }
  const auto& fam = *registry_.families_[family.index];
  if (labels.size() != fam.spec.labels.size()) {
    dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return discard_;  // a caller bug; never exported
  }
  if (per_family_[family.index] >= fam.spec.max_series) {
    if (overflow_[family.index] == nullptr) {
      std::vector<std::string_view> over(labels.size(), kOverflow);
      overflow_[family.index] = create(family, over, hash_labels(family.index, over));
    }
    if (overflow_[family.index] != nullptr) {
      return *overflow_[family.index];
    }
  } else if (Series* s = create(family, labels, hash); s != nullptr) {
    return *s;
  }
  dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return discard_;
}

Series* MetricsShard::create(FamilyId family, std::span<const std::string_view> labels,
                             std::uint64_t hash) {
  const std::uint32_t n = published_.load(std::memory_order_relaxed);
  if (n >= kChunk * kMaxChunks) {
    return nullptr;
  }
  if (n % kChunk == 0) {
    chunks_[n / kChunk] = std::make_unique<std::array<Series, kChunk>>();
  }
  const auto& fam = *registry_.families_[family.index];
  Series& s = (*chunks_[n / kChunk])[n % kChunk];
  s.family_ = family.index;
  s.hash_ = hash;
  s.labels_.assign(labels.begin(), labels.end());
  if (fam.spec.type == MetricType::kHistogram) {
    s.bounds_ = fam.spec.buckets.data();
    s.bucket_count_ = static_cast<std::uint32_t>(fam.spec.buckets.size());
  }
  s.cells_ = std::make_unique<std::atomic<std::uint64_t>[]>(fam.cells);
  for (std::uint32_t i = 0; i < fam.cells; ++i) {
    s.cells_[i].store(0, std::memory_order_relaxed);
  }
  ++per_family_[family.index];
  // Published after it is complete: the scrape reads series [0, published_) only.
  published_.store(n + 1, std::memory_order_release);
  if ((n + 1) * 2 > index_.size()) {
    grow_index();
  } else {
    const std::size_t mask = index_.size() - 1;
    std::size_t i = hash & mask;
    while (index_[i] != 0) {
      i = (i + 1) & mask;
    }
    index_[i] = n + 1;
  }
  return &s;
}

void MetricsShard::grow_index() {
  std::vector<std::uint32_t> next(index_.size() * 2, 0);
  const std::size_t mask = next.size() - 1;
  const std::uint32_t n = published_.load(std::memory_order_relaxed);
  for (std::uint32_t k = 0; k < n; ++k) {
    std::size_t i = (*chunks_[k / kChunk])[k % kChunk].hash_ & mask;
    while (next[i] != 0) {
      i = (i + 1) & mask;
    }
    next[i] = k + 1;
  }
  index_ = std::move(next);
}

CallbackHandle& CallbackHandle::operator=(CallbackHandle&& other) noexcept {
  if (this != &other) {
    reset();
    registry_ = other.registry_;
    id_ = other.id_;
    other.registry_ = nullptr;
  }
  return *this;
}

void CallbackHandle::reset() {
  if (registry_ != nullptr) {
    registry_->remove_callback(id_);
    registry_ = nullptr;
  }
}

MetricsRegistry::MetricsRegistry(std::size_t workers) {
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i) {
    shards_.push_back(std::make_unique<MetricsShard>(*this));
  }
  FamilySpec dropped;
  dropped.name = "sluice_metrics_series_dropped_total";
  dropped.help =
      "Samples not recorded because a worker's metric table was full or a label set was "
      "malformed (a bug if it grows).";
  dropped_family_ = add(std::move(dropped));
}

MetricsRegistry::~MetricsRegistry() = default;

std::uint32_t MetricsRegistry::find_or_add(FamilySpec spec, bool sharded) {
  if (!valid_name(spec.name, false)) {
    throw std::invalid_argument("invalid metric name: " + spec.name);
  }
  for (const std::string& l : spec.labels) {
    if (!valid_name(l, true) || l == "le") {
      throw std::invalid_argument("invalid label name " + l + " in " + spec.name);
    }
  }
  if (!spec.fixed_label.empty() &&
      (spec.type != MetricType::kCounter || !valid_name(spec.fixed_label, true) ||
       spec.fixed_values.empty())) {
    throw std::invalid_argument("invalid fixed label in " + spec.name);
  }
  if (spec.type == MetricType::kHistogram) {
    if (spec.buckets.empty() || !std::is_sorted(spec.buckets.begin(), spec.buckets.end()) ||
        std::adjacent_find(spec.buckets.begin(), spec.buckets.end()) != spec.buckets.end() ||
        std::isinf(spec.buckets.back())) {
      throw std::invalid_argument("histogram buckets must be finite and increasing: " + spec.name);
    }
  }
  std::lock_guard lock(mu_);
  const std::uint32_t n = family_count_.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Family& f = *families_[i];
    if (f.spec.name == spec.name) {
      if (f.spec.type != spec.type || f.spec.labels != spec.labels || f.sharded != sharded ||
          f.spec.buckets != spec.buckets || f.spec.fixed_values != spec.fixed_values) {
        throw std::invalid_argument("metric " + spec.name + " registered twice, differently");
      }
      return i;
    }
  }
  if (n == kMaxFamilies) {
    throw std::invalid_argument("too many metric families");
  }
  auto f = std::make_unique<Family>();
  f->sharded = sharded;
  if (spec.type == MetricType::kHistogram) {
    f->cells = static_cast<std::uint32_t>(spec.buckets.size()) + 2;
  } else if (!spec.fixed_values.empty()) {
    f->cells = static_cast<std::uint32_t>(spec.fixed_values.size());
  }
  f->spec = std::move(spec);
  families_[n] = std::move(f);
  family_count_.store(n + 1, std::memory_order_release);
  return n;
}

FamilyId MetricsRegistry::add(FamilySpec spec) {
  return FamilyId{find_or_add(std::move(spec), true)};
}

CallbackHandle MetricsRegistry::observe(MetricType type, std::string name, std::string help,
                                        std::vector<std::string> labels,
                                        std::function<void(SampleSink&)> read) {
  if (type == MetricType::kHistogram) {
    throw std::invalid_argument("callback families are gauges or counters: " + name);
  }
  FamilySpec spec;
  spec.name = std::move(name);
  spec.help = std::move(help);
  spec.type = type;
  spec.labels = std::move(labels);
  const std::uint32_t family = find_or_add(std::move(spec), false);
  std::lock_guard lock(mu_);
  const std::uint64_t id = next_callback_++;
  callbacks_.push_back(Callback{id, family, std::move(read)});
  return CallbackHandle(this, id);
}

void MetricsRegistry::remove_callback(std::uint64_t id) {
  std::lock_guard lock(mu_);
  std::erase_if(callbacks_, [id](const Callback& c) { return c.id == id; });
}

std::string MetricsRegistry::scrape() const {
  std::lock_guard lock(mu_);
  const std::uint32_t families = family_count_.load(std::memory_order_acquire);
  // Sum the shards, label set by label set (sorted, so the output is stable between scrapes).
  std::vector<std::map<std::vector<std::string>, Merged>> merged(families);
  std::uint64_t dropped = 0;
  for (const auto& shard : shards_) {
    dropped += shard->dropped_.load(std::memory_order_relaxed);
    const std::uint32_t n = shard->published_.load(std::memory_order_acquire);
    for (std::uint32_t k = 0; k < n; ++k) {
      const Series& s = (*shard->chunks_[k / MetricsShard::kChunk])[k % MetricsShard::kChunk];
      const Family& f = *families_[s.family_];
      Merged& m = merged[s.family_][s.labels_];
      m.cells.resize(f.cells, 0);
      const std::uint32_t counts =
          f.spec.type == MetricType::kHistogram ? f.cells - 1 : f.cells;  // sum cell apart
      for (std::uint32_t i = 0; i < counts; ++i) {
        m.cells[i] += s.cells_[i].load(std::memory_order_relaxed);
      }
      if (f.spec.type == MetricType::kHistogram) {
        m.sum += std::bit_cast<double>(s.cells_[counts].load(std::memory_order_relaxed));
      }
    }
  }

  std::string out;
  out.reserve(16 * 1024);
  for (std::uint32_t fi = 0; fi < families; ++fi) {
    const Family& f = *families_[fi];
    const FamilySpec& spec = f.spec;
    out += "# HELP ";
    out += spec.name;
    out += ' ';
    append_escaped_help(out, spec.help);
    out += "\n# TYPE ";
    out += spec.name;
    out += ' ';
    out += type_name(spec.type);
    out += '\n';
    if (!f.sharded) {
      CollectingSink sink(spec.labels.size());
      for (const Callback& c : callbacks_) {
        if (c.family == fi) {
          c.read(sink);
        }
      }
      for (const auto& [labels, value] : sink.samples) {
        out += spec.name;
        append_labels(out, spec.labels, labels);
        out += ' ';
        append_number(out, value);
        out += '\n';
      }
      continue;
    }
    auto& series = merged[fi];
    if (fi == dropped_family_.index) {
      series[{}].cells.assign(1, dropped);
    } else if (series.empty() && spec.labels.empty()) {
      series[{}].cells.assign(f.cells, 0);  // a label-less family always has its one series
    }
    for (const auto& [labels, m] : series) {
      switch (spec.type) {
        case MetricType::kCounter:
          for (std::uint32_t i = 0; i < f.cells; ++i) {
            out += spec.name;
            if (spec.fixed_values.empty()) {
              append_labels(out, spec.labels, labels);
            } else {
              append_labels(out, spec.labels, labels, spec.fixed_label, spec.fixed_values[i]);
            }
            fmt::format_to(std::back_inserter(out), " {}\n", m.cells[i]);
          }
          break;
        case MetricType::kGauge:
          out += spec.name;
          append_labels(out, spec.labels, labels);
          fmt::format_to(std::back_inserter(out), " {}\n", static_cast<std::int64_t>(m.cells[0]));
          break;
        case MetricType::kHistogram: {
          // Buckets are cumulative in the exposition; the shards count each bucket on its own.
          std::uint64_t cumulative = 0;
          std::string le;
          for (std::size_t b = 0; b <= spec.buckets.size(); ++b) {
            cumulative += m.cells[b];
            le.clear();
            if (b == spec.buckets.size()) {
              le = "+Inf";
            } else {
              append_number(le, spec.buckets[b]);
            }
            out += spec.name;
            out += "_bucket";
            append_labels(out, spec.labels, labels, "le", le);
            fmt::format_to(std::back_inserter(out), " {}\n", cumulative);
          }
          out += spec.name;
          out += "_sum";
          append_labels(out, spec.labels, labels);
          out += ' ';
          append_number(out, m.sum);
          out += '\n';
          out += spec.name;
          out += "_count";
          append_labels(out, spec.labels, labels);
          fmt::format_to(std::back_inserter(out), " {}\n", cumulative);
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace sluice::observability
