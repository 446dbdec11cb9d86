#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/error.h"
#include "store/tenancy.h"
#include "tenancy/budget.h"

namespace sluice::tenancy {

// One key from the store, as the data plane sees it.
struct StoreKey {
  // Id (the store's), name, group, hash and the aliases it may call (its own list, else its
  // group's), in the config's shape: the parts that read a request's key (limits, usage
  // records, routing conditions, the access log) treat it exactly like a key of the config file.
  config::Key key;
  store::KeyStatus status = store::KeyStatus::kActive;
  std::optional<std::int64_t> expires_at_ms;
  bool group_disabled = false;
  // A key of the config file has this name: refused until renamed (tenancy/name_collision.h).
  bool name_taken = false;
  // Rate quotas from the store (0 = none); admission uses them where the config's `limits:`
  // says nothing for this key or group.
  config::RateLimits key_quota;
  config::RateLimits group_quota;
  // The account a hard budget is checked against (the key's allocation, else its group's pool;
  // null without a budget), and every account a settled charge is added to.
  BudgetAccount* budget = nullptr;
  std::array<BudgetAccount*, 2> charge_to{};
};

// Why a presented key is refused (or not).
enum class KeyVerdict : std::uint8_t {
  kUnknown,  // no such key: the caller learns nothing more than "invalid API key"
  kActive,
  kDisabled,
  kRevoked,
  kExpired,
  kGroupDisabled,
  kNameTaken,  // a config-file key has the key's name
};

// The keys and key groups of one store revision, compiled for the data plane. Immutable and
// shared by every worker; a request that authenticates with a store key holds the set
// (RequestContext::key_set) so its StoreKey and config::Key stay valid until it ends.
class KeySet {
 public:
  // Accounts for the groups and allocations of `state`; the directory passes the ones it keeps
  // across revisions (a budget whose definition did not change keeps its spend). Called on the
  // background thread only.
  struct Accounts {
    std::function<std::shared_ptr<BudgetAccount>(const store::KeyGroup&)> group;
    std::function<std::shared_ptr<BudgetAccount>(const store::KeyGroup&, std::int64_t cap)> pool;
    std::function<std::shared_ptr<BudgetAccount>(const store::KeyGroup&, const store::ApiKey&)> key;
  };

  // Builds the set; `accounts` null members mean no budgets (tests of authentication alone).
  // Store keys named like one of `config_key_names` are refused (StoreKey::name_taken).
  static std::shared_ptr<const KeySet> build(
      const store::TenancyState& state, const Accounts& accounts = {},
      const std::set<std::string, std::less<>>& config_key_names = {});

  std::uint64_t revision() const { return revision_; }
  std::size_t size() const { return keys_.size(); }

  struct Found {
    const StoreKey* key = nullptr;  // null for kUnknown
    KeyVerdict verdict = KeyVerdict::kUnknown;
  };
  // The key whose secret hashes to `sha256_hex` (lower-case hex, 64 characters) and whether it
  // may be used at `now_ms`. A hash lookup and a constant-time compare; no allocation.
  Found find(std::string_view sha256_hex, std::int64_t now_ms) const;
  // The key named `name`, revoked or not (null when none). Background threads.
  const StoreKey* find_named(std::string_view name) const;

  // Every budget account of this revision (background thread: spend refresh, thresholds).
  const std::vector<std::shared_ptr<BudgetAccount>>& accounts() const { return accounts_; }
  const std::vector<StoreKey>& keys() const { return keys_; }

 private:
  std::uint64_t revision_ = 0;
  std::vector<StoreKey> keys_;  // never resized after build: the map points into it
  std::unordered_map<std::string_view, const StoreKey*> by_hash_;
  std::unordered_map<std::string_view, const StoreKey*> by_name_;
  std::vector<std::shared_ptr<BudgetAccount>> accounts_;
};

// The 401 for a refused store key (kDisabled, kRevoked, kExpired, kGroupDisabled, kNameTaken; the
// caller holds the secret, so it may learn why) or an unknown one ("invalid API key").
Error key_refused(KeyVerdict verdict, const StoreKey* key);

// The key set new requests see: one atomic shared_ptr, replaced by the key directory's
// background thread, read by every worker. Loading an atomic shared_ptr takes an internal
// lock bit in libstdc++, so readers on the request path keep a copy (KeySetCache) and reload
// it only when generation() moved: one integer load per request.
class KeySetHolder {
 public:
  std::shared_ptr<const KeySet> current() const { return set_.load(std::memory_order_acquire); }
  // Bumped after every publish (0: nothing published yet).
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  void publish(std::shared_ptr<const KeySet> set) {
    set_.store(std::move(set), std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
  }

  // Whether the first load from the store was attempted (successful or not): until then a
  // store key cannot be told from an unknown one, so the instance is not ready (/readyz).
  bool attempted() const { return attempted_.load(std::memory_order_acquire); }
  void set_attempted() { attempted_.store(true, std::memory_order_release); }

 private:
  std::atomic<std::shared_ptr<const KeySet>> set_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> attempted_{false};
};

// One thread's copy of a holder's set, refreshed when the holder's generation moves (a worker's
// pipeline; not thread-safe).
class KeySetCache {
 public:
  explicit KeySetCache(const KeySetHolder* holder) : holder_(holder) {}
  // The current set (null before the first publish, or without a holder).
  const std::shared_ptr<const KeySet>& get() {
    if (holder_ != nullptr) {
      if (const std::uint64_t g = holder_->generation(); g != generation_) {
        // Published before `g` was bumped: at least as new as generation `g`.
        set_ = holder_->current();
        generation_ = g;
      }
    }
    return set_;
  }

 private:
  const KeySetHolder* holder_;
  std::uint64_t generation_ = 0;
  std::shared_ptr<const KeySet> set_;
};

}  // namespace sluice::tenancy
