#include "store/tenancy_sql.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace sluice::store {
namespace {

constexpr std::string_view kGroupColumns =
    "name, description, budget_amount_micros, budget_period, budget_mode, budget_time_zone, "
    "budget_starts_at_ms, rpm, tpm, concurrency, allowed_aliases, disabled, created_at_ms, "
    "updated_at_ms";
constexpr int kGroupColumnCount = 14;
constexpr std::string_view kKeyColumns =
    "id, name, group_name, prefix, sha256_hex, status, expires_at_ms, allowed_aliases, "
    "allocation_micros, rpm, tpm, created_at_ms, updated_at_ms";
constexpr int kKeyColumnCount = 13;
constexpr std::string_view kAuditColumns =
    "id, at_ms, actor, action, object_type, object_id, before_json, after_json, request_id";

// "?, ?, ?" for `n` columns.
std::string placeholders(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += i == 0 ? "?" : ", ?";
  }
  return out;
}

// "INSERT ... ON CONFLICT (key) DO UPDATE SET every other column" (SQLite 3.24+, PostgreSQL).
std::string upsert_sql(std::string_view table, std::string_view columns, int count,
                       std::string_view key) {
  std::string set;
  std::size_t start = 0;
  while (start < columns.size()) {
    std::size_t end = columns.find(',', start);
    if (end == std::string_view::npos) {
      end = columns.size();
    }
    std::string_view column = columns.substr(start, end - start);
    while (!column.empty() && column.front() == ' ') {
      column.remove_prefix(1);
    }
    if (column != key) {
      set += fmt::format("{}{} = excluded.{}", set.empty() ? "" : ", ", column, column);
    }
    start = end + 1;
  }
  return fmt::format("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {}", table,
                     columns, placeholders(count), key, set);
}

std::int64_t clamp_int64(std::uint64_t v) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(
      v, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
}

// Reads one result row's columns in order, remembering the first value that does not parse.
class RowReader {
 public:
  explicit RowReader(const TenancyRow& row) : row_(row) {}

  std::string text() {
    const auto& v = next();
    return v ? *v : std::string();
  }
  std::optional<std::int64_t> nullable_integer() {
    const auto& v = next();
    if (!v) {
      return std::nullopt;
    }
    std::int64_t out = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || end != v->data() + v->size()) {
      fail(fmt::format("column {} is not an integer", index_ - 1));
    }
    return out;
  }
  std::int64_t integer() { return nullable_integer().value_or(0); }
  bool boolean() {
    const auto& v = next();
    return v && (*v == "1" || *v == "t" || *v == "true");
  }
  std::vector<std::string> list() {
    auto decoded = decode_string_list(text());
    if (!decoded) {
      fail(decoded.error().message());
      return {};
    }
    return std::move(*decoded);
  }
  void fail(std::string message) {
    if (!error_) {
      error_ = Error(ErrorKind::kInternal, "store: tenancy row: " + std::move(message));
    }
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  const std::optional<std::string>& next() {
    static const std::optional<std::string> kMissing;
    if (index_ >= row_.size()) {
      fail("too few columns");
      ++index_;
      return kMissing;
    }
    return row_[index_++];
  }

  const TenancyRow& row_;
  std::size_t index_ = 0;
  std::optional<Error> error_;
};

std::vector<TenancyValue> group_values(const KeyGroup& g) {
  const Budget budget = g.budget.value_or(Budget{});
  return {
      g.name,
      g.description,
      g.budget ? TenancyValue(g.budget->amount_micros) : TenancyValue(),
      std::string(to_string(budget.period)),
      std::string(to_string(budget.mode)),
      budget.time_zone,
      budget.starts_at_ms,
      clamp_int64(g.quota.rpm),
      clamp_int64(g.quota.tpm),
      static_cast<std::int64_t>(g.quota.concurrency),
      encode_string_list(g.allowed_aliases),
      static_cast<std::int64_t>(g.disabled ? 1 : 0),
      g.created_at_ms,
      g.updated_at_ms,
  };
}

