#include "tenancy/admin_service.h"

#include <algorithm>
#include <array>
#include <limits>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <openssl/rand.h>

#include "config/scalars.h"
#include "core/time_zone.h"
#include "store/tenancy_sql.h"
#include "store/usage_report.h"
#include "tenancy/budget.h"
#include "tenancy/money.h"

namespace sluice::tenancy {

namespace json = boost::json;
using store::ApiKey;
using store::KeyGroup;
using store::KeyStatus;

struct AdminService::Change {
  store::TenancyState state;
  store::TenancyCommit commit;
  const AdminCaller* caller = nullptr;
  std::int64_t now_ms = 0;

  KeyGroup* group(std::string_view name) {
    for (KeyGroup& g : state.groups) {
      if (g.name == name) {
        return &g;
      }
    }
    return nullptr;
  }
  ApiKey* key(std::string_view id) {
    for (ApiKey& k : state.keys) {
      if (k.id == id) {
        return &k;
      }
    }
    return nullptr;
  }
  // A key that may still change: 404 when unknown, 409 when revoked (final).
  Result<ApiKey*> live_key(std::string_view id);
  // Records a changed group or key (replacing an earlier put of the same one) and its audit.
  void put(const KeyGroup& g) {
    std::erase_if(commit.put_groups, [&](const KeyGroup& o) { return o.name == g.name; });
    commit.put_groups.push_back(g);
  }
  void put(const ApiKey& k) {
    std::erase_if(commit.put_keys, [&](const ApiKey& o) { return o.id == k.id; });
    commit.put_keys.push_back(k);
  }
  void audit(std::string action, std::string type, std::string id, std::string before,
             std::string after) {
    commit.audit.push_back(store::AuditEntry{0, now_ms, caller->actor, std::move(action),
                                             std::move(type), std::move(id), std::move(before),
                                             std::move(after), caller->request_id});
  }
};

namespace {

constexpr std::size_t kSecretChars = 40;
constexpr std::string_view kSecretScheme = "sk-slc-";
constexpr std::size_t kPrefixChars = 4;  // after the scheme
constexpr std::size_t kMaxDescription = 1024;
constexpr std::size_t kMaxAliases = 256;

Error failure(int status, std::string code, std::string message) {
  const ErrorKind kind = status == 404   ? ErrorKind::kNotFound
                         : status == 503 ? ErrorKind::kUnavailable
                                         : ErrorKind::kBadRequest;
  return Error(kind, status, std::move(message)).with_code(std::move(code));
}
Error bad_request(std::string message) {
  return failure(400, "invalid_request", std::move(message));
}
Error conflict(std::string code, std::string message) {
  return failure(409, std::move(code), std::move(message));
}
Error unprocessable(std::string code, std::string message) {
  return failure(422, std::move(code), std::move(message));
}
Error store_failure(const Error& e) {
  return e.kind() == ErrorKind::kUnavailable ? failure(503, "store_unavailable", e.message())
                                             : failure(500, "store_error", e.message());
}

std::string money(std::int64_t micros) { return store::format_micros(micros); }

bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// A request body's object, read field by field: each getter checks the type, and finish()
// refuses fields nobody asked for (a misspelt field is an error, not silently ignored).
class Fields {
 public:
  Fields(const json::object& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  bool has(std::string_view name) {
    seen_.emplace_back(name);
    return object_.contains(name);
  }
  const json::value* get(std::string_view name) { return has(name) ? &object_.at(name) : nullptr; }
  std::optional<std::string> string(std::string_view name) {
    const json::value* v = get(name);
    if (v == nullptr || v->is_null()) {
      return std::optional<std::string>();
    }
    if (!v->is_string()) {
      return type_error(name, "a string");
    }
    return std::optional<std::string>(std::string(v->as_string()));
  }
  // Absent: nullopt; null: optional holding nullopt.
  std::optional<std::optional<std::int64_t>> integer(std::string_view name, std::int64_t min) {
    const json::value* v = get(name);
    if (v == nullptr) {
      return std::optional<std::optional<std::int64_t>>();
    }
    if (v->is_null()) {
      return std::optional<std::optional<std::int64_t>>(std::optional<std::int64_t>());
    }
    std::int64_t out = 0;
    if (v->is_int64()) {
      out = v->as_int64();
    } else if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(
                                                       std::numeric_limits<std::int64_t>::max())) {
      out = static_cast<std::int64_t>(v->as_uint64());
    } else {
      return type_error(name, "an integer");
    }
    if (out < min) {
      return fail(fmt::format("{}{}: must be at least {}", where_, name, min));
    }
    return std::optional<std::optional<std::int64_t>>(std::optional<std::int64_t>(out));
  }
  std::optional<bool> boolean(std::string_view name) {
    const json::value* v = get(name);
    if (v == nullptr) {
      return std::optional<bool>();
    }
    if (!v->is_bool()) {
      return type_error(name, "true or false");
    }
    return std::optional<bool>(v->as_bool());
  }
  std::optional<std::vector<std::string>> string_list(std::string_view name) {
    const json::value* v = get(name);
    if (v == nullptr) {
      return std::optional<std::vector<std::string>>();
    }
    if (v->is_null()) {
      return std::optional<std::vector<std::string>>(std::vector<std::string>{});
    }
    if (!v->is_array() || v->as_array().size() > kMaxAliases) {
      return type_error(name, fmt::format("an array of at most {} strings", kMaxAliases));
    }
    std::vector<std::string> out;
    for (const json::value& item : v->as_array()) {
      if (!item.is_string() || item.as_string().empty()) {
        return type_error(name, "an array of non-empty strings");
      }
      out.emplace_back(item.as_string());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return std::optional<std::vector<std::string>>(std::move(out));
  }
  // An RFC 3339 time as unix ms; null clears it.
  std::optional<std::optional<std::int64_t>> time(std::string_view name) {
    const json::value* v = get(name);
    if (v == nullptr) {
      return std::optional<std::optional<std::int64_t>>();
    }
    if (v->is_null()) {
      return std::optional<std::optional<std::int64_t>>(std::optional<std::int64_t>());
    }
    if (!v->is_string()) {
      return type_error(name, "an RFC 3339 time (\"2027-01-31T00:00:00Z\")");
    }
    auto ms = parse_rfc3339_ms(v->as_string());
    if (!ms) {
      return fail(fmt::format("{}{}: {}", where_, name, ms.error().message()));
    }
    return std::optional<std::optional<std::int64_t>>(std::optional<std::int64_t>(*ms));
  }
  // The first malformed field, else the first unknown one.
  Result<void> finish() const {
    if (error_) {
      return *error_;
    }
    for (const auto& [name, value] : object_) {
      if (std::find(seen_.begin(), seen_.end(), std::string_view(name)) == seen_.end()) {
        return bad_request(fmt::format("{}{}: unknown field", where_, std::string_view(name)));
      }
    }
    return {};
  }

 private:
  // Keeps the first error; every getter answers "absent" after one.
  std::nullopt_t fail(std::string message) {
    if (!error_) {
      error_ = bad_request(std::move(message));
    }
    return std::nullopt;
  }
  std::nullopt_t type_error(std::string_view name, std::string_view what) {
    return fail(fmt::format("{}{}: expected {}", where_, name, what));
  }

  const json::object& object_;
  std::string where_;  // "keys[0]." for nested objects
  std::vector<std::string_view> seen_;
  std::optional<Error> error_;
};

Result<const json::object*> as_object(const json::value& body, std::string_view what) {
  if (!body.is_object()) {
    return bad_request(fmt::format("{} must be a JSON object", what));
  }
  return &body.as_object();
}

json::value time_json(const std::optional<std::int64_t>& ms) {
  return ms ? json::value(format_rfc3339_ms(*ms)) : json::value(nullptr);
}

json::array list_json(const std::vector<std::string>& list) {
  json::array a;
  for (const std::string& s : list) {
    a.emplace_back(s);
  }
  return a;
}

// The allocations of `group`'s keys that are not revoked; nullopt beyond int64.
std::optional<std::int64_t> allocated(const store::TenancyState& state, std::string_view group) {
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

json::object group_json(const KeyGroup& g, const store::TenancyState& state) {
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
      allocated(state, g.name).value_or(std::numeric_limits<std::int64_t>::max());
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
json::object key_json(const ApiKey& k) {
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

std::string audit_text(const json::object& o) { return json::serialize(o); }

// A new secret's answer: `shown` with the secret, the answer an Idempotency-Key stores without.
AdminReply with_secret(int status, const json::object& key, const std::string& secret) {
  json::object shown = key;
  shown["secret"] = secret;
  json::object stored = key;
  stored["secret"] = nullptr;
  stored["secret_note"] = "shown only in the first answer; rotate the key if it was lost";
  return AdminReply{status, std::move(shown), json::value(std::move(stored))};
}

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    // The CSPRNG failing is not a condition to go on from: an id or secret must not be weak.
    throw std::runtime_error("RAND_bytes failed");
  }
  std::string out;
  for (unsigned char c : raw) {
    out += fmt::format("{:02x}", c);
  }
  return out;
}

// The aliases not in `scope` ("" when all are, or the scope is every alias).
std::string outside(const std::vector<std::string>& aliases,
                    const std::vector<std::string>& scope) {
  if (scope.empty()) {
    return "";
  }
  std::string out;
  for (const std::string& a : aliases) {
    if (std::find(scope.begin(), scope.end(), a) == scope.end()) {
      out += out.empty() ? a : ", " + a;
    }
  }
  return out;
}

// Applies a group object's fields (create: all; update: those given) to `g`.
Result<void> read_group_fields(Fields& f, KeyGroup& g, std::int64_t now_ms) {
  if (auto description = f.string("description")) {
    if (description->size() > kMaxDescription) {
      return bad_request(fmt::format("description: at most {} bytes", kMaxDescription));
    }
    g.description = std::move(*description);
  }
  if (const json::value* b = f.get("budget")) {
    if (b->is_null()) {
      g.budget.reset();
    } else {
      auto object = as_object(*b, "budget");
      if (!object) {
        return object.error();
      }
      Fields bf(**object, "budget.");
      store::Budget budget = g.budget.value_or(store::Budget{});
      budget.starts_at_ms = g.budget ? budget.starts_at_ms : now_ms;
      auto amount = bf.integer("amount_micros", 1);
      auto period = bf.string("period");
      auto mode = bf.string("mode");
      auto zone = bf.string("time_zone");
      auto starts = bf.time("starts_at");
      if (auto r = bf.finish(); !r) {
        return r;
      }
      if (amount && *amount) {
        budget.amount_micros = **amount;
      } else if (!g.budget) {
        return bad_request("budget.amount_micros: required (integer micro-units, > 0)");
      }
      if (period) {
        const auto p = store::parse_budget_period(*period);
        if (!p) {
          return bad_request("budget.period: expected monthly or cumulative");
        }
        budget.period = *p;
      }
      if (mode) {
        const auto m = store::parse_budget_mode(*mode);
        if (!m) {
          return bad_request("budget.mode: expected hard or advisory");
        }
        budget.mode = *m;
      }
      if (zone) {
        if (auto loaded = TimeZone::load(*zone); !loaded) {
          return bad_request("budget.time_zone: " + loaded.error().message());
        }
        budget.time_zone = *zone;
      }
      if (starts && *starts) {
        budget.starts_at_ms = **starts;
      }
      g.budget = budget;
    }
  }
  auto rpm = f.integer("rpm", 0);
  auto tpm = f.integer("tpm", 0);
  auto concurrency = f.integer("concurrency", 0);
  auto aliases = f.string_list("allowed_aliases");
  auto disabled = f.boolean("disabled");
  if (rpm) {
    g.quota.rpm = static_cast<std::uint64_t>(rpm->value_or(0));
  }
  if (tpm) {
    g.quota.tpm = static_cast<std::uint64_t>(tpm->value_or(0));
  }
  if (concurrency) {
    g.quota.concurrency = static_cast<std::uint32_t>(std::min<std::int64_t>(
        concurrency->value_or(0), std::numeric_limits<std::uint32_t>::max()));
  }
  if (aliases) {
    g.allowed_aliases = std::move(*aliases);
  }
  if (disabled) {
    g.disabled = *disabled;
  }
  return {};
}

}  // namespace

Result<ApiKey*> AdminService::Change::live_key(std::string_view id) {
  ApiKey* k = key(id);
  if (k == nullptr) {
    return failure(404, "not_found", fmt::format("no key {}", id));
  }
  if (k->status == KeyStatus::kRevoked) {
    return conflict("key_revoked", fmt::format("key {} is revoked; that is final", k->name));
  }
  return k;
}

std::string generate_key_secret() {
  static constexpr std::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string secret(kSecretScheme);
  std::array<unsigned char, 64> raw{};
  while (secret.size() < kSecretScheme.size() + kSecretChars) {
    if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
      throw std::runtime_error("RAND_bytes failed");
    }
    for (unsigned char c : raw) {
      // 248 = 4 * 62: bytes above it are dropped so every character is equally likely.
      if (c < 248 && secret.size() < kSecretScheme.size() + kSecretChars) {
        secret += kAlphabet[c % 62];
      }
    }
  }
  return secret;
}

std::string key_prefix(std::string_view secret) {
  return std::string(secret.substr(0, kSecretScheme.size() + kPrefixChars));
}

AdminService::AdminService(store::Store& store, Options options)
    : store_(store), options_(std::move(options)) {
  if (!options_.config_key_named) {
    options_.config_key_named = [](std::string_view) { return false; };
  }
}

Result<AdminReply> AdminService::mutate(const AdminCaller& caller, Mutation mutation) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const std::int64_t now_ms = options_.now_ms();
    if (!caller.idempotency_key.empty()) {
      auto stored = store_.find_idempotent(caller.idempotency_key, now_ms);
      if (!stored) {
        return store_failure(stored.error());
      }
      if (*stored) {
        if ((*stored)->request_sha256 != caller.request_sha256) {
          return unprocessable("idempotency_key_reused",
                               "this Idempotency-Key was used for a different request");
        }
        boost::system::error_code ec;
        json::value body = json::parse((*stored)->body, ec);
        if (ec) {
          return failure(500, "store_error", "a stored idempotent answer is not JSON");
        }
        return AdminReply{(*stored)->status, std::move(body)};
      }
    }
    auto state = store_.load_tenancy();
    if (!state) {
      return store_failure(state.error());
    }
    Change change;
    change.commit.expected_revision = state->revision;
    change.state = std::move(*state);
    change.caller = &caller;
    change.now_ms = now_ms;
    auto reply = mutation(change);
    if (!reply) {
      return reply.error();
    }
    if (change.commit.put_groups.empty() && change.commit.put_keys.empty() &&
        change.commit.delete_groups.empty()) {
      return reply;  // nothing changed (e.g. an update to the same values)
    }
    if (!caller.idempotency_key.empty()) {
      // The stored answer never holds a secret: a retry learns the key exists, not its secret.
      change.commit.idempotency = store::IdempotentReply{
          caller.idempotency_key, caller.request_sha256, reply->status,
          json::serialize(reply->stored ? *reply->stored : reply->body), change.now_ms};
    }
    auto committed = store_.commit_tenancy(change.commit);
    if (committed) {
      return reply;
    }
    if (!store::is_tenancy_conflict(committed.error())) {
      return committed.error().http_status() == 400
                 ? conflict("conflict", committed.error().message())
                 : store_failure(committed.error());
    }
  }
  return failure(503, "busy", "too many concurrent changes; try again");
}

