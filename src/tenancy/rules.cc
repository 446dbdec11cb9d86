#include "tenancy/rules.h"

#include <algorithm>
#include <stdexcept>

#include "config/scalars.h"
#include "tenancy/key_secret.h"
#include "tenancy/money.h"

namespace sluice::tenancy {

namespace {

using store::ApiKey;
using store::KeyGroup;
using store::KeyStatus;
using store::TenancyState;

RuleError error(RuleErrorKind kind) { return RuleError{.kind = kind}; }

bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// The element of `list` (groups or keys, const or not) whose `field` equals `value`, or null.
template <class List, class Field>
auto find_in(List& list, Field field, std::string_view value) -> decltype(&list.front()) {
  auto it =
      std::find_if(list.begin(), list.end(), [&](const auto& o) { return o.*field == value; });
  return it == list.end() ? nullptr : &*it;
}

// A name a key may take: well formed, no config-file key's, no other store key's.
RuleResult<void> check_key_name(const TenancyState& state, const RuleContext& context,
                                std::string_view name) {
  if (!valid_name(name)) {
    return RuleError{.kind = RuleErrorKind::kInvalidName, .name = std::string(name)};
  }
  if (context.config_key_named(name)) {
    return RuleError{.kind = RuleErrorKind::kNameTaken, .name = std::string(name)};
  }
  for (const ApiKey& k : state.keys) {
    if (k.name == name) {
      return RuleError{.kind = RuleErrorKind::kNameTaken,
                       .group = k.group,
                       .name = std::string(name),
                       .holder = k.id};
    }
  }
  return {};
}

// The aliases of `aliases` outside `scope` (none when the scope is every alias).
std::vector<std::string> outside(const std::vector<std::string>& aliases,
                                 const std::vector<std::string>& scope) {
  std::vector<std::string> out;
  if (!scope.empty()) {
    std::copy_if(aliases.begin(), aliases.end(), std::back_inserter(out), [&](const auto& a) {
      return std::find(scope.begin(), scope.end(), a) == scope.end();
    });
  }
  return out;
}

RuleResult<void> check_key_scope(const ApiKey& key, const KeyGroup& group) {
  if (auto out = outside(key.allowed_aliases, group.allowed_aliases); !out.empty()) {
    return RuleError{.kind = RuleErrorKind::kAliasOutOfScope,
                     .group = group.name,
                     .key = key.name,
                     .aliases = std::move(out)};
  }
  return {};
}

RuleResult<void> check_allocations(const TenancyState& state, const KeyGroup& group) {
  const std::optional<std::int64_t> sum = allocated_micros(state, group.name);
  if (!sum) {
    return RuleError{.kind = RuleErrorKind::kAllocationOverflow, .group = group.name};
  }
  if (!group.budget) {
    if (*sum > 0) {
      return RuleError{.kind = RuleErrorKind::kAllocationWithoutBudget,
                       .group = group.name,
                       .amount_micros = *sum};
    }
    return {};
  }
  if (*sum > group.budget->amount_micros) {
    return RuleError{.kind = RuleErrorKind::kAllocationExceedsBudget,
                     .group = group.name,
                     .amount_micros = *sum,
                     .cap_micros = group.budget->amount_micros};
  }
  return {};
}

// Applies a group's fields to `g` (a new group: all of them, over the defaults).
RuleResult<void> apply(KeyGroup& g, const GroupFields& f, std::int64_t now_ms) {
  if (f.description) {
    g.description = *f.description;
  }
  if (f.budget) {
    if (!*f.budget) {
      g.budget.reset();
    } else {
      const BudgetFields& b = **f.budget;
      store::Budget budget = g.budget.value_or(store::Budget{});
      if (!g.budget) {
        if (!b.amount_micros) {
          return error(RuleErrorKind::kBudgetAmountRequired);
        }
        budget.starts_at_ms = now_ms;
      }
      budget.amount_micros = b.amount_micros.value_or(budget.amount_micros);
      budget.period = b.period.value_or(budget.period);
      budget.mode = b.mode.value_or(budget.mode);
      budget.time_zone = b.time_zone.value_or(budget.time_zone);
      budget.starts_at_ms = b.starts_at_ms.value_or(budget.starts_at_ms);
      g.budget = std::move(budget);
    }
  }
  g.quota.rpm = f.rpm.value_or(g.quota.rpm);
  g.quota.tpm = f.tpm.value_or(g.quota.tpm);
  g.quota.concurrency = f.concurrency.value_or(g.quota.concurrency);
  if (f.allowed_aliases) {
    g.allowed_aliases = *f.allowed_aliases;
  }
  g.disabled = f.disabled.value_or(g.disabled);
  return {};
}

// Applies a key's fields other than its name and status to `k`.
void apply(ApiKey& k, const KeyFields& f) {
  if (f.expires_at_ms) {
    k.expires_at_ms = *f.expires_at_ms;
  }
  if (f.allowed_aliases) {
    k.allowed_aliases = *f.allowed_aliases;
  }
  if (f.allocation_micros) {
    k.allocation_micros = *f.allocation_micros;
  }
  k.quota.rpm = f.rpm.value_or(k.quota.rpm);
  k.quota.tpm = f.tpm.value_or(k.quota.tpm);
}

// Adds the new key to change.state and its edit to change.edits.
RuleResult<void> add_key(Change& change, const RuleContext& context, const KeyGroup& group,
                         const NewKey& key) {
  const KeyFields& f = key.fields;
  if (auto named = check_key_name(change.state, context, f.name.value_or("")); !named) {
    return named;
  }
  ApiKey k;
  k.id = key.id;
  k.name = *f.name;
  k.group = group.name;
  k.prefix = key_prefix(key.secret);
  k.sha256_hex = config::sha256_hex(key.secret);
  k.created_at_ms = k.updated_at_ms = context.now_ms;
  apply(k, f);
  if (k.expires_at_ms && *k.expires_at_ms <= context.now_ms) {
    return error(RuleErrorKind::kExpiryInPast);
  }
  if (auto scoped = check_key_scope(k, group); !scoped) {
    return scoped;
  }
  change.state.keys.push_back(k);
  if (auto fits = check_allocations(change.state, group); !fits) {
    return fits;
  }
  change.edits.emplace_back(KeyEdit{"key.create", std::nullopt, std::move(k)});
  return {};
}

// A key that may still change: kKeyNotFound when unknown, kKeyRevoked when revoked (final).
RuleResult<ApiKey*> live_key(TenancyState& state, std::string_view id) {
  ApiKey* k = find_in(state.keys, &ApiKey::id, id);
  if (k == nullptr) {
    return RuleError{.kind = RuleErrorKind::kKeyNotFound, .key = std::string(id)};
  }
  if (k->status == KeyStatus::kRevoked) {
    return RuleError{.kind = RuleErrorKind::kKeyRevoked, .key = k->name};
  }
  return k;
}

std::string_view key_action(KeyStatus before, KeyStatus after) {
  if (before == after) {
    return "key.update";
  }
  switch (after) {
    case KeyStatus::kRevoked:
      return "key.revoke";
    case KeyStatus::kDisabled:
      return "key.disable";
    case KeyStatus::kActive:
      break;
  }
  return "key.enable";
}

// Whether a budget change may leave the group with less than it spent in the period: a new
// budget, a lower amount, or a period that starts elsewhere.
bool budget_tightened(const std::optional<store::Budget>& before, const store::Budget& after) {
  return !before || after.amount_micros < before->amount_micros || after.period != before->period ||
         after.time_zone != before->time_zone || after.starts_at_ms != before->starts_at_ms;
}

}  // namespace

void throw_exception_from_error(const RuleError& e, const boost::source_location&) {
  throw std::logic_error("tenancy rule error " + std::to_string(static_cast<int>(e.kind)) +
                         " read as a value");
}

const KeyGroup* find_group(const TenancyState& state, std::string_view name) {
  return find_in(state.groups, &KeyGroup::name, name);
}

const ApiKey* find_key(const TenancyState& state, std::string_view id) {
  return find_in(state.keys, &ApiKey::id, id);
}

std::optional<std::int64_t> allocated_micros(const TenancyState& state, std::string_view group) {
  std::int64_t sum = 0;
  for (const ApiKey& k : state.keys) {
    if (k.group == group && k.status != KeyStatus::kRevoked) {
      auto added = checked_add(sum, k.allocation_micros.value_or(0));
      if (!added) {
        return std::nullopt;
      }
      sum = *added;
    }
  }
  return sum;
}

RuleResult<Change> create_group(TenancyState state, const RuleContext& context,
                                std::string_view name, const GroupFields& fields,
                                std::span<const NewKey> keys) {
  if (!valid_name(name)) {
    return RuleError{.kind = RuleErrorKind::kInvalidName, .name = std::string(name)};
  }
  if (find_group(state, name) != nullptr) {
    return RuleError{.kind = RuleErrorKind::kGroupExists, .group = std::string(name)};
  }
  KeyGroup g;
  g.name = std::string(name);
  g.created_at_ms = g.updated_at_ms = context.now_ms;
  if (auto applied = apply(g, fields, context.now_ms); !applied) {
    return applied.error();
  }
  Change change{std::move(state), {}, {}};
  change.state.groups.push_back(g);
  change.edits.emplace_back(GroupEdit{"group.create", std::nullopt, g});
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (auto added = add_key(change, context, g, keys[i]); !added) {
      RuleError e = added.error();
      e.item = static_cast<int>(i);
      return e;
    }
  }
  return change;
}