Result<KeyGroup> read_group(const TenancyRow& row) {
  RowReader r(row);
  KeyGroup g;
  g.name = r.text();
  g.description = r.text();
  const auto amount = r.nullable_integer();
  Budget budget;
  const std::string period = r.text();
  const std::string mode = r.text();
  budget.time_zone = r.text();
  budget.starts_at_ms = r.integer();
  if (amount) {
    budget.amount_micros = *amount;
    const auto p = parse_budget_period(period);
    const auto m = parse_budget_mode(mode);
    if (!p || !m) {
      r.fail(fmt::format("group {}: unknown budget period or mode", g.name));
    }
    budget.period = p.value_or(BudgetPeriod::kMonthly);
    budget.mode = m.value_or(BudgetMode::kHard);
    g.budget = budget;
  }
  g.quota.rpm = static_cast<std::uint64_t>(r.integer());
  g.quota.tpm = static_cast<std::uint64_t>(r.integer());
  g.quota.concurrency = static_cast<std::uint32_t>(r.integer());
  g.allowed_aliases = r.list();
  g.disabled = r.boolean();
  g.created_at_ms = r.integer();
  g.updated_at_ms = r.integer();
  if (r.error()) {
    return *r.error();
  }
  return g;
}

std::vector<TenancyValue> key_values(const ApiKey& k) {
  return {
      k.id,
      k.name,
      k.group,
      k.prefix,
      k.sha256_hex,
      std::string(to_string(k.status)),
      k.expires_at_ms ? TenancyValue(*k.expires_at_ms) : TenancyValue(),
      encode_string_list(k.allowed_aliases),
      k.allocation_micros ? TenancyValue(*k.allocation_micros) : TenancyValue(),
      clamp_int64(k.quota.rpm),
      clamp_int64(k.quota.tpm),
      k.created_at_ms,
      k.updated_at_ms,
  };
}

Result<ApiKey> read_key(const TenancyRow& row) {
  RowReader r(row);
  ApiKey k;
  k.id = r.text();
  k.name = r.text();
  k.group = r.text();
  k.prefix = r.text();
  k.sha256_hex = r.text();
  const std::string status = r.text();
  const auto parsed = parse_key_status(status);
  if (!parsed) {
    r.fail(fmt::format("key {}: unknown status '{}'", k.id, status));
  }
  k.status = parsed.value_or(KeyStatus::kDisabled);
  k.expires_at_ms = r.nullable_integer();
  k.allowed_aliases = r.list();
  k.allocation_micros = r.nullable_integer();
  k.quota.rpm = static_cast<std::uint64_t>(r.integer());
  k.quota.tpm = static_cast<std::uint64_t>(r.integer());
  k.created_at_ms = r.integer();
  k.updated_at_ms = r.integer();
  if (r.error()) {
    return *r.error();
  }
  return k;
}

Result<AuditEntry> read_audit(const TenancyRow& row) {
  RowReader r(row);
  AuditEntry a;
  a.id = r.integer();
  a.at_ms = r.integer();
  a.actor = r.text();
  a.action = r.text();
  a.object_type = r.text();
  a.object_id = r.text();
  a.before_json = r.text();
  a.after_json = r.text();
  a.request_id = r.text();
  if (r.error()) {
    return *r.error();
  }
  return a;
}

// Runs a statement that returns no rows the caller needs.
Result<void> execute(TenancySql& sql, const std::string& text,
                     const std::vector<TenancyValue>& params) {
  auto r = sql.query(text, params);
  if (!r) {
    return r.error();
  }
  return {};
}

template <class T>
Result<std::vector<T>> read_all(TenancySql& sql, const std::string& text,
                                const std::vector<TenancyValue>& params,
                                Result<T> (*read)(const TenancyRow&)) {
  auto rows = sql.query(text, params);
  if (!rows) {
    return rows.error();
  }
  std::vector<T> out;
  out.reserve(rows->size());
  for (const TenancyRow& row : *rows) {
    auto item = read(row);
    if (!item) {
      return item.error();
    }
    out.push_back(std::move(*item));
  }
  return out;
}

}  // namespace

Error tenancy_conflict() { return Error(ErrorKind::kUnavailable, "conflict"); }

bool is_tenancy_conflict(const Error& e) {
  return e.kind() == ErrorKind::kUnavailable && e.message() == "conflict";
}