Result<std::int64_t> AdminService::consumed(const store::Budget& budget, store::Dimension dimension,
                                            const std::string& value) {
  auto zone = TimeZone::load(budget.time_zone);
  if (!zone) {
    return failure(500, "invalid_time_zone", zone.error().message());
  }
  auto rows = store_.spend_since(budget_period(budget, *zone, options_.now_ms()).start_ms);
  if (!rows) {
    return store_failure(rows.error());
  }
  std::int64_t sum = 0;
  for (const store::SpendRow& row : *rows) {
    const std::string& of = dimension == store::Dimension::kKey ? row.key_name : row.key_group;
    sum = saturating_add(sum, of == value ? row.cost_micros : 0);
  }
  return sum;
}

Result<void> AdminService::check_allocations(const Change& change, const KeyGroup& group) {
  const std::optional<std::int64_t> allocations = allocated(change.state, group.name);
  if (!allocations) {
    return unprocessable("amount_out_of_range",
                         fmt::format("the allocations of key group {} would sum to more than {}, "
                                     "the largest amount",
                                     group.name, money(std::numeric_limits<std::int64_t>::max())));
  }
  const std::int64_t sum = *allocations;
  if (!group.budget) {
    if (sum > 0) {
      return unprocessable("allocation_without_budget",
                           fmt::format("key group {} has no budget: its keys cannot hold "
                                       "allocations (they hold {})",
                                       group.name, money(sum)));
    }
    return {};
  }
  if (sum > group.budget->amount_micros) {
    return conflict("allocation_exceeds_budget",
                    fmt::format("the allocations of key group {} would sum to {}, above its "
                                "budget of {}",
                                group.name, money(sum), money(group.budget->amount_micros)));
  }
  return {};
}