RuleResult<Change> update_group(TenancyState state, const RuleContext& context,
                                std::string_view name, const GroupFields& fields) {
  KeyGroup* g = find_in(state.groups, &KeyGroup::name, name);
  if (g == nullptr) {
    return RuleError{.kind = RuleErrorKind::kGroupNotFound, .group = std::string(name)};
  }
  const KeyGroup before = *g;
  if (auto applied = apply(*g, fields, context.now_ms); !applied) {
    return applied.error();
  }
  if (*g == before) {
    return Change{std::move(state), {}, {}};
  }
  g->updated_at_ms = context.now_ms;
  if (auto fits = check_allocations(state, *g); !fits) {
    return fits.error();
  }
  for (const ApiKey& k : state.keys) {
    if (k.group == g->name && k.status != KeyStatus::kRevoked) {
      if (auto out = outside(k.allowed_aliases, g->allowed_aliases); !out.empty()) {
        return RuleError{.kind = RuleErrorKind::kScopeLeavesOutKey,
                         .group = g->name,
                         .key = k.name,
                         .aliases = std::move(out)};
      }
    }
  }
  Change change{{}, {GroupEdit{"group.update", before, *g}}, {}};
  if (g->budget && budget_tightened(before.budget, *g->budget)) {
    change.spend_caps.push_back(SpendCap{g->name, "", "", *g->budget, g->budget->amount_micros});
  }
  change.state = std::move(state);
  return change;
}

