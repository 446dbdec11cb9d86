#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "metering/spool.h"
#include "store/store.h"
#include "store/usage_record.h"

namespace sluice::metering {

struct UsageSinkOptions {
  std::size_t workers = 1;
  std::size_t queue_capacity = 65536;  // records waiting for the writer, all workers together
  std::size_t batch_size = 512;        // records per store transaction
  std::chrono::milliseconds flush_interval{200};  // longest a record waits for its batch
  std::string spool_path;
  // A batch insert taking longer than this marks the store slow: later batches spool until a
  // retry finds it healthy again (the slow batch itself is stored).
  std::chrono::milliseconds slow_insert{2000};
  // While the store is down: how often it is retried (open, migrate, replay).
  std::chrono::milliseconds retry_interval{1000};
  const Clock* clock = nullptr;  // RealClock::instance() when null
};

// Opens the store (and connects); called on the writer thread, again after failures.
using StoreOpener = std::function<Result<std::unique_ptr<store::Store>>()>;

// Takes usage records off the request path and gets each into the store exactly once, even
// through store outages and restarts.
//
//   workers --submit()--> per-worker bounded queues --writer thread--> batches --> Store
//                                                                  \--> Spool (store down/slow)
//   Spool --replay (record_id makes it idempotent)--> Store, then the spool is emptied
//
// A record is *acknowledged* once its batch is committed by the store or appended to the
// spool and fdatasync'd; a SIGKILL loses at most records not yet acknowledged (those in the
// queues and the batch being written: at most about flush_interval of traffic). On start an
// existing spool is replayed; stop() writes everything queued to the store or, when it is
// down or the deadline passes, to the spool.
//
// Threads: submit() on worker threads (one queue per worker, its mutex shared only with the
// writer: no global lock, never blocks on I/O); getters on any thread; the rest on the owner.
class UsageSink {
 public:
  enum class StoreState : std::uint8_t { kUnknown, kUp, kDown };

  // Opens and scans the spool (throws std::runtime_error when it cannot be opened: a sink
  // that cannot acknowledge anything must not start). Starts no thread.
  UsageSink(UsageSinkOptions options, StoreOpener opener);
  ~UsageSink();  // stop() with the flush interval as deadline, if not stopped yet
  UsageSink(const UsageSink&) = delete;
  UsageSink& operator=(const UsageSink&) = delete;

  // Starts the writer thread: it opens and migrates the store, replays an existing spool,
  // then writes batches.
  void start();
  // Worker thread `worker`: queues `record`. False when the worker's queue is full (or the
  // sink stopped): the record is dropped and counted.
  bool submit(std::size_t worker, const store::UsageRecord& record);
  // Owner thread, after the workers stopped submitting: writes everything queued to the store
  // or, once `deadline` has passed or the store is down, to the spool; joins the writer.
  void stop(std::chrono::milliseconds deadline);

  // A random id of this process, for record ids unique across instances and restarts.
  const std::string& instance_id() const { return instance_id_; }
  const std::string& spool_path() const { return options_.spool_path; }

  // Any thread (metrics, readiness).
  std::size_t queue_depth() const;
  std::uint64_t spool_bytes() const { return spool_bytes_.load(std::memory_order_relaxed); }
  std::uint64_t spool_records() const { return spool_records_.load(std::memory_order_relaxed); }
  std::uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  std::uint64_t spooled() const { return spooled_.load(std::memory_order_relaxed); }
  // Of spooled(): records spooled with the store up, because it was slower than the traffic.
  std::uint64_t deferred() const { return deferred_.load(std::memory_order_relaxed); }
  // Records the store refused for what they hold (kBadRequest), kept in rejected_path().
  std::uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }
  std::string rejected_path() const { return options_.spool_path + ".rejected"; }
  std::uint64_t dropped() const;
  StoreState store_state() const { return state_.load(std::memory_order_relaxed); }

  // Tests drive the writer without its thread: one pass (collect, replay, write due batches).
  void run_once_for_test(bool final = false) { pass(final); }

 private:
  // A worker's records, encoded by append_record_bytes into one buffer: the worker frees each
  // record itself, and the writer hands back its emptied buffer, so in steady state nothing is
  // allocated on one thread and freed on the other.
  struct alignas(64) Queue {
    std::mutex mu;
    std::string bytes;      // guarded by mu
    std::size_t count = 0;  // records in bytes; guarded by mu
    std::atomic<std::size_t> depth{0};
    std::atomic<std::uint64_t> dropped{0};
    std::string spare;  // writer thread only: the buffer swapped in at the next collect
  };

  void run();
  void pass(bool final);
  void collect();
  void ensure_store();
  // Replays spooled batches while the store is up and `budget_end` has not passed.
  void replay_some(Clock::Monotonic::time_point budget_end);
  // Stores `batch`, or all of it the store accepts: when it refuses records for what they
  // hold (kBadRequest), halves are tried until the refused ones are alone, and those go to
  // the rejected file; so one bad record (an upstream's absurd token count) cannot hold back
  // the others for ever. Any other error is returned: the caller spools the batch (what was
  // stored of it already counts once).
  Result<void> insert_accepting(std::span<const store::UsageRecord> batch);
  void reject(const store::UsageRecord& record, const Error& why);
  // True when the batch was stored or spooled.
  bool write_batch(std::span<const store::UsageRecord> batch, bool final);
  // Spools `batch` when a pass has used its time (the store is slower than the traffic).
  bool defer_batch(std::span<const store::UsageRecord> batch);
  bool spool_batch(std::span<const store::UsageRecord> batch);
  // Drops the first n pending records, keeping their memory for the next ones.
  void retire_pending(std::size_t n);
  void mark_down(const std::string& why);
  void mark_up();
  void report_drops();
  void publish_spool_size();

  UsageSinkOptions options_;
  StoreOpener opener_;
  const Clock& clock_;
  std::string instance_id_;
  std::size_t per_worker_capacity_;
  std::vector<std::unique_ptr<Queue>> queues_;

  // Writer thread only.
  std::unique_ptr<store::Store> store_;
  bool migrated_ = false;
  std::unique_ptr<Spool> spool_;
  std::uint64_t replay_offset_ = 0;
  // Records collected and not yet stored or spooled: the first pending_count_ of pending_. The
  // ones after them are written records kept for their memory: the next records are decoded
  // into them, reusing their strings' buffers instead of allocating and freeing per record.
  std::vector<store::UsageRecord> pending_;
  std::size_t pending_count_ = 0;
  Clock::Monotonic::time_point pending_since_{};
  Clock::Monotonic::time_point next_retry_{};
  Clock::Monotonic::time_point final_deadline_ = Clock::Monotonic::time_point::max();
  std::uint64_t drops_reported_ = 0;
  bool dropping_ = false;
  bool spool_failing_ = false;
  bool behind_ = false;  // the last pass ran out of time and spooled batches

  std::atomic<StoreState> state_{StoreState::kUnknown};
  std::atomic<std::uint64_t> spool_bytes_{0};
  std::atomic<std::uint64_t> spool_records_{0};
  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint64_t> spooled_{0};
  std::atomic<std::uint64_t> deferred_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> lost_{0};  // unacknowledged records the spool could not take
  std::atomic<bool> stopped_{false};

  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

std::string_view to_string(UsageSink::StoreState state);

}  // namespace sluice::metering
