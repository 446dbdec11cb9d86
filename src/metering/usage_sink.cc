#include "metering/usage_sink.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <random>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/thread_name.h"
#include "metering/record_bytes.h"
#include "metering/record_json.h"
#include "spdlog/spdlog.h"

namespace sluice::metering {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

// Records replayed from the spool per writer pass, in batches: bounded so fresh records are
// not held back behind a long replay.
constexpr std::size_t kReplayBatchesPerPass = 4;

// A queue buffer larger than this (a burst, a writer that fell behind) is released after its
// records are taken instead of being handed back to the worker.
constexpr std::size_t kMaxSpareBytes = 4 << 20;

std::string random_instance_id() {
  std::random_device rd;
  const std::uint64_t bits = (std::uint64_t{rd()} << 32) ^ rd();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i) {
    out[i] = kHex[(bits >> (4 * i)) & 0xF];
  }
  return out;
}

}  // namespace

std::string_view to_string(UsageSink::StoreState state) {
  switch (state) {
    case UsageSink::StoreState::kUnknown:
      return "unknown";
    case UsageSink::StoreState::kUp:
      return "ok";
    case UsageSink::StoreState::kDown:
      return "down";
  }
  return "unknown";
}

UsageSink::UsageSink(UsageSinkOptions options, StoreOpener opener)
    : options_(std::move(options)),
      opener_(std::move(opener)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock::instance()),
      instance_id_(random_instance_id()) {
  options_.workers = std::max<std::size_t>(1, options_.workers);
  options_.batch_size = std::max<std::size_t>(1, options_.batch_size);
  per_worker_capacity_ = std::max<std::size_t>(1, options_.queue_capacity / options_.workers);
  for (std::size_t i = 0; i < options_.workers; ++i) {
    queues_.push_back(std::make_unique<Queue>());
  }
  auto spool = Spool::open(options_.spool_path);
  if (!spool) {
    throw std::runtime_error(spool.error().message());
  }
  spool_ = std::move(*spool);
  if (spool_->skipped_bytes() > 0) {
    spdlog::warn("usage spool {}: {} bytes of a torn or damaged frame ignored (never acknowledged)",
                 spool_->path(), spool_->skipped_bytes());
  }
  if (spool_->records() > 0) {
    spdlog::info(
        "usage spool {} holds {} records from an earlier run; they are replayed into the "
        "store when it is reachable",
        spool_->path(), spool_->records());
  }
  publish_spool_size();
}

UsageSink::~UsageSink() {
  if (!stopped_.load()) {
    stop(options_.flush_interval);
  }
}

void UsageSink::start() {
  thread_ = std::thread([this] { run(); });
}