RuleResult<Change> delete_group(TenancyState state, const RuleContext&, std::string_view name) {
  const KeyGroup* g = find_group(state, name);
  if (g == nullptr) {
    return RuleError{.kind = RuleErrorKind::kGroupNotFound, .group = std::string(name)};
  }
  for (const ApiKey& k : state.keys) {
    if (k.group == name && k.status != KeyStatus::kRevoked) {
      return RuleError{.kind = RuleErrorKind::kGroupHasKeys, .group = g->name, .key = k.name};
    }
  }
  Change change{{}, {GroupEdit{"group.delete", *g, std::nullopt}}, {}};
  std::erase_if(state.groups, [&](const KeyGroup& group) { return group.name == name; });
  change.state = std::move(state);
  return change;
}

RuleResult<Change> create_key(TenancyState state, const RuleContext& context,
                              std::string_view group, const NewKey& key) {
  const KeyGroup* g = find_group(state, group);
  if (g == nullptr) {
    return RuleError{.kind = RuleErrorKind::kUnknownGroup, .group = std::string(group)};
  }
  const KeyGroup owner = *g;
  Change change{std::move(state), {}, {}};
  if (auto added = add_key(change, context, owner, key); !added) {
    return added.error();
  }
  return change;
}

RuleResult<Change> update_key(TenancyState state, const RuleContext& context, std::string_view id,
                              const KeyFields& fields) {
  auto found = live_key(state, id);
  if (!found) {
    return found.error();
  }
  ApiKey* k = *found;
  const KeyGroup* g = find_group(state, k->group);
  if (g == nullptr) {
    return RuleError{.kind = RuleErrorKind::kKeyWithoutGroup, .group = k->group, .key = k->name};
  }
  const ApiKey before = *k;
  if (fields.name && *fields.name != k->name) {
    if (auto named = check_key_name(state, context, *fields.name); !named) {
      return named.error();
    }
    k->name = *fields.name;
  }
  k->status = fields.status.value_or(k->status);
  apply(*k, fields);
  if (fields.allowed_aliases) {
    if (auto scoped = check_key_scope(*k, *g); !scoped) {
      return scoped.error();
    }
  }
  // Revoking releases the allocation back to the group's pool (the audit entry keeps it).
  if (k->status == KeyStatus::kRevoked) {
    k->allocation_micros.reset();
  }
  if (*k == before) {
    return Change{std::move(state), {}, {}};
  }
  k->updated_at_ms = context.now_ms;
  if (auto fits = check_allocations(state, *g); !fits) {
    return fits.error();
  }
  Change change{{}, {KeyEdit{key_action(before.status, k->status), before, *k}}, {}};
  if (k->allocation_micros && g->budget &&
      (!before.allocation_micros || *k->allocation_micros < *before.allocation_micros)) {
    change.spend_caps.push_back(
        SpendCap{g->name, k->id, k->name, *g->budget, *k->allocation_micros});
  }
  change.state = std::move(state);
  return change;
}

RuleResult<Change> rotate_key(TenancyState state, const RuleContext& context, std::string_view id,
                              std::string_view secret) {
  auto found = live_key(state, id);
  if (!found) {
    return found.error();
  }
  ApiKey* k = *found;
  const ApiKey before = *k;
  k->prefix = key_prefix(secret);
  k->sha256_hex = config::sha256_hex(secret);
  k->updated_at_ms = context.now_ms;
  Change change{{}, {KeyEdit{"key.rotate", before, *k}}, {}};
  change.state = std::move(state);
  return change;
}

RuleResult<void> check_spend(const SpendCap& cap, std::int64_t spent_micros) {
  if (spent_micros > cap.cap_micros) {
    return RuleError{.kind = RuleErrorKind::kBelowSpent,
                     .group = cap.group,
                     .key = cap.key_name,
                     .amount_micros = spent_micros,
                     .cap_micros = cap.cap_micros};
  }
  return {};
}

}  // namespace sluice::tenancy
