#include "tenancy/key_directory.h"

#include <set>

#include "core/thread_name.h"
#include "spdlog/spdlog.h"
#include "tenancy/money.h"
#include "tenancy/name_collision.h"

namespace sluice::tenancy {

namespace {

std::set<std::string, std::less<>> names_of(const std::vector<config::Key>& keys) {
  std::set<std::string, std::less<>> names;
  for (const config::Key& k : keys) {
    names.insert(k.name);
  }
  return names;
}

std::int64_t unix_ms(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.wall_now().time_since_epoch())
      .count();
}

}  // namespace

KeyDirectory::KeyDirectory(KeyDirectoryOptions options)
    : options_(std::move(options)),
      notifier_(options_.settings.webhook_url, options_.settings.webhook_timeout, options_.post),
      config_key_names_(names_of(options_.config_keys)) {}

Result<void> KeyDirectory::admit_config_keys(const std::vector<config::Key>& keys) {
  if (auto clash = find_name_collision(keys, holder_.current().get())) {
    return Error(ErrorKind::kBadRequest, describe(*clash) + "; rename one of them");
  }
  std::lock_guard lock(names_mu_);
  config_key_names_ = names_of(keys);
  ++names_generation_;
  return {};
}

KeyDirectory::~KeyDirectory() { stop(); }

void KeyDirectory::start() {
  notifier_.start();
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { run(); });
  }
}

void KeyDirectory::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  notifier_.stop();
}

void KeyDirectory::run() {
  name_this_thread("key-directory");
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    tick();
    holder_.set_attempted();  // ready (/readyz) after the first attempt, whatever its outcome
    lock.lock();
    wake_.wait_for(lock, options_.settings.refresh, [this] { return stop_; });
  }
}

void KeyDirectory::failed(const Error& error) {
  const int was = refresh_ok_.exchange(0, std::memory_order_relaxed);
  if (was == -1) {
    spdlog::warn(
        "tenancy: cannot load keys from the store at start ({}); ready without them: store keys "
        "are refused as unknown until it answers (retried every {} ms)",
        error.message(), options_.settings.refresh.count());
  } else if (was != 0) {
    spdlog::warn(
        "tenancy: cannot refresh keys and budgets from the store ({}); serving key set revision "
        "{} until it answers",
        error.message(), revision_.load(std::memory_order_relaxed));
  }
}

void KeyDirectory::tick() {
  const std::int64_t now_ms = unix_ms(*options_.clock);
  bool spend_due = options_.clock->now() >= next_spend_;
  if (set_) {
    for (const auto& a : set_->accounts()) {
      spend_due = a->start_period(now_ms) || spend_due;  // a new period: read its spend now
    }
  }
  if (!store_) {
    auto opened = options_.open_store();
    if (!opened) {
      failed(opened.error());
      announce(now_ms);
      return;
    }
    store_ = std::move(*opened);
  }
  auto revision = store_->tenancy_revision();
  if (!revision) {
    failed(revision.error());
    announce(now_ms);
    return;
  }
  bool names_changed = false;
  {
    std::lock_guard lock(names_mu_);
    names_changed = names_generation_ != built_names_generation_;
  }
  if (!loaded_ || names_changed || *revision != revision_.load(std::memory_order_relaxed)) {
    if (!reload(now_ms)) {  // reads the spend too
      announce(now_ms);
      return;
    }
  } else if (spend_due) {
    refresh_spend();
  }
  if (options_.clock->now() >= next_purge_) {
    purge_idempotent(now_ms);
  }
  if (refresh_ok_.exchange(1, std::memory_order_relaxed) == 0) {
    spdlog::info("tenancy: the store answers again; key set revision {}",
                 revision_.load(std::memory_order_relaxed));
  }
  announce(now_ms);
}

std::shared_ptr<BudgetAccount> KeyDirectory::account(const std::string& id,
                                                     BudgetAccount::Kind kind,
                                                     const std::string& name,
                                                     const store::KeyGroup& group, std::int64_t cap,
                                                     const std::string& key_id) {
  const store::Budget& budget = *group.budget;
  std::shared_ptr<BudgetAccount>& slot = accounts_[id];
  if (slot && same_budget(slot->budget(), budget) && slot->cap_micros() == cap) {
    if (slot->name() != name) {
      slot->rename(name);  // a renamed key: the same money
    }
    return slot;  // unchanged: keeps its spend and the thresholds it announced
  }
  auto zone = zones_.find(budget.time_zone);
  if (zone == zones_.end()) {
    auto loaded = TimeZone::load(budget.time_zone);
    if (!loaded) {
      spdlog::warn("tenancy: key group {}: time zone {}: {}; its budget follows UTC", group.name,
                   budget.time_zone, loaded.error().message());
    }
    zone = zones_.emplace(budget.time_zone, loaded ? *loaded : TimeZone()).first;
  }
  slot = std::make_shared<BudgetAccount>(kind, name, group.name, budget, cap, zone->second, key_id);
  return slot;
}