Result<AdminReply> AdminService::list_groups() {
  auto state = store_.load_tenancy();
  if (!state) {
    return store_failure(state.error());
  }
  json::array groups;
  for (const KeyGroup& g : state->groups) {
    groups.push_back(group_json(g, *state));
  }
  return AdminReply{200, json::object{{"groups", std::move(groups)}}};
}

Result<AdminReply> AdminService::get_group(std::string_view name) {
  auto state = store_.load_tenancy();
  if (!state) {
    return store_failure(state.error());
  }
  for (const KeyGroup& g : state->groups) {
    if (g.name == name) {
      return AdminReply{200, group_json(g, *state)};
    }
  }
  return failure(404, "not_found", fmt::format("no key group {}", name));
}

Result<AdminReply> AdminService::create_group(const json::value& body, const AdminCaller& caller) {
  auto object = as_object(body, "the body");
  if (!object) {
    return object.error();
  }
  return mutate(caller, [&](Change& change) -> Result<AdminReply> {
    Fields f(**object, "");
    auto name = f.string("name");
    if (!name || !valid_name(*name)) {
      return bad_request("name: required, 1 to 64 of A-Z a-z 0-9 . _ -");
    }
    if (change.group(*name) != nullptr) {
      return conflict("group_exists", fmt::format("key group {} exists already", *name));
    }
    KeyGroup g;
    g.name = *name;
    g.created_at_ms = g.updated_at_ms = change.now_ms;
    if (auto r = read_group_fields(f, g, change.now_ms); !r) {
      return r.error();
    }
    const json::value* keys = f.get("keys");
    if (auto r = f.finish(); !r) {
      return r.error();
    }
    change.state.groups.push_back(g);
    change.put(g);
    change.audit("group.create", "group", g.name, "", audit_text(group_json(g, change.state)));
    json::object answer = group_json(g, change.state);
    if (keys == nullptr) {
      return AdminReply{201, std::move(answer)};
    }
    if (!keys->is_array()) {
      return bad_request("keys: expected an array of key objects");
    }
    json::array created;
    json::array stored;
    for (std::size_t i = 0; i < keys->as_array().size(); ++i) {
      auto key_object = as_object(keys->as_array()[i], fmt::format("keys[{}]", i));
      if (!key_object) {
        return key_object.error();
      }
      auto reply = put_key(change, g, **key_object, fmt::format("keys[{}].", i));
      if (!reply) {
        return reply.error();
      }
      created.push_back(std::move(reply->body));
      stored.push_back(std::move(*reply->stored));
    }
    answer = group_json(g, change.state);
    json::object stored_answer = answer;
    answer["keys"] = std::move(created);
    stored_answer["keys"] = std::move(stored);
    return AdminReply{201, std::move(answer), json::value(std::move(stored_answer))};
  });
}

