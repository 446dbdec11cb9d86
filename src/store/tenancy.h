#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::store {

// The tenancy tables (key groups, API keys, audit, idempotency) as the store reads and writes
// them. Rules (allocation sums, scopes, transitions) are checked above the store, against a
// loaded TenancyState, and committed with an expected revision: a commit whose revision moved
// meanwhile fails with kConflict and is re-checked. Every change bumps the one revision, which
// is also how instances notice a change cheaply (tenancy_revision()).

// An amount cap. Amounts are integer micro-units of the price catalogue's currency.
enum class BudgetPeriod : std::uint8_t {
  kMonthly,     // resets at the start of each calendar month in `time_zone`
  kCumulative,  // never resets: spend since the budget's start
};
enum class BudgetMode : std::uint8_t {
  kHard,      // at or over the cap: new requests refused at entry (fail closed)
  kAdvisory,  // never refuses: events at the thresholds (log, webhook)
};

struct Budget {
  std::int64_t amount_micros = 0;  // > 0
  BudgetPeriod period = BudgetPeriod::kMonthly;
  BudgetMode mode = BudgetMode::kHard;
  std::string time_zone = "UTC";  // IANA name; monthly budgets only
  std::int64_t starts_at_ms = 0;  // cumulative: spend is counted from here

  bool operator==(const Budget&) const = default;
};

// Rate quotas (0 = none). Independent of the amount: raising one never grants the other.
struct RateQuota {
  std::uint64_t rpm = 0;
  std::uint64_t tpm = 0;
  std::uint32_t concurrency = 0;  // key groups only

  bool operator==(const RateQuota&) const = default;
};

struct KeyGroup {
  std::string name;         // [A-Za-z0-9._-]{1,64}; the key group of usage records and limits
  std::string description;  // free text, <= 1024 bytes
  std::optional<Budget> budget;
  RateQuota quota;
  std::vector<std::string> allowed_aliases;  // empty = every alias
  bool disabled = false;                     // every key of a disabled group is refused
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;

  bool operator==(const KeyGroup&) const = default;
};

enum class KeyStatus : std::uint8_t { kActive, kDisabled, kRevoked };

struct ApiKey {
  std::string id;          // "key_" + 16 hex; stable, never reused
  std::string name;        // unique; shown in logs and usage records
  std::string group;       // the owning key group (required)
  std::string prefix;      // the secret's first characters, shown in lists ("sk-slc-3f9a")
  std::string sha256_hex;  // of the whole secret; the secret itself is never stored
  KeyStatus status = KeyStatus::kActive;
  std::optional<std::int64_t> expires_at_ms;
  std::vector<std::string> allowed_aliases;  // empty = the group's; else within the group's
  // Exclusive allocation out of the group's budget (same period): the key spends only this,
  // and the group's pool for the other keys shrinks by it. Kept while the key is disabled.
  std::optional<std::int64_t> allocation_micros;
  RateQuota quota;  // concurrency unused
  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;

  bool operator==(const ApiKey&) const = default;
};

// Everything the data plane and the rules need, read in one transaction.
struct TenancyState {
  std::uint64_t revision = 0;
  std::vector<KeyGroup> groups;  // by name
  std::vector<ApiKey> keys;      // by name
};

struct AuditEntry {
  std::int64_t id = 0;  // assigned by the store
  std::int64_t at_ms = 0;
  std::string actor;        // who: "admin" (the admin credential), or the CLI user's label
  std::string action;       // "group.create", "key.update", "key.revoke", ...
  std::string object_type;  // "group", "key"
  std::string object_id;    // group name or key id
  std::string before_json;  // "" when created
  std::string after_json;   // "" when deleted
  std::string request_id;   // the admin request's id

  bool operator==(const AuditEntry&) const = default;
};

struct AuditQuery {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = INT64_MAX;
  std::string object_type;    // "" = any
  std::string object_id;      // "" = any
  std::uint32_t limit = 100;  // newest first
};

// The stored answer to a request made with an Idempotency-Key: a retry with the same key gets
// the same answer without doing the change again.
struct IdempotentReply {
  std::string key;             // the Idempotency-Key header value (<= 255 bytes)
  std::string request_sha256;  // method, path and body; a reuse with another request is 422
  int status = 0;
  std::string body;
  std::int64_t created_at_ms = 0;
};

// One atomic change: all of it is stored, or none.
struct TenancyCommit {
  std::uint64_t expected_revision = 0;
  std::vector<KeyGroup> put_groups;            // insert or replace by name
  std::vector<std::string> delete_groups;      // by name (must have no keys left)
  std::vector<ApiKey> put_keys;                // insert or replace by id
  std::vector<AuditEntry> audit;               // appended
  std::optional<IdempotentReply> idempotency;  // stored with the change
};

std::string_view to_string(BudgetPeriod p);
std::string_view to_string(BudgetMode m);
std::string_view to_string(KeyStatus s);
std::optional<BudgetPeriod> parse_budget_period(std::string_view text);
std::optional<BudgetMode> parse_budget_mode(std::string_view text);
std::optional<KeyStatus> parse_key_status(std::string_view text);

}  // namespace sluice::store
