#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/function_ref.h"
#include "store/tenancy.h"
#include "tenancy/rule_error.h"

namespace sluice::tenancy {

// The rules of key groups and API keys (docs/tenancy.md, "Allocations and their rules") as pure
// functions: each takes the tenancy state a change starts from and returns the state after it
// with the objects it touched (a Change), or the rule it breaks (a RuleError). No I/O, no clock,
// no randomness: the caller passes the time, new ids and secrets. admin/ reads requests into
// the fields below, commits a Change and renders answers. The rules:
// - names are 1 to 64 of [A-Za-z0-9._-]; a key group's is unique; a key's is unique and never
//   the name of a key of the config file;
// - the allocations of a group's keys that are not revoked never sum above the group's budget
//   amount (disabled keys keep theirs; revoking releases it), nor beyond what an amount holds;
//   a group without a budget has no allocations;
// - a key's allocation, or a group's amount, is never set below what was spent in the budget's
//   current period: the Change names each such cap (spend_caps) for the caller to check against
//   the usage ledger (check_spend) before committing;
// - a key's allowed aliases are within its group's (when the group has a list);
// - a revoked key is final; a group is deleted only when each of its keys is revoked.

// The fields of a budget a request gives (absent: unchanged, or the default for a new budget).
struct BudgetFields {
  std::optional<std::int64_t> amount_micros;  // > 0
  std::optional<store::BudgetPeriod> period;
  std::optional<store::BudgetMode> mode;
  std::optional<std::string> time_zone;  // a zone that loads (the reader checks)
  std::optional<std::int64_t> starts_at_ms;
};

struct GroupFields {
  std::optional<std::string> description;  // <= 1024 bytes (the reader checks)
  // Absent: unchanged; holding nullopt: no budget; else the budget's fields to set.
  std::optional<std::optional<BudgetFields>> budget;
  std::optional<std::uint64_t> rpm;
  std::optional<std::uint64_t> tpm;
  std::optional<std::uint32_t> concurrency;
  std::optional<std::vector<std::string>> allowed_aliases;  // sorted, without duplicates
  std::optional<bool> disabled;
};

// For the optional fields below, absent means unchanged; a held nullopt clears the value.
struct KeyFields {
  std::optional<std::string> name;  // required for a new key
  std::optional<store::KeyStatus> status;
  std::optional<std::optional<std::int64_t>> expires_at_ms;
  std::optional<std::vector<std::string>> allowed_aliases;       // sorted, without duplicates
  std::optional<std::optional<std::int64_t>> allocation_micros;  // >= 0
  std::optional<std::uint64_t> rpm;
  std::optional<std::uint64_t> tpm;
};

// A key to create: its id and secret come from the caller (tenancy/key_secret.h); the state keeps
// the secret's prefix and SHA-256, never the secret.
struct NewKey {
  std::string id;
  std::string secret;
  KeyFields fields;
};

// An object a change touched, with the audit action that names what happened to it
// ("group.create", "key.revoke", ...). A group's `after` is absent when it was deleted, its
// `before` when it was created; keys are never deleted.
struct GroupEdit {
  std::string_view action;
  std::optional<store::KeyGroup> before;
  std::optional<store::KeyGroup> after;
};
struct KeyEdit {
  std::string_view action;
  std::optional<store::ApiKey> before;
  store::ApiKey after;
};
using Edit = std::variant<GroupEdit, KeyEdit>;

// A change is valid only while the group (key_id "") or its key `key_id` has spent at most
// cap_micros in the current period of `budget`.
struct SpendCap {
  std::string group;
  std::string key_id;
  std::string key_name;
  store::Budget budget;
  std::int64_t cap_micros = 0;
};

struct Change {
  store::TenancyState state;  // after the change
  std::vector<Edit> edits;    // in the order they happened; empty: nothing changed
  std::vector<SpendCap> spend_caps;
};

// What the rules read besides the state.
struct RuleContext {
  std::int64_t now_ms = 0;  // unix ms: created_at / updated_at, expiry checks, new budgets' start
  // Whether the config file has a key of this name.
  FunctionRef<bool(std::string_view)> config_key_named;
};

// A new group, and keys created with it in the same change (a RuleError's `item` says which
// key one is about).
RuleResult<Change> create_group(store::TenancyState state, const RuleContext& context,
                                std::string_view name, const GroupFields& fields,
                                std::span<const NewKey> keys = {});
RuleResult<Change> update_group(store::TenancyState state, const RuleContext& context,
                                std::string_view name, const GroupFields& fields);
RuleResult<Change> delete_group(store::TenancyState state, const RuleContext& context,
                                std::string_view name);
RuleResult<Change> create_key(store::TenancyState state, const RuleContext& context,
                              std::string_view group, const NewKey& key);
// Renames, disables, enables or revokes (status), and changes the other fields given.
RuleResult<Change> update_key(store::TenancyState state, const RuleContext& context,
                              std::string_view id, const KeyFields& fields);
// A new secret for the key; everything else stays.
RuleResult<Change> rotate_key(store::TenancyState state, const RuleContext& context,
                              std::string_view id, std::string_view secret);

// kBelowSpent when `spent_micros` (in the cap's current period) is above the cap.
RuleResult<void> check_spend(const SpendCap& cap, std::int64_t spent_micros);

// Lookups in a state (null when absent).
const store::KeyGroup* find_group(const store::TenancyState& state, std::string_view name);
const store::ApiKey* find_key(const store::TenancyState& state, std::string_view id);
// The sum of the allocations of `group`'s keys that are not revoked; nullopt beyond int64.
std::optional<std::int64_t> allocated_micros(const store::TenancyState& state,
                                             std::string_view group);

}  // namespace sluice::tenancy