bool UsageSink::submit(std::size_t worker, const store::UsageRecord& record) {
  Queue& q = *queues_[worker % queues_.size()];
  if (stopped_.load(std::memory_order_relaxed)) {
    q.dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::lock_guard lock(q.mu);
  if (q.count >= per_worker_capacity_) {
    q.dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  append_record_bytes(q.bytes, record);
  ++q.count;
  q.depth.store(q.count, std::memory_order_relaxed);
  return true;
}

void UsageSink::stop(std::chrono::milliseconds deadline) {
  if (stopped_.exchange(true)) {
    return;
  }
  {
    std::lock_guard lock(wake_mu_);
    final_deadline_ = clock_.now() + deadline;
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  } else {
    pass(true);
  }
}

std::size_t UsageSink::queue_depth() const {
  std::size_t depth = 0;
  for (const auto& q : queues_) {
    depth += q->depth.load(std::memory_order_relaxed);
  }
  return depth;
}

std::uint64_t UsageSink::dropped() const {
  std::uint64_t total = lost_.load(std::memory_order_relaxed);
  for (const auto& q : queues_) {
    total += q->dropped.load(std::memory_order_relaxed);
  }
  return total;
}

void UsageSink::run() {
  name_this_thread("usage-writer");
  const auto poll = std::clamp(options_.flush_interval / 4, milliseconds(1), milliseconds(50));
  std::unique_lock lock(wake_mu_);
  while (!stop_) {
    lock.unlock();
    pass(false);
    lock.lock();
    // Workers do not signal (a syscall per request); the writer polls, as the access log does.
    wake_.wait_for(lock, poll, [this] { return stop_; });
  }
  lock.unlock();
  pass(true);
}

void UsageSink::collect() {
  for (auto& q : queues_) {
    std::string& taken = q->spare;
    std::size_t count = 0;
    {
      std::lock_guard lock(q->mu);
      if (q->count == 0) {
        continue;
      }
      taken.swap(q->bytes);  // the worker gets the emptied buffer of the previous collect
      count = q->count;
      q->count = 0;
      q->depth.store(0, std::memory_order_relaxed);
    }
    if (pending_count_ == 0) {
      pending_since_ = clock_.now();
    }
    std::string_view in = taken;
    for (std::size_t i = 0; i < count; ++i) {
      if (pending_count_ == pending_.size()) {
        pending_.emplace_back();
      }
      if (read_record_bytes(in, pending_[pending_count_])) {
        ++pending_count_;
      } else {
        // Cannot happen (the buffer is this process's own); if it did, say so and count them.
        lost_.fetch_add(count - i, std::memory_order_relaxed);
        spdlog::error("usage sink: {} queued records unreadable", count - i);
        break;
      }
    }
    taken.clear();
    if (taken.capacity() > kMaxSpareBytes) {
      std::string().swap(taken);  // a burst's buffer is not kept for ever
    }
  }
}

void UsageSink::pass(bool final) {
  collect();
  report_drops();
  ensure_store();
  // A pass writes to the store for one flush interval at most; what is still pending then goes
  // to the spool, replayed in later passes' spare time. A store slower than the traffic (a
  // busy database, one writer for a fast gateway) so costs a detour through the spool instead
  // of full queues and dropped records. The final pass has its own deadline.
  const auto budget_end = clock_.now() + options_.flush_interval;
  if (!final) {
    replay_some(budget_end);  // at shutdown the deadline is for fresh records
  }
  const auto now = clock_.now();
  const bool time_due = pending_count_ > 0 && now - pending_since_ >= options_.flush_interval;
  std::size_t done = 0;
  bool deferred = false;
  while (done < pending_count_) {
    const std::size_t left = pending_count_ - done;
    if (left < options_.batch_size && !time_due && !final) {
      break;
    }
    const std::size_t n = std::min(left, options_.batch_size);
    const auto batch = std::span(pending_).subspan(done, n);
    const bool late = !final && state_.load(std::memory_order_relaxed) == StoreState::kUp &&
                      clock_.now() >= budget_end;
    deferred = deferred || late;
    if (!(late ? defer_batch(batch) : write_batch(batch, final))) {
      break;  // neither stored nor spooled: tried again next pass
    }
    done += n;
  }
  if (behind_ != deferred && !final) {
    if (deferred) {
      spdlog::warn(
          "usage store slower than the traffic: batches the writer has no time for spool to {} "
          "and are replayed as it catches up",
          spool_->path());
    } else {
      spdlog::info("usage store keeping up with the traffic again");
    }
    behind_ = deferred;
  }
  retire_pending(done);
  if (pending_count_ > 0 && done > 0) {
    pending_since_ = now;
  }
  const std::size_t limit = options_.queue_capacity;
  if (final || pending_count_ > limit) {
    // The spool refused them (disk full, I/O error) and they cannot wait any longer.
    const std::size_t lose = final ? pending_count_ : pending_count_ - limit;
    if (lose > 0) {
      lost_.fetch_add(lose, std::memory_order_relaxed);
      spdlog::error("usage sink: {} records lost: neither the store nor the spool {} took them",
                    lose, options_.spool_path);
      retire_pending(lose);
    }
  }
}

void UsageSink::retire_pending(std::size_t n) {
  if (n == 0) {
    return;
  }
  // The records still pending move to the front by swaps (no copies, no allocation); the
  // retired ones end up behind them in any order. Swapping forward one by one is right even
  // when the two ranges overlap.
  for (std::size_t i = n; i < pending_count_; ++i) {
    std::swap(pending_[i - n], pending_[i]);
  }
  pending_count_ -= n;
  // Enough for a poll's worth of records at tens of thousands per second (a few MiB); after a
  // burst (a store outage, a slow batch) the rest are let go.
  const std::size_t keep = std::max(pending_count_, 8 * options_.batch_size);
  if (pending_.size() > keep) {
    pending_.resize(keep);
  }
}

void UsageSink::ensure_store() {
  if (state_.load(std::memory_order_relaxed) == StoreState::kUp) {
    return;
  }
  const auto now = clock_.now();
  if (now < next_retry_) {
    return;
  }
  next_retry_ = now + options_.retry_interval;
  if (!store_) {
    auto opened = opener_();
    if (!opened || !*opened) {
      mark_down(opened ? "no store" : opened.error().message());
      return;
    }
    store_ = std::move(*opened);
  }
  if (!migrated_) {
    if (auto migrated = store_->migrate(); !migrated) {
      mark_down("migration failed: " + migrated.error().message());
      return;
    }
    migrated_ = true;
  }
  if (auto alive = store_->ping(); !alive) {
    mark_down(alive.error().message());
    return;
  }
  mark_up();
}

void UsageSink::replay_some(Clock::Monotonic::time_point budget_end) {
  for (std::size_t i = 0; i < kReplayBatchesPerPass; ++i) {
    if (state_.load(std::memory_order_relaxed) != StoreState::kUp || spool_->records() == 0 ||
        clock_.now() >= budget_end) {
      return;
    }
    auto chunk = spool_->read(replay_offset_, options_.batch_size);
    if (!chunk) {
      spdlog::error("usage spool {}: {}", spool_->path(), chunk.error().message());
      return;
    }
    if (!chunk->records.empty()) {
      if (auto inserted = insert_accepting(chunk->records); !inserted) {
        mark_down(inserted.error().message());
        return;  // the same frames are replayed next time (record_id makes that harmless)
      }
    }
    replay_offset_ = chunk->next_offset;
    if (chunk->at_end) {
      const std::uint64_t replayed = spool_->records();
      if (auto cleared = spool_->clear(); !cleared) {
        spdlog::error("{}", cleared.error().message());  // replayed again later: idempotent
        return;
      }
      replay_offset_ = 0;
      publish_spool_size();
      spdlog::info("usage spool {}: {} records replayed into the store; spool emptied",
                   spool_->path(), replayed);
      return;
    }
  }
}

bool UsageSink::write_batch(std::span<const store::UsageRecord> batch, bool final) {
  const auto started = clock_.now();
  const bool in_time = !final || started < final_deadline_;
  if (state_.load(std::memory_order_relaxed) == StoreState::kUp && in_time) {
    auto inserted = insert_accepting(batch);
    const auto took = duration_cast<milliseconds>(clock_.now() - started);
    if (inserted) {
      if (took > options_.slow_insert) {
        mark_down("slow: a batch insert took " + std::to_string(took.count()) + " ms");
      }
      return true;
    }
    mark_down(inserted.error().message());
  }
  return spool_batch(batch);
}

Result<void> UsageSink::insert_accepting(std::span<const store::UsageRecord> batch) {
  auto inserted = store_->insert_usage(batch);
  if (inserted) {
    written_.fetch_add(batch.size(), std::memory_order_relaxed);
    return inserted;
  }
  if (inserted.error().kind() != ErrorKind::kBadRequest) {
    return inserted;
  }
  if (batch.size() == 1) {
    reject(batch.front(), inserted.error());
    return {};
  }
  const std::size_t half = batch.size() / 2;
  if (auto first = insert_accepting(batch.first(half)); !first) {
    return first;
  }
  return insert_accepting(batch.subspan(half));
}

void UsageSink::reject(const store::UsageRecord& record, const Error& why) {
  rejected_.fetch_add(1, std::memory_order_relaxed);
  const std::string path = rejected_path();
  std::string line = record_to_json(record);
  line += '\n';
  // 0600 like the spool and the ledger (the records name keys and what they spent), also for a
  // file an older version created wider.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  std::FILE* f = fd >= 0 && ::fchmod(fd, 0600) == 0 ? ::fdopen(fd, "a") : nullptr;
  if (fd >= 0 && f == nullptr) {
    ::close(fd);
  }
  const bool kept = f != nullptr && std::fwrite(line.data(), 1, line.size(), f) == line.size();
  if (f != nullptr && std::fclose(f) != 0) {
    spdlog::error("usage record {}: cannot close {}", record.record_id, path);
  }
  spdlog::error("usage record {} (request {}) refused by the store: {}; {}", record.record_id,
                record.request_id, why.message(),
                kept ? "kept in " + path : "and it could not be written to " + path);
}

bool UsageSink::defer_batch(std::span<const store::UsageRecord> batch) {
  if (!spool_batch(batch)) {
    return false;
  }
  deferred_.fetch_add(batch.size(), std::memory_order_relaxed);
  return true;
}

bool UsageSink::spool_batch(std::span<const store::UsageRecord> batch) {
  auto appended = spool_->append(batch);
  if (!appended) {
    if (!spool_failing_) {
      spdlog::error(
          "usage spool {} cannot take records: {}; they wait in memory (up to "
          "metering.queue_capacity)",
          spool_->path(), appended.error().message());
      spool_failing_ = true;
    }
    return false;
  }
  if (spool_failing_) {
    spdlog::info("usage spool {} writable again", spool_->path());
    spool_failing_ = false;
  }
  spooled_.fetch_add(batch.size(), std::memory_order_relaxed);
  publish_spool_size();
  return true;
}

void UsageSink::mark_down(const std::string& why) {
  const StoreState was = state_.exchange(StoreState::kDown, std::memory_order_relaxed);
  next_retry_ = clock_.now() + options_.retry_interval;
  if (was == StoreState::kUnknown) {
    spdlog::warn(
        "usage store unreachable at start ({}); serving anyway, usage records spool to "
        "{} until the store is reachable",
        why, spool_->path());
  } else if (was == StoreState::kUp) {
    spdlog::warn("usage store down ({}); usage records spool to {} until it is back", why,
                 spool_->path());
  }
}

void UsageSink::mark_up() {
  const StoreState was = state_.exchange(StoreState::kUp, std::memory_order_relaxed);
  if (was == StoreState::kDown) {
    spdlog::info("usage store reachable again; {} spooled records to replay", spool_->records());
  }
}

void UsageSink::report_drops() {
  const std::uint64_t total = dropped();
  if (total > drops_reported_) {
    if (!dropping_) {
      spdlog::warn(
          "usage sink queue full: dropping usage records ({} so far); raise "
          "metering.queue_capacity",
          total);
      dropping_ = true;
    }
    drops_reported_ = total;
  } else if (dropping_) {
    spdlog::info("usage sink queue has room again; {} usage records dropped in total", total);
    dropping_ = false;
  }
}

void UsageSink::publish_spool_size() {
  spool_bytes_.store(spool_->bytes(), std::memory_order_relaxed);
  spool_records_.store(spool_->records(), std::memory_order_relaxed);
}

}  // namespace sluice::metering