Result<AdminReply> AdminService::update_group(std::string_view name, const json::value& body,
                                              const AdminCaller& caller) {
  auto object = as_object(body, "the body");
  if (!object) {
    return object.error();
  }
  return mutate(caller, [&](Change& change) -> Result<AdminReply> {
    KeyGroup* g = change.group(name);
    if (g == nullptr) {
      return failure(404, "not_found", fmt::format("no key group {}", name));
    }
    const KeyGroup before = *g;
    Fields f(**object, "");
    if (f.has("name")) {
      return bad_request("name: a key group cannot be renamed (usage records name it)");
    }
    if (auto r = read_group_fields(f, *g, change.now_ms); !r) {
      return r.error();
    }
    if (auto r = f.finish(); !r) {
      return r.error();
    }
    if (*g == before) {
      return AdminReply{200, group_json(*g, change.state)};
    }
    g->updated_at_ms = change.now_ms;
    if (auto r = check_allocations(change, *g); !r) {
      return r.error();
    }
    if (g->budget && (!before.budget || g->budget->amount_micros < before.budget->amount_micros ||
                      g->budget->period != before.budget->period ||
                      g->budget->time_zone != before.budget->time_zone ||
                      g->budget->starts_at_ms != before.budget->starts_at_ms)) {
      auto spent = consumed(*g->budget, store::Dimension::kKeyGroup, g->name);
      if (!spent) {
        return spent.error();
      }
      if (g->budget->amount_micros < *spent) {
        return conflict("below_consumed",
                        fmt::format("key group {} has spent {} in this period: its budget cannot "
                                    "be set to {}",
                                    g->name, money(*spent), money(g->budget->amount_micros)));
      }
    }
    for (const ApiKey& k : change.state.keys) {
      if (k.group == g->name && k.status != KeyStatus::kRevoked) {
        if (const std::string out = outside(k.allowed_aliases, g->allowed_aliases); !out.empty()) {
          return unprocessable("alias_out_of_scope",
                               fmt::format("key {} allows {}, which the new allowed_aliases of "
                                           "key group {} leave out",
                                           k.name, out, g->name));
        }
      }
    }
    change.put(*g);
    change.audit("group.update", "group", g->name, audit_text(group_json(before, change.state)),
                 audit_text(group_json(*g, change.state)));
    return AdminReply{200, group_json(*g, change.state)};
  });
}

