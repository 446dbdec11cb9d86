#include "tenancy/key_set.h"

#include <map>

#include <openssl/crypto.h>

#include "tenancy/money.h"

namespace sluice::tenancy {

namespace {

config::RateLimits rate_limits(const store::RateQuota& quota, std::string_view source) {
  config::RateLimits out;
  out.rpm = quota.rpm;
  out.tpm = quota.tpm;
  out.concurrency = quota.concurrency;
  out.source = std::string(source);
  return out;
}

}  // namespace

std::shared_ptr<const KeySet> KeySet::build(
    const store::TenancyState& state, const Accounts& accounts,
    const std::set<std::string, std::less<>>& config_key_names) {
  auto set = std::make_shared<KeySet>();
  set->revision_ = state.revision;
  std::map<std::string_view, const store::KeyGroup*> groups;
  for (const store::KeyGroup& g : state.groups) {
    groups.emplace(g.name, &g);
  }
  // Per group with a budget: its whole account, and the pool its unallocated keys share.
  struct GroupAccounts {
    BudgetAccount* total = nullptr;
    BudgetAccount* pool = nullptr;
  };
  std::map<std::string_view, GroupAccounts> group_accounts;
  const bool budgets = accounts.group && accounts.pool && accounts.key;
  if (budgets) {
    std::map<std::string_view, std::int64_t> allocated;
    for (const store::ApiKey& k : state.keys) {
      if (k.allocation_micros && k.status != store::KeyStatus::kRevoked) {
        allocated[k.group] = saturating_add(allocated[k.group], *k.allocation_micros);
      }
    }
    for (const store::KeyGroup& g : state.groups) {
      if (!g.budget) {
        continue;
      }
      GroupAccounts& ga = group_accounts[g.name];
      set->accounts_.push_back(accounts.group(g));
      ga.total = set->accounts_.back().get();
      set->accounts_.push_back(
          accounts.pool(g, saturating_sub(g.budget->amount_micros, allocated[g.name])));
      ga.pool = set->accounts_.back().get();
    }
  }
  set->keys_.reserve(state.keys.size());
  for (const store::ApiKey& k : state.keys) {
    StoreKey& entry = set->keys_.emplace_back();
    entry.key.id = k.id;
    entry.key.name = k.name;
    entry.key.group = k.group;
    entry.key.sha256_hex = k.sha256_hex;
    entry.key.source = "store key " + k.id;
    entry.status = k.status;
    entry.expires_at_ms = k.expires_at_ms;
    entry.key_quota = rate_limits(k.quota, entry.key.source);
    entry.key_quota.concurrency = 0;  // keys have no slots of their own
    auto g = groups.find(k.group);
    const store::KeyGroup* group = g != groups.end() ? g->second : nullptr;
    // A key whose group is missing (a store edited by hand) is refused like a disabled group's.
    entry.group_disabled = group == nullptr || group->disabled;
    entry.name_taken = config_key_names.contains(k.name);
    entry.key.allowed_aliases =
        !k.allowed_aliases.empty() || group == nullptr ? k.allowed_aliases : group->allowed_aliases;
    if (group != nullptr) {
      entry.group_quota = rate_limits(group->quota, "store key group " + group->name);
    }
    auto ga = group_accounts.find(k.group);
    if (ga != group_accounts.end()) {
      if (k.allocation_micros && k.status != store::KeyStatus::kRevoked) {
        set->accounts_.push_back(accounts.key(*group, k));
        entry.budget = set->accounts_.back().get();
      } else {
        entry.budget = ga->second.pool;
      }
      entry.charge_to = {entry.budget, ga->second.total};
    }
  }
  for (const StoreKey& entry : set->keys_) {
    set->by_hash_.emplace(entry.key.sha256_hex, &entry);
    set->by_name_.emplace(entry.key.name, &entry);
  }
  return set;
}

KeySet::Found KeySet::find(std::string_view sha256_hex, std::int64_t now_ms) const {
  auto it = by_hash_.find(sha256_hex);
  if (it == by_hash_.end()) {
    return {};
  }
  const StoreKey& k = *it->second;
  // The lookup already matched; the constant-time compare states the intent, as for config
  // keys (pipeline/snapshot.cc).
  if (k.key.sha256_hex.size() != sha256_hex.size() ||
      CRYPTO_memcmp(k.key.sha256_hex.data(), sha256_hex.data(), sha256_hex.size()) != 0) {
    return {};
  }
  KeyVerdict verdict = KeyVerdict::kActive;
  if (k.status == store::KeyStatus::kRevoked) {
    verdict = KeyVerdict::kRevoked;
  } else if (k.status == store::KeyStatus::kDisabled) {
    verdict = KeyVerdict::kDisabled;
  } else if (k.expires_at_ms && now_ms >= *k.expires_at_ms) {
    verdict = KeyVerdict::kExpired;
  } else if (k.group_disabled) {
    verdict = KeyVerdict::kGroupDisabled;
  } else if (k.name_taken) {
    verdict = KeyVerdict::kNameTaken;
  }
  return {&k, verdict};
}

const StoreKey* KeySet::find_named(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Error key_refused(KeyVerdict verdict, const StoreKey* key) {
  switch (verdict) {
    case KeyVerdict::kRevoked:
      return Error(ErrorKind::kUnauthorized, "API key revoked").with_code("key_revoked");
    case KeyVerdict::kDisabled:
      return Error(ErrorKind::kUnauthorized, "API key disabled").with_code("key_disabled");
    case KeyVerdict::kExpired:
      return Error(ErrorKind::kUnauthorized, "API key expired").with_code("key_expired");
    case KeyVerdict::kGroupDisabled:
      return Error(ErrorKind::kUnauthorized, "API key's key group " +
                                                 (key != nullptr ? key->key.group : std::string()) +
                                                 " is disabled")
          .with_code("key_group_disabled");
    case KeyVerdict::kNameTaken:
      return Error(ErrorKind::kUnauthorized,
                   "API key's name " + (key != nullptr ? key->key.name : std::string()) +
                       " is also a config-file key's: refused until the store key is renamed")
          .with_code("key_name_taken");
    case KeyVerdict::kUnknown:
    case KeyVerdict::kActive:
      break;
  }
  return Error(ErrorKind::kUnauthorized, "invalid API key").with_code("invalid_api_key");
}

}  // namespace sluice::tenancy
