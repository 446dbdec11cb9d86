#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/tenancy.h"
#include "store/usage_record.h"

namespace sluice::config {
struct StoreSettings;
}

namespace sluice::store {

// Dimensions usage can be grouped and filtered by.
enum class Dimension : std::uint8_t {
  kKey,
  kKeyGroup,
  kTenant,
  kFeature,
  kAlias,
  kProvider,
  kModel,
  kOutcome,
  kDay,   // UTC calendar day of started_at, "2026-11-30"
  kHour,  // "2026-11-30T14"
};

std::string_view to_string(Dimension d);
std::optional<Dimension> parse_dimension(std::string_view name);

struct UsageQuery {
  std::int64_t from_ms = 0;         // started_at_ms >= from_ms
  std::int64_t to_ms = INT64_MAX;   // started_at_ms < to_ms
  std::vector<Dimension> group_by;  // empty = one total row
  // Exact-match filters on dimensions (not kDay/kHour): all must match.
  std::vector<std::pair<Dimension, std::string>> where;
  std::uint32_t limit = 1000;  // rows, ordered by cost then requests, descending
};

struct UsageRow {
  std::vector<std::string> group;  // one value per UsageQuery::group_by entry, same order
  std::uint64_t requests = 0;
  std::uint64_t failed = 0;  // outcome upstream_error or midstream_error
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::uint64_t reasoning_tokens = 0;
  std::int64_t cost_micros = 0;   // priced records only
  std::uint64_t unaccounted = 0;  // records without a price (their cost is unknown)
  // Answers served without an upstream call: the tokens and priced cost they avoided.
  std::uint64_t saved_input_tokens = 0;
  std::uint64_t saved_output_tokens = 0;
  std::int64_t saved_cost_micros = 0;
};

// Spend of one (key group, key) over a period: priced records' cost in micro-units. The key is
// its immutable id (UsageRecord::key_id), so a rename changes nothing in the money.
struct SpendRow {
  std::string key_group;
  std::string key_id;
  std::int64_t cost_micros = 0;
};

// The durable store: usage ledger now; keys, key groups, allocations, budgets, prices and
// audit (admission issue) next to it. Every call blocks and may take as long as the database
// does: call only from background threads (the usage writer, the admin listener's store
// thread), never from a worker. One Store object is used by one thread at a time.
class Store {
 public:
  virtual ~Store() = default;

  virtual std::string_view kind() const = 0;  // "sqlite", "postgres"
  // Applies the numbered migrations in sql/ not yet applied (idempotent; at start-up).
  virtual Result<void> migrate() = 0;
  // Cheap liveness check (reconnects when the connection was lost).
  virtual Result<void> ping() = 0;
  // Inserts all records in one transaction; a record whose record_id is already stored is
  // skipped (replays are idempotent). On error nothing of the batch is stored. kBadRequest:
  // a record holds what this store cannot keep (a number out of its range, a constraint it
  // breaks); the same records fail again, the others may be stored without them.
  virtual Result<void> insert_usage(std::span<const UsageRecord> records) = 0;
  virtual Result<std::vector<UsageRow>> query_usage(const UsageQuery& query) = 0;
  // The full record (attempts included) of one request id; the newest if the id was reused.
  virtual Result<std::optional<UsageRecord>> find_usage(std::string_view request_id) = 0;
  virtual Result<std::uint64_t> count_usage() = 0;
  // Every record started in [from_ms, to_ms), full, oldest first (SQLite: by started minute,
  // within a minute in the order stored), until `each` returns false. `sluice usage export`.
  virtual Result<void> export_usage(std::int64_t from_ms, std::int64_t to_ms,
                                    const std::function<bool(const UsageRecord&)>& each) = 0;
  // Spend per key group and key id of the records started at or after `from_ms` (budgets). The
  // SQL stores read a per-quarter-hour rollup kept by insert_usage, so the cost does not grow
  // with the ledger; this default sums every record through export_usage.
  virtual Result<std::vector<SpendRow>> spend_since(std::int64_t from_ms);

  // Tenancy (store/tenancy.h). The whole state in one consistent read.
  virtual Result<TenancyState> load_tenancy() = 0;
  // The current revision alone: instances poll it and reload only when it moved.
  virtual Result<std::uint64_t> tenancy_revision() = 0;
  // Applies `commit` in one transaction when the stored revision still equals
  // commit.expected_revision, and returns the new revision; otherwise an Error whose kind is
  // kUnavailable with message "conflict" (re-read and re-check), and nothing is stored. A
  // commit carrying an idempotency key already stored fails the same way.
  virtual Result<std::uint64_t> commit_tenancy(const TenancyCommit& commit) = 0;
  // The answer stored for `key`, unless it is older than kIdempotencyRetentionMs at `now_ms`
  // (unix ms): an expired answer is never replayed, whether or not it was purged yet.
  virtual Result<std::optional<IdempotentReply>> find_idempotent(std::string_view key,
                                                                 std::int64_t now_ms) = 0;
  // Deletes the answers expired at `now_ms` (commits that store an answer do it too).
  virtual Result<void> purge_idempotent(std::int64_t now_ms) = 0;
  virtual Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) = 0;
};

// Whether opening a SQLite store may create its database file.
enum class OpenMode : std::uint8_t {
  kCreate,    // the gateway: a missing file is created (empty, owner-only)
  kExisting,  // readers (`sluice usage`): a missing file is kNotFound, so a mistyped path
              // never becomes an empty new database
};

// Opens the configured store (none -> null): SqliteStore or PostgresStore (checks the URL,
// connects on the first call, so this succeeds while the database is down). Does not migrate.
// Errors name the path, never the PostgreSQL URL.
Result<std::unique_ptr<Store>> open_store(const config::StoreSettings& settings,
                                          OpenMode mode = OpenMode::kCreate);

}  // namespace sluice::store