Result<AdminReply> AdminService::delete_group(std::string_view name, const AdminCaller& caller) {
  return mutate(caller, [&](Change& change) -> Result<AdminReply> {
    const KeyGroup* g = change.group(name);
    if (g == nullptr) {
      return failure(404, "not_found", fmt::format("no key group {}", name));
    }
    for (const ApiKey& k : change.state.keys) {
      if (k.group == name && k.status != KeyStatus::kRevoked) {
        return conflict(
            "group_has_keys",
            fmt::format("key group {} still has keys that are not revoked ({})", name, k.name));
      }
    }
    change.commit.delete_groups.emplace_back(name);
    change.audit("group.delete", "group", g->name, audit_text(group_json(*g, change.state)), "");
    return AdminReply{200, json::object{{"deleted", g->name}}};
  });
}

Result<AdminReply> AdminService::list_keys(std::optional<std::string_view> group) {
  auto state = store_.load_tenancy();
  if (!state) {
    return store_failure(state.error());
  }
  json::array keys;
  for (const ApiKey& k : state->keys) {
    if (!group || k.group == *group) {
      keys.push_back(key_json(k));
    }
  }
  return AdminReply{200, json::object{{"keys", std::move(keys)}}};
}

Result<AdminReply> AdminService::get_key(std::string_view id) {
  auto state = store_.load_tenancy();
  if (!state) {
    return store_failure(state.error());
  }
  for (const ApiKey& k : state->keys) {
    if (k.id == id) {
      return AdminReply{200, key_json(k)};
    }
  }
  return failure(404, "not_found", fmt::format("no key {}", id));
}