std::string encode_string_list(const std::vector<std::string>& list) {
  boost::json::array array;
  for (const std::string& s : list) {
    array.emplace_back(s);
  }
  return boost::json::serialize(array);
}

Result<std::vector<std::string>> decode_string_list(std::string_view json) {
  if (json.empty()) {
    return std::vector<std::string>{};
  }
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(json, ec);
  if (ec || !v.is_array()) {
    return Error(ErrorKind::kInternal, "a stored list is not a JSON array");
  }
  std::vector<std::string> out;
  for (const auto& item : v.as_array()) {
    if (!item.is_string()) {
      return Error(ErrorKind::kInternal, "a stored list holds a non-string");
    }
    out.emplace_back(item.as_string());
  }
  return out;
}

Result<std::uint64_t> tenancy_revision_in(TenancySql& sql) {
  auto rows = sql.query("SELECT revision FROM tenancy_revision WHERE id = 1", {});
  if (!rows) {
    return rows.error();
  }
  if (rows->size() != 1) {
    return Error(ErrorKind::kInternal, "store: tenancy_revision has no row (not migrated?)");
  }
  RowReader r(rows->front());
  const std::int64_t revision = r.integer();
  if (r.error()) {
    return *r.error();
  }
  return static_cast<std::uint64_t>(revision);
}

Result<TenancyState> load_tenancy_in(TenancySql& sql) {
  TenancyState state;
  auto revision = tenancy_revision_in(sql);
  if (!revision) {
    return revision.error();
  }
  state.revision = *revision;
  auto groups = read_all<KeyGroup>(sql, fmt::format("SELECT {} FROM key_groups", kGroupColumns), {},
                                   &read_group);
  if (!groups) {
    return groups.error();
  }
  auto keys =
      read_all<ApiKey>(sql, fmt::format("SELECT {} FROM api_keys", kKeyColumns), {}, &read_key);
  if (!keys) {
    return keys.error();
  }
  // Sorted here, not by SQL: the two backends' collations order names differently.
  state.groups = std::move(*groups);
  state.keys = std::move(*keys);
  std::sort(state.groups.begin(), state.groups.end(),
            [](const KeyGroup& a, const KeyGroup& b) { return a.name < b.name; });
  std::sort(state.keys.begin(), state.keys.end(),
            [](const ApiKey& a, const ApiKey& b) { return a.name < b.name; });
  return state;
}

