#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"
#include "store/migrations.h"
#include "store/tenancy.h"

namespace sluice::store {

// The tenancy tables' statements and row mapping, written once for both backends. A backend
// supplies a TenancySql (run one statement, rows back as text) and the transaction around the
// calls below; everything else (columns, JSON lists, the revision check) lives here.

using TenancyValue = std::variant<std::monostate, std::int64_t, std::string>;  // NULL, int, text
using TenancyRow = std::vector<std::optional<std::string>>;  // one column each, NULL = nullopt

class TenancySql {
 public:
  virtual ~TenancySql() = default;
  virtual Dialect dialect() const = 0;
  // Runs one statement with `?` placeholders (PostgreSQL's backend numbers them $1, $2, ...);
  // integers come back as decimal text, PostgreSQL booleans as "t" / "f".
  virtual Result<std::vector<TenancyRow>> query(const std::string& sql,
                                                const std::vector<TenancyValue>& params) = 0;
};

// Each reads or writes inside a transaction the caller opened: load_tenancy_in in one that
// sees a single snapshot, commit_tenancy_in in one that holds the write lock (SQLite: BEGIN
// IMMEDIATE; PostgreSQL: the revision row is locked FOR UPDATE here). On an error the caller
// rolls back.
Result<TenancyState> load_tenancy_in(TenancySql& sql);
Result<std::uint64_t> tenancy_revision_in(TenancySql& sql);
Result<std::uint64_t> commit_tenancy_in(TenancySql& sql, const TenancyCommit& commit,
                                        std::int64_t now_ms);
Result<std::optional<IdempotentReply>> find_idempotent_in(TenancySql& sql, std::string_view key,
                                                          std::int64_t now_ms);
Result<void> purge_idempotent_in(TenancySql& sql, std::int64_t now_ms);
Result<std::vector<AuditEntry>> list_audit_in(TenancySql& sql, const AuditQuery& query);

// The error commit_tenancy returns when the revision moved or the idempotency key is taken.
Error tenancy_conflict();
bool is_tenancy_conflict(const Error& e);

// Stored answers to Idempotency-Key requests answer for this long; older ones are never read
// again and are deleted by purge_idempotent_in and by the next commit that stores an answer.
inline constexpr std::int64_t kIdempotencyRetentionMs = 24LL * 3600 * 1000;

// JSON array of strings <-> vector (allowed_aliases columns).
std::string encode_string_list(const std::vector<std::string>& list);
Result<std::vector<std::string>> decode_string_list(std::string_view json);

}  // namespace sluice::store