Result<AdminReply> AdminService::put_key(Change& change, const KeyGroup& group,
                                         const json::object& body, std::string_view where) {
  Fields f(body, std::string(where));
  auto name = f.string("name");
  auto expires = f.time("expires_at");
  auto aliases = f.string_list("allowed_aliases");
  auto allocation = f.integer("allocation_micros", 0);
  auto rpm = f.integer("rpm", 0);
  auto tpm = f.integer("tpm", 0);
  if (where.empty()) {
    (void)f.has("group");  // read by create_key
  }
  if (auto r = f.finish(); !r) {
    return r.error();
  }
  if (!name || !valid_name(*name)) {
    return bad_request(fmt::format("{}name: required, 1 to 64 of A-Z a-z 0-9 . _ -", where));
  }
  if (options_.config_key_named(*name)) {
    return conflict("name_taken", fmt::format("{} is the name of a key in the config file", *name));
  }
  for (const ApiKey& k : change.state.keys) {
    if (k.name == *name) {
      return conflict("name_taken", fmt::format("a key named {} exists already", *name));
    }
  }
  ApiKey k;
  const std::string secret = generate_key_secret();
  k.id = "key_" + random_hex(8);
  k.name = *name;
  k.group = group.name;
  k.prefix = key_prefix(secret);
  k.sha256_hex = config::sha256_hex(secret);
  k.created_at_ms = k.updated_at_ms = change.now_ms;
  if (expires && *expires) {
    if (**expires <= change.now_ms) {
      return bad_request(fmt::format("{}expires_at: in the past", where));
    }
    k.expires_at_ms = *expires;
  }
  if (aliases) {
    k.allowed_aliases = std::move(*aliases);
  }
  if (const std::string out = outside(k.allowed_aliases, group.allowed_aliases); !out.empty()) {
    return unprocessable(
        "alias_out_of_scope",
        fmt::format("{}allowed_aliases: {} not allowed to key group {}", where, out, group.name));
  }
  if (allocation) {
    k.allocation_micros = *allocation;
  }
  k.quota.rpm = static_cast<std::uint64_t>(rpm.value_or(std::nullopt).value_or(0));
  k.quota.tpm = static_cast<std::uint64_t>(tpm.value_or(std::nullopt).value_or(0));
  change.state.keys.push_back(k);
  if (auto r = check_allocations(change, group); !r) {
    return r.error();
  }
  change.put(k);
  change.audit("key.create", "key", k.id, "", audit_text(key_json(k)));
  return with_secret(201, key_json(k), secret);
}