Result<std::uint64_t> commit_tenancy_in(TenancySql& sql, const TenancyCommit& commit,
                                        std::int64_t now_ms) {
  // PostgreSQL: the row lock serialises committers (the second waits, then sees the new
  // revision). SQLite: BEGIN IMMEDIATE already holds the database's write lock.
  auto rows = sql.query(sql.dialect() == Dialect::kPostgres
                            ? "SELECT revision FROM tenancy_revision WHERE id = 1 FOR UPDATE"
                            : "SELECT revision FROM tenancy_revision WHERE id = 1",
                        {});
  if (!rows) {
    return rows.error();
  }
  if (rows->size() != 1) {
    return Error(ErrorKind::kInternal, "store: tenancy_revision has no row (not migrated?)");
  }
  RowReader reader(rows->front());
  const auto revision = static_cast<std::uint64_t>(reader.integer());
  if (reader.error()) {
    return *reader.error();
  }
  if (revision != commit.expected_revision) {
    return tenancy_conflict();
  }
  if (commit.idempotency) {
    // Expired answers go first: an expired key is free again, not taken.
    const IdempotentReply& i = *commit.idempotency;
    if (auto r = purge_idempotent_in(sql, i.created_at_ms != 0 ? i.created_at_ms : now_ms); !r) {
      return r.error();
    }
    auto taken = sql.query("SELECT 1 FROM idempotency_keys WHERE key = ?", {i.key});
    if (!taken) {
      return taken.error();
    }
    if (!taken->empty()) {
      return tenancy_conflict();
    }
  }

  static const std::string put_group =
      upsert_sql("key_groups", kGroupColumns, kGroupColumnCount, "name");
  static const std::string put_key = upsert_sql("api_keys", kKeyColumns, kKeyColumnCount, "id");
  for (const KeyGroup& g : commit.put_groups) {
    if (auto r = execute(sql, put_group, group_values(g)); !r) {
      return Error(r.error().kind(),
                   fmt::format("storing key group {}: {}", g.name, r.error().message()));
    }
  }
  for (const ApiKey& k : commit.put_keys) {
    if (auto r = execute(sql, put_key, key_values(k)); !r) {
      return Error(r.error().kind(), fmt::format("storing key {}: {}", k.id, r.error().message()));
    }
  }
  for (const std::string& name : commit.delete_groups) {
    auto left = sql.query(
        "SELECT COUNT(*) FROM api_keys WHERE group_name = ? AND status <> 'revoked'", {name});
    if (!left) {
      return left.error();
    }
    RowReader count(left->front());
    if (count.integer() != 0) {
      return Error(ErrorKind::kBadRequest,
                   fmt::format("key group {} still has keys that are not revoked", name));
    }
    if (auto r = execute(sql, "DELETE FROM key_groups WHERE name = ?", {name}); !r) {
      return r.error();
    }
  }
  for (const AuditEntry& a : commit.audit) {
    if (auto r = execute(sql,
                         "INSERT INTO audit_log (at_ms, actor, action, object_type, object_id, "
                         "before_json, after_json, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         {a.at_ms != 0 ? a.at_ms : now_ms, a.actor, a.action, a.object_type,
                          a.object_id, a.before_json, a.after_json, a.request_id});
        !r) {
      return r.error();
    }
  }
  if (commit.idempotency) {
    const IdempotentReply& i = *commit.idempotency;
    if (auto r = execute(sql,
                         "INSERT INTO idempotency_keys (key, request_sha256, status, body, "
                         "created_at_ms) VALUES (?, ?, ?, ?, ?)",
                         {i.key, i.request_sha256, static_cast<std::int64_t>(i.status), i.body,
                          i.created_at_ms != 0 ? i.created_at_ms : now_ms});
        !r) {
      return r.error();
    }
  }
  if (auto r = execute(sql, "UPDATE tenancy_revision SET revision = revision + 1 WHERE id = 1", {});
      !r) {
    return r.error();
  }
  return revision + 1;
}

Result<std::optional<IdempotentReply>> find_idempotent_in(TenancySql& sql, std::string_view key,
                                                          std::int64_t now_ms) {
  auto rows = sql.query(
      "SELECT key, request_sha256, status, body, created_at_ms FROM idempotency_keys "
      "WHERE key = ? AND created_at_ms >= ?",
      {std::string(key), now_ms - kIdempotencyRetentionMs});
  if (!rows) {
    return rows.error();
  }
  if (rows->empty()) {
    return std::optional<IdempotentReply>();
  }
  RowReader r(rows->front());
  IdempotentReply reply;
  reply.key = r.text();
  reply.request_sha256 = r.text();
  reply.status = static_cast<int>(r.integer());
  reply.body = r.text();
  reply.created_at_ms = r.integer();
  if (r.error()) {
    return *r.error();
  }
  return std::optional<IdempotentReply>(std::move(reply));
}

Result<void> purge_idempotent_in(TenancySql& sql, std::int64_t now_ms) {
  return execute(sql, "DELETE FROM idempotency_keys WHERE created_at_ms < ?",
                 {now_ms - kIdempotencyRetentionMs});
}

Result<std::vector<AuditEntry>> list_audit_in(TenancySql& sql, const AuditQuery& query) {
  return read_all<AuditEntry>(
      sql,
      fmt::format("SELECT {} FROM audit_log WHERE at_ms >= ? AND at_ms < ? "
                  "AND (CAST(? AS TEXT) = '' OR object_type = ?) "
                  "AND (CAST(? AS TEXT) = '' OR object_id = ?) "
                  "ORDER BY id DESC LIMIT ?",
                  kAuditColumns),
      {query.from_ms, query.to_ms, query.object_type, query.object_type, query.object_id,
       query.object_id, static_cast<std::int64_t>(query.limit)},
      &read_audit);
}

}  // namespace sluice::store
