#include "admin/tenancy_answers.h"

#include <limits>

#include <boost/json.hpp>

#include "core/time_zone.h"
#include "tenancy/rules.h"

namespace sluice::admin {

namespace {

namespace json = boost::json;

json::value time_json(const std::optional<std::int64_t>& ms) {
  return ms ? json::value(format_rfc3339_ms(*ms)) : json::value(nullptr);
}

json::array list_json(const std::vector<std::string>& list) {
  return json::array(list.begin(), list.end());
}

json::value parsed_or_null(const std::string& text) {
  boost::system::error_code ec;
  return text.empty() ? json::value(nullptr) : json::parse(text, ec);
}

}  // namespace

json::object group_json(const store::KeyGroup& g, const store::TenancyState& state) {
  json::object o;
  o["name"] = g.name;
  o["description"] = g.description;
  if (g.budget) {
    json::object b;
    b["amount_micros"] = g.budget->amount_micros;
    b["period"] = to_string(g.budget->period);
    b["mode"] = to_string(g.budget->mode);
    b["time_zone"] = g.budget->time_zone;
    b["starts_at"] = format_rfc3339_ms(g.budget->starts_at_ms);
    o["budget"] = std::move(b);
  } else {
    o["budget"] = nullptr;
  }
  // Beyond int64 only in a store edited by hand (the rules refuse it): shown as the maximum.
  o["allocated_micros"] =
      tenancy::allocated_micros(state, g.name).value_or(std::numeric_limits<std::int64_t>::max());
  o["rpm"] = g.quota.rpm;
  o["tpm"] = g.quota.tpm;
  o["concurrency"] = g.quota.concurrency;
  o["allowed_aliases"] = list_json(g.allowed_aliases);
  o["disabled"] = g.disabled;
  o["created_at"] = format_rfc3339_ms(g.created_at_ms);
  o["updated_at"] = format_rfc3339_ms(g.updated_at_ms);
  return o;
}

// Never the secret; the hash is left out too (it identifies the secret to anyone holding it).
json::object key_json(const store::ApiKey& k) {
  json::object o;
  o["id"] = k.id;
  o["name"] = k.name;
  o["group"] = k.group;
  o["prefix"] = k.prefix;
  o["status"] = to_string(k.status);
  o["expires_at"] = time_json(k.expires_at_ms);
  o["allowed_aliases"] = list_json(k.allowed_aliases);
  o["allocation_micros"] =
      k.allocation_micros ? json::value(*k.allocation_micros) : json::value(nullptr);
  o["rpm"] = k.quota.rpm;
  o["tpm"] = k.quota.tpm;
  o["created_at"] = format_rfc3339_ms(k.created_at_ms);
  o["updated_at"] = format_rfc3339_ms(k.updated_at_ms);
  return o;
}

json::object key_with_secret(const store::ApiKey& key, std::string_view secret, Secrets secrets) {
  json::object o = key_json(key);
  if (secrets == Secrets::kShown) {
    o["secret"] = secret;
  } else {
    o["secret"] = nullptr;
    o["secret_note"] = "shown only in the first answer; rotate the key if it was lost";
  }
  return o;
}

json::object audit_json(const std::vector<store::AuditEntry>& entries) {
  json::array out;
  for (const store::AuditEntry& a : entries) {
    json::object o;
    o["id"] = a.id;
    o["at"] = format_rfc3339_ms(a.at_ms);
    o["actor"] = a.actor;
    o["action"] = a.action;
    o["object_type"] = a.object_type;
    o["object_id"] = a.object_id;
    o["before"] = parsed_or_null(a.before_json);
    o["after"] = parsed_or_null(a.after_json);
    o["request_id"] = a.request_id;
    out.push_back(std::move(o));
  }
  return json::object{{"entries", std::move(out)}};
}

}  // namespace sluice::admin