Result<AdminReply> AdminService::create_key(const json::value& body, const AdminCaller& caller) {
  auto object = as_object(body, "the body");
  if (!object) {
    return object.error();
  }
  const json::value* group = (*object)->if_contains("group");
  if (group == nullptr || !group->is_string()) {
    return bad_request("group: required, the name of a key group");
  }
  return mutate(caller, [&](Change& change) -> Result<AdminReply> {
    const KeyGroup* g = change.group(group->as_string());
    if (g == nullptr) {
      return unprocessable("unknown_group",
                           fmt::format("no key group {}", std::string_view(group->as_string())));
    }
    return put_key(change, *g, **object, "");
  });
}

Result<AdminReply> AdminService::update_key(std::string_view id, const json::value& body,
                                            const AdminCaller& caller) {
  auto object = as_object(body, "the body");
  if (!object) {
    return object.error();
  }
  return mutate(caller, [&](Change& change) -> Result<AdminReply> {
    auto found = change.live_key(id);
    if (!found) {
      return found.error();
    }
    ApiKey* k = *found;
    const KeyGroup* g = change.group(k->group);
    if (g == nullptr) {
      return failure(500, "store_error", fmt::format("key {} names no stored group", k->name));
    }
    const ApiKey before = *k;
    Fields f(**object, "");
    if (f.has("group")) {
      return bad_request("group: a key cannot move to another group");
    }
    auto name = f.string("name");
    auto status = f.string("status");
    auto expires = f.time("expires_at");
    auto aliases = f.string_list("allowed_aliases");
    auto allocation = f.integer("allocation_micros", 0);
    auto rpm = f.integer("rpm", 0);
    auto tpm = f.integer("tpm", 0);
    if (auto r = f.finish(); !r) {
      return r.error();
    }
    if (name && *name != k->name) {
      if (!valid_name(*name)) {
        return bad_request("name: 1 to 64 of A-Z a-z 0-9 . _ -");
      }
      if (options_.config_key_named(*name)) {
        return conflict("name_taken",
                        fmt::format("{} is the name of a key in the config file", *name));
      }
      for (const ApiKey& other : change.state.keys) {
        if (other.name == *name) {
          return conflict("name_taken", fmt::format("a key named {} exists already", *name));
        }
      }
      k->name = *name;
    }
    if (status) {
      const auto parsed = store::parse_key_status(*status);
      if (!parsed) {
        return bad_request("status: expected active, disabled or revoked");
      }
      k->status = *parsed;
    }
    if (expires) {
      k->expires_at_ms = *expires;
    }
    if (aliases) {
      k->allowed_aliases = std::move(*aliases);
      if (const std::string out = outside(k->allowed_aliases, g->allowed_aliases); !out.empty()) {
        return unprocessable(
            "alias_out_of_scope",
            fmt::format("allowed_aliases: {} not allowed to key group {}", out, g->name));
      }
    }
    if (allocation) {
      k->allocation_micros = *allocation;
    }
    if (rpm) {
      k->quota.rpm = static_cast<std::uint64_t>(rpm->value_or(0));
    }
    if (tpm) {
      k->quota.tpm = static_cast<std::uint64_t>(tpm->value_or(0));
    }
    // Revoking releases the allocation back to the group's pool (the audit entry keeps it).
    if (k->status == KeyStatus::kRevoked) {
      k->allocation_micros.reset();
    }
    if (*k == before) {
      return AdminReply{200, key_json(*k)};
    }
    k->updated_at_ms = change.now_ms;
    if (auto r = check_allocations(change, *g); !r) {
      return r.error();
    }
    if (k->allocation_micros && g->budget &&
        (!before.allocation_micros || *k->allocation_micros < *before.allocation_micros)) {
      auto spent = consumed(*g->budget, store::Dimension::kKey, before.name);
      if (!spent) {
        return spent.error();
      }
      if (*k->allocation_micros < *spent) {
        return conflict("below_consumed",
                        fmt::format("key {} has spent {} in this period: its allocation cannot "
                                    "be set to {}",
                                    k->name, money(*spent), money(*k->allocation_micros)));
      }
    }
    change.put(*k);
    const char* action = k->status == before.status          ? "key.update"
                         : k->status == KeyStatus::kRevoked  ? "key.revoke"
                         : k->status == KeyStatus::kDisabled ? "key.disable"
                                                             : "key.enable";
    change.audit(action, "key", k->id, audit_text(key_json(before)), audit_text(key_json(*k)));
    return AdminReply{200, key_json(*k)};
  });
}

