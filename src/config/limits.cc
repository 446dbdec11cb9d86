#include "config/limits.h"

#include <algorithm>
#include <functional>

#include "config/loader.h"

namespace sluice::config {
namespace {

// One layer's limits; `concurrency` only where the layer has slots (groups, the instance).
RateLimits rate_limits(const YamlField& field, bool concurrency) {
  const YamlMap m =
      concurrency ? field.map({"rpm", "tpm", "concurrency"}) : field.map({"rpm", "tpm"});
  RateLimits limits;
  limits.source = field.where();
  if (auto f = m.get("rpm")) {
    limits.rpm = f->unsigned_in(1, 1'000'000'000);
  }
  if (auto f = m.get("tpm")) {
    limits.tpm = f->unsigned_in(1, 1'000'000'000'000);
  }
  if (auto f = m.get("concurrency")) {
    limits.concurrency = static_cast<std::uint32_t>(f->unsigned_in(1, 1'000'000));
  }
  if (!limits.any()) {
    field.fail(concurrency ? "set at least one of rpm, tpm, concurrency"
                           : "set at least one of rpm, tpm");
  }
  return limits;
}

// A map of named layers (`keys`, `groups`, `models`, `providers`); `known` says whether a
// name exists in this config, `what` names the kind for the message.
void load_named_limits(const YamlField& field, std::string_view what, bool concurrency,
                       const std::function<bool(const std::string&)>& known,
                       std::map<std::string, RateLimits, std::less<>>& into) {
  for (auto& [name, value] : field.entries()) {
    const std::string id = name.literal_text();
    if (!known(id)) {
      name.fail("no " + std::string(what) + " " + in_quotes(id) + " in this config");
    }
    into.emplace(id, rate_limits(value, concurrency));
  }
}

}  // namespace

LimitSettings load_limits(const YamlField& field, std::span<const Key> keys, bool tenancy_enabled,
                          const LoadState& declared) {
  const YamlMap m =
      field.map({"key", "keys", "groups", "models", "providers", "instance", "lease_ttl_ms"});
  LimitSettings l;
  if (auto f = m.get("key")) {
    l.key = rate_limits(*f, false);
  }
  if (auto f = m.get("keys")) {
    load_named_limits(
        *f, "key named", false,
        [&](const std::string& name) {
          // Keys in the store are not known here: any name goes when tenancy is on.
          return tenancy_enabled || std::any_of(keys.begin(), keys.end(),
                                                [&](const Key& k) { return k.name == name; });
        },
        l.keys);
  }
  if (auto f = m.get("groups")) {
    load_named_limits(
        *f, "key in group", true,
        [&](const std::string& name) {
          return tenancy_enabled || std::any_of(keys.begin(), keys.end(),
                                                [&](const Key& k) { return k.group == name; });
        },
        l.groups);
  }
  if (auto f = m.get("models")) {
    load_named_limits(
        *f, "route alias", false, [&](const std::string& name) { return declared.has_alias(name); },
        l.models);
  }
  if (auto f = m.get("providers")) {
    load_named_limits(
        *f, "provider", false,
        [&](const std::string& name) { return declared.find_provider(name) != nullptr; },
        l.providers);
  }
  if (auto f = m.get("instance")) {
    const YamlMap i = f->map({"concurrency"});
    l.instance_concurrency =
        static_cast<std::uint32_t>(i.required("concurrency").unsigned_in(1, 10'000'000));
  }
  if (auto f = m.get("lease_ttl_ms")) {
    l.lease_ttl = f->millis_in(1000, 86'400'000);
  }
  return l;
}

}  // namespace sluice::config
