#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "core/clock.h"
#include "core/result.h"
#include "store/store.h"
#include "tenancy/budget_notifier.h"
#include "tenancy/key_set.h"

namespace sluice::tenancy {

struct KeyDirectoryOptions {
  config::TenancySettings settings;
  // Opens the directory's own store connection (on its thread; retried every refresh while it
  // fails).
  std::function<Result<std::unique_ptr<store::Store>>()> open_store;
  const Clock* clock = &RealClock::instance();
  // Sends budget events to settings.webhook_url; null: events are only logged.
  WebhookPost post;
  std::string instance;  // names this instance in budget events
  // Called on the directory's thread with each new key set just before workers can see it (the
  // server compiles the set's rate limits there, so no request waits for that); may be null.
  std::function<void(const std::shared_ptr<const KeySet>&)> before_publish;
  // The config file's keys at start: a store key named like one is refused
  // (tenancy/name_collision.h). Reloads change them through admit_config_keys.
  std::vector<config::Key> config_keys;
};

// Keys, key groups and budgets from the store, kept current for the data plane.
//
// A background thread with its own Store connection asks for tenancy_revision() every
// settings.refresh; when the revision moved it loads the whole state, builds a KeySet and
// publishes it (keys()). Every settings.spend_refresh (and on a reload before the new set is
// published, and at a new budget period) it re-reads each budget's spend from the usage
// ledger, one grouped query per distinct period start, summed by key id (a rename changes
// nothing in the money). On every tick it rolls monthly periods over and announces the thresholds
// reached (log + webhook, once per period each). Every kIdempotencyPurgeInterval it deletes the
// stored Idempotency-Key answers that expired (store::kIdempotencyRetentionMs), off the admin
// listener's request path.
//
// When the store does not answer, the last key set keeps serving and budgets keep counting
// this instance's charges; one warning is logged when refreshing starts failing and one line
// when it works again (refresh_ok()).
class KeyDirectory {
 public:
  static constexpr std::chrono::hours kIdempotencyPurgeInterval{1};

  explicit KeyDirectory(KeyDirectoryOptions options);
  ~KeyDirectory();  // stop()
  KeyDirectory(const KeyDirectory&) = delete;
  KeyDirectory& operator=(const KeyDirectory&) = delete;

  // Starts the thread (the first refresh runs at once, on it) and the webhook notifier.
  void start();
  // Joins the thread; queued webhook events get one try each. Idempotent.
  void stop();

  // Any thread: what the data plane reads (the current KeySet; null before the first load).
  const KeySetHolder& keys() const { return holder_; }

  // A config reload's keys (the server's reload thread): refused when one has the name of a
  // store key of the current set (the error says which); else kept, and the next refresh
  // rebuilds the set against them (a store key named like a new config key is refused then).
  Result<void> admit_config_keys(const std::vector<config::Key>& keys);

  // Any thread (metrics): 1 while the last refresh reached the store, 0 while it fails, -1
  // before the first attempt; the revision serving; webhook counters.
  int refresh_ok() const { return refresh_ok_.load(std::memory_order_relaxed); }
  std::uint64_t revision() const { return revision_.load(std::memory_order_relaxed); }
  const BudgetNotifier& notifier() const { return notifier_; }

  // One refresh as the thread does it, on the calling thread (tests drive it on a simulated
  // clock without starting the thread).
  void tick_for_test() {
    tick();
    holder_.set_attempted();
  }

 private:
  void run();
  void tick();
  bool reload(std::int64_t now_ms);
  void refresh_spend();
  void purge_idempotent(std::int64_t now_ms);
  void announce(std::int64_t now_ms);
  void failed(const Error& error);
  // The account kept under `id` ("g:" or "p:" + group name, "k:" + key id): the same one while
  // its budget and cap stay (renamed when its key was), else a new one.
  std::shared_ptr<BudgetAccount> account(const std::string& id, BudgetAccount::Kind kind,
                                         const std::string& name, const store::KeyGroup& group,
                                         std::int64_t cap, const std::string& key_id = {});

  KeyDirectoryOptions options_;
  KeySetHolder holder_;
  BudgetNotifier notifier_;
  // Background thread only.
  std::unique_ptr<store::Store> store_;
  std::shared_ptr<const KeySet> set_;
  std::map<std::string, std::shared_ptr<BudgetAccount>> accounts_;  // by account() id
  std::map<std::string, TimeZone> zones_;
  bool loaded_ = false;
  Clock::Monotonic::time_point next_spend_{};
  Clock::Monotonic::time_point next_purge_{};

  std::mutex names_mu_;
  std::set<std::string, std::less<>> config_key_names_;  // guarded by names_mu_
  std::uint64_t names_generation_ = 0;                   // guarded by names_mu_
  std::uint64_t built_names_generation_ = 0;             // background thread: of set_

  std::atomic<int> refresh_ok_{-1};
  std::atomic<std::uint64_t> revision_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sluice::tenancy