Result<AdminReply> AdminService::revoke_key(std::string_view id, const AdminCaller& caller) {
  static const json::value kRevoke = json::object{{"status", "revoked"}};
  return update_key(id, kRevoke, caller);
}

Result<AdminReply> AdminService::rotate_key(std::string_view id, const AdminCaller& caller) {
  return mutate(caller, [&](Change& change) -> Result<AdminReply> {
    auto found = change.live_key(id);
    if (!found) {
      return found.error();
    }
    ApiKey* k = *found;
    const ApiKey before = *k;
    const std::string secret = generate_key_secret();
    k->prefix = key_prefix(secret);
    k->sha256_hex = config::sha256_hex(secret);
    k->updated_at_ms = change.now_ms;
    change.put(*k);
    change.audit("key.rotate", "key", k->id, audit_text(key_json(before)),
                 audit_text(key_json(*k)));
    return with_secret(200, key_json(*k), secret);
  });
}

Result<AdminReply> AdminService::list_audit(const store::AuditQuery& query) {
  auto entries = store_.list_audit(query);
  if (!entries) {
    return store_failure(entries.error());
  }
  json::array out;
  for (const store::AuditEntry& a : *entries) {
    json::object o;
    o["id"] = a.id;
    o["at"] = format_rfc3339_ms(a.at_ms);
    o["actor"] = a.actor;
    o["action"] = a.action;
    o["object_type"] = a.object_type;
    o["object_id"] = a.object_id;
    boost::system::error_code ec;
    o["before"] = a.before_json.empty() ? json::value(nullptr) : json::parse(a.before_json, ec);
    o["after"] = a.after_json.empty() ? json::value(nullptr) : json::parse(a.after_json, ec);
    o["request_id"] = a.request_id;
    out.push_back(std::move(o));
  }
  return AdminReply{200, json::object{{"entries", std::move(out)}}};
}

}  // namespace sluice::tenancy