bool KeyDirectory::reload(std::int64_t now_ms) {
  auto state = store_->load_tenancy();
  if (!state) {
    failed(state.error());
    return false;
  }
  KeySet::Accounts accounts;
  accounts.group = [this](const store::KeyGroup& g) {
    return account("g:" + g.name, BudgetAccount::Kind::kGroup, g.name, g, g.budget->amount_micros);
  };
  accounts.pool = [this](const store::KeyGroup& g, std::int64_t cap) {
    return account("p:" + g.name, BudgetAccount::Kind::kPool, g.name, g, cap);
  };
  accounts.key = [this](const store::KeyGroup& g, const store::ApiKey& k) {
    return account("k:" + k.id, BudgetAccount::Kind::kKey, k.name, g, *k.allocation_micros, k.id);
  };
  std::set<std::string, std::less<>> config_names;
  std::uint64_t names_generation = 0;
  {
    std::lock_guard lock(names_mu_);
    config_names = config_key_names_;
    names_generation = names_generation_;
  }
  auto set = KeySet::build(*state, accounts, config_names);
  for (const StoreKey& k : set->keys()) {
    if (k.name_taken) {
      spdlog::error(
          "tenancy: store key {} (key group {}) is named {}, like a key of the config file: it is "
          "refused until it is renamed",
          k.key.id, k.key.group, k.key.name);
    }
  }
  // Accounts no revision names any more are forgotten (a budget removed, a key deleted).
  std::set<const BudgetAccount*> live;
  for (const auto& a : set->accounts()) {
    live.insert(a.get());
    a->start_period(now_ms);
  }
  std::erase_if(accounts_, [&](const auto& entry) { return !live.contains(entry.second.get()); });
  const bool first = !loaded_;
  set_ = set;
  // Before any worker sees a new account (a restart, a changed budget), it holds the ledger's
  // spend: a drained budget never admits in between.
  refresh_spend();
  if (options_.before_publish) {
    options_.before_publish(set);
  }
  holder_.publish(std::move(set));
  loaded_ = true;
  built_names_generation_ = names_generation;
  revision_.store(state->revision, std::memory_order_relaxed);
  if (first) {
    spdlog::info("tenancy: {} keys and {} key groups from the store (revision {})",
                 state->keys.size(), state->groups.size(), state->revision);
  } else {
    spdlog::info("tenancy: key set revision {} is serving ({} keys, {} key groups)",
                 state->revision, state->keys.size(), state->groups.size());
  }
  return true;
}

void KeyDirectory::refresh_spend() {
  if (!set_ || set_->accounts().empty()) {
    next_spend_ = options_.clock->now() + options_.settings.spend_refresh;
    return;
  }
  // One query per distinct period start: spend per (group, key) since then, read from the
  // store's per-quarter-hour rollup (a month of records is never scanned).
  std::map<std::int64_t, std::vector<BudgetAccount*>> by_start;
  for (const auto& a : set_->accounts()) {
    by_start[a->period().start_ms].push_back(a.get());
  }
  for (const auto& [start, accounts] : by_start) {
    auto rows = store_->spend_since(start);
    if (!rows) {
      failed(rows.error());
      return;  // next tick tries again
    }
    std::map<std::string, std::int64_t, std::less<>> group_total;
    std::map<std::pair<std::string, std::string>, std::int64_t> by_key;
    for (const store::SpendRow& row : *rows) {
      std::int64_t& group = group_total[row.key_group];
      std::int64_t& key = by_key[{row.key_group, row.key_id}];
      group = saturating_add(group, row.cost_micros);
      key = saturating_add(key, row.cost_micros);
    }
    // The pool is the group's spend minus what its allocated keys spent.
    std::map<std::string, std::int64_t, std::less<>> allocated_spend;
    for (const auto& a : set_->accounts()) {
      if (a->kind() == BudgetAccount::Kind::kKey) {
        std::int64_t& spent = allocated_spend[a->group()];
        spent = saturating_add(spent, by_key[{a->group(), a->key_id()}]);
      }
    }
    for (BudgetAccount* a : accounts) {
      switch (a->kind()) {
        case BudgetAccount::Kind::kGroup:
          a->settle(group_total[a->group()]);
          break;
        case BudgetAccount::Kind::kPool:
          a->settle(saturating_sub(group_total[a->group()], allocated_spend[a->group()]));
          break;
        case BudgetAccount::Kind::kKey:
          a->settle(by_key[{a->group(), a->key_id()}]);
          break;
      }
    }
  }
  next_spend_ = options_.clock->now() + options_.settings.spend_refresh;
}

void KeyDirectory::purge_idempotent(std::int64_t now_ms) {
  if (auto purged = store_->purge_idempotent(now_ms); !purged) {
    spdlog::warn("tenancy: cannot delete expired Idempotency-Key answers ({}); retried in {} h",
                 purged.error().message(), kIdempotencyPurgeInterval.count());
  }
  next_purge_ = options_.clock->now() + kIdempotencyPurgeInterval;
}

void KeyDirectory::announce(std::int64_t now_ms) {
  if (!set_) {
    return;
  }
  for (const auto& a : set_->accounts()) {
    if (a->kind() == BudgetAccount::Kind::kPool) {
      continue;  // its group's account speaks for the group
    }
    for (std::uint32_t t : a->crossed(options_.settings.budget_thresholds, now_ms)) {
      std::string event = budget_event_json(*a, t, now_ms, options_.instance);
      spdlog::warn("budget: {} {} reached {}% of its {} budget: {}",
                   a->kind() == BudgetAccount::Kind::kKey ? "key" : "key group", a->name(), t,
                   a->hard() ? "hard" : "advisory", event);
      notifier_.push(std::move(event));
    }
  }
}

}  // namespace sluice::tenancy
