#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>

#include "store/migrations.h"
#include "store/store.h"

struct pg_conn;
struct pg_result;

namespace sluice::store {

// The fleet store: PostgreSQL through libpq, one connection, statements parameterised and
// prepared once per connection, one transaction per insert_usage batch.
//
// Failure behaviour, so a dead or unreachable server costs seconds, not minutes:
// - connecting gives up after Options::connect_timeout (libpq connect_timeout; a URL that sets
//   its own connect_timeout wins);
// - each statement is bounded by Options::statement_timeout on the server (SET
//   statement_timeout) and by the same time plus a grace period on the client, which is what
//   ends a call to a server that no longer answers at all; TCP keepalives and
//   tcp_user_timeout notice a peer that vanished;
// - a connection found broken (server restarted, network cut) is replaced by a new one on the
//   next call, and a call that fails because an idle connection had broken is tried once more
//   on a fresh connection (safe for insert_usage: replays are idempotent).
// Errors: kUnavailable when the server cannot be reached or timed out (retry later), kInternal
// for SQL errors (with SQLSTATE). The connection URL may hold a password: no message or log
// line ever contains it.
// Blocking; one thread at a time (Store's contract).
class PostgresStore final : public Store {
 public:
  struct Options {
    std::chrono::seconds connect_timeout{3};
    std::chrono::milliseconds statement_timeout{5000};
    // migrate() runs DDL that may legitimately take longer than an insert.
    std::chrono::milliseconds migration_timeout{60000};
  };

  // Checks that `url` parses as a libpq connection URI or keyword string; does not connect
  // (the first call does), so a gateway can start while the database is down.
  static Result<std::unique_ptr<PostgresStore>> open(std::string url, Options options);
  static Result<std::unique_ptr<PostgresStore>> open(std::string url) {
    return open(std::move(url), Options{});
  }
  ~PostgresStore() override;

  std::string_view kind() const override { return "postgres"; }
  // The migrations of sql/postgres through store/migration_runner.h, under an advisory lock so
  // two gateways starting together apply each migration once.
  Result<void> migrate() override;
  Result<void> ping() override;
  Result<void> insert_usage(std::span<const UsageRecord> records) override;
  Result<std::vector<UsageRow>> query_usage(const UsageQuery& query) override;
  Result<std::optional<UsageRecord>> find_usage(std::string_view request_id) override;
  Result<std::uint64_t> count_usage() override;
  Result<void> export_usage(std::int64_t from_ms, std::int64_t to_ms,
                            const std::function<bool(const UsageRecord&)>& each) override;
  Result<std::vector<SpendRow>> spend_since(std::int64_t from_ms) override;
  Result<TenancyState> load_tenancy() override;
  Result<std::uint64_t> tenancy_revision() override;
  Result<std::uint64_t> commit_tenancy(const TenancyCommit& commit) override;
  Result<std::optional<IdempotentReply>> find_idempotent(std::string_view key,
                                                         std::int64_t now_ms) override;
  Result<void> purge_idempotent(std::int64_t now_ms) override;
  Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) override;

  // Runs statements without parameters (tests, maintenance).
  Result<void> execute_for_test(const std::string& sql);
  // Whether a connection is open now (tests of reconnection).
  bool connected_for_test() const { return conn_ != nullptr; }
  // Applies `list` instead of sql/postgres's migrations (tests of the runner on this dialect).
  Result<void> migrate_with_for_test(std::span<const Migration> list) { return migrate(list); }

 private:
  struct ClearResult {
    void operator()(pg_result* r) const;
  };
  using PgResult = std::unique_ptr<pg_result, ClearResult>;
  struct Params;  // text parameters of one statement
  class MigrationAccess;
  class TenancyAccess;

  Result<void> migrate(std::span<const Migration> list);

  PostgresStore(std::string url, Options options) : url_(std::move(url)), options_(options) {}

  Result<void> connect();
  void disconnect();
  // Runs `call` on a live connection (connecting first when there is none); when it fails
  // because a connection that was already open had broken, reconnects and runs it once more.
  template <class T, class Call>
  Result<T> with_connection(Call&& call);
  // Sends one statement and waits for its result until `timeout` has passed (then the
  // connection is dropped). `name` set: a prepared statement; else `sql`, which may hold
  // several statements when there are no parameters.
  Result<PgResult> run(const char* name, const std::string& sql, Params* params,
                       std::chrono::milliseconds timeout);
  Result<PgResult> run(const std::string& sql, Params* params = nullptr) {
    return run(nullptr, sql, params, statement_deadline());
  }
  Result<void> prepare_statements();
  // Runs `body` between `begin` and COMMIT on a live connection, rolling back when it fails.
  template <class T, class Body>
  Result<T> in_transaction(const char* begin, Body&& body);
  std::chrono::milliseconds statement_deadline() const;

  std::string url_;
  Options options_;
  pg_conn* conn_ = nullptr;
  bool prepared_ = false;  // this connection has the statements below prepared
};

}  // namespace sluice::store
