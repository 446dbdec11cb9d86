#include "store/postgres_store.h"

#include <charconv>
#include <limits>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include "store/migration_runner.h"
#include "store/migrations.h"
#include "store/tenancy_sql.h"
#include "store/usage_fields.h"
#include "store/usage_sql.h"

namespace sluice::store {

// Parameters in text format: libpq converts nothing, PostgreSQL parses each as its column type.
struct PostgresStore::Params {
  std::vector<std::string> values;
  std::vector<std::size_t> nulls;  // indexes of values sent as SQL NULL
  std::vector<const char*> pointers;

  void add(std::string v) { values.push_back(std::move(v)); }
  void add_null() {
    nulls.push_back(values.size());
    values.emplace_back();
  }
  const char* const* finish() {
    pointers.clear();
    for (const std::string& v : values) {
      pointers.push_back(v.c_str());
    }
    for (std::size_t i : nulls) {
      pointers[i] = nullptr;
    }
    return pointers.data();
  }
};

namespace {

using Clock = std::chrono::steady_clock;

// Tally entries per upsert statement (usage_spend, usage_rollup): 1000 x 18 parameters.
constexpr std::size_t kRowsPerUpsert = 1000;
constexpr char kFindUsage[] = "sluice_find_usage";
constexpr char kInsertUsage[] = "sluice_insert_usage";
// pg_advisory_xact_lock key: two gateways starting together migrate one after the other.
constexpr std::int64_t kMigrationLock = 0x736c75696365;  // "sluice"

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// libpq's messages end in a newline and may span lines; one line reads better in a log.
std::string one_line(const char* message) {
  std::string out = message != nullptr ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  for (char& c : out) {
    if (c == '\n' || c == '\t') {
      c = ' ';
    }
  }
  return out;
}

Error unavailable(std::string_view what) {
  return Error(ErrorKind::kUnavailable, fmt::format("postgres: {}", what));
}

// Text-format column parsers.
std::int64_t integer_at(const PGresult* r, int row, int col) {
  const char* v = PQgetvalue(r, row, col);
  std::int64_t out = 0;
  std::from_chars(v, v + PQgetlength(r, row, col), out);
  return out;
}

std::string text_at(const PGresult* r, int row, int col) {
  return std::string(PQgetvalue(r, row, col), PQgetlength(r, row, col));
}

// Appends one record's fields to the column arrays of the batched insert (kInsertUsage), each
// array in PostgreSQL's text form: {"text",12,t}. Text elements are quoted, with `"` and `\`
// escaped; a NUL byte, which PostgreSQL's text cannot hold (a finish reason is an upstream's
// string), becomes U+FFFD. The ledger has no NULLs. `failed_field` names a value BIGINT cannot
// hold.
struct ArrayBinder {
  std::vector<std::string>* arrays;
  std::size_t col = 0;
  std::string failed_field;

  std::string& next() {
    std::string& a = (*arrays)[col++];
    a += a.empty() ? '{' : ',';
    return a;
  }
  void text(std::string_view v) {
    std::string& a = next();
    a += '"';
    for (const char c : v) {
      if (c == '\0') {
        a += "\xEF\xBF\xBD";
        continue;
      }
      if (c == '"' || c == '\\') {
        a += '\\';
      }
      a += c;
    }
    a += '"';
  }
  void number(auto v) { fmt::format_to(std::back_inserter(next()), "{}", v); }

  void operator()(std::string_view, const std::string& v) { text(v); }
  void operator()(std::string_view, const std::int64_t& v) { number(v); }
  void operator()(std::string_view name, const std::uint64_t& v) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) &&
        failed_field.empty()) {
      failed_field = name;
    }
    number(v);
  }
  void operator()(std::string_view, const int& v) { number(v); }
  void operator()(std::string_view, const bool& v) { next() += v ? 't' : 'f'; }
  void operator()(std::string_view, const std::vector<AttemptRecord>& v) {
    text(encode_attempts(v));
  }
};

// The array type each usage field travels in (ArrayBinder's forms).
struct ArrayTypes {
  std::vector<std::string_view> types;
  void operator()(std::string_view, const std::string&) { types.push_back("text[]"); }
  void operator()(std::string_view, const std::vector<AttemptRecord>&) {
    types.push_back("text[]");
  }
  void operator()(std::string_view, const bool&) { types.push_back("boolean[]"); }
  void operator()(std::string_view, const auto&) { types.push_back("bigint[]"); }
};

// The batched insert: one array parameter per column, so one prepared statement takes any
// number of records (a VALUES list would be parsed, planned and bound anew per batch, with a
// parameter per field: most of the server's time per record). The rows actually inserted (not
// those skipped as replays) come back: what they add to usage_spend and usage_rollup.
std::string insert_usage_sql() {
  const UsageRecord blank;
  ArrayTypes types;
  visit_usage_fields(blank, types);
  std::string columns;
  std::string arrays;
  const auto& names = usage_columns();
  for (std::size_t i = 0; i < names.size(); ++i) {
    columns += fmt::format("{}{}", i > 0 ? ", " : "", names[i]);
    arrays += fmt::format("{}${}::{}", i > 0 ? ", " : "", i + 1, types.types[i]);
  }
  return fmt::format(
      "INSERT INTO usage_records ({}) SELECT * FROM unnest({}) ON CONFLICT (record_id) DO NOTHING "
      "RETURNING started_at_ms, key_group, key_name, priced, cost_micros, tenant, feature, alias, "
      "provider, model, outcome, input_tokens, output_tokens, cache_read_tokens, "
      "cache_write_tokens, reasoning_tokens, key_id, saved_input_tokens, saved_output_tokens, "
      "saved_cost_micros",
      columns, arrays);
}

// Reads a usage_records row (usage_columns() order) into a UsageRecord.
struct Reader {
  const PGresult* result;
  int col = 0;
  std::optional<Error> error;
  int row = 0;

  void operator()(std::string_view, std::string& v) { v = text_at(result, row, col++); }
  void operator()(std::string_view, std::int64_t& v) { v = integer_at(result, row, col++); }
  void operator()(std::string_view, std::uint64_t& v) {
    v = static_cast<std::uint64_t>(integer_at(result, row, col++));
  }
  void operator()(std::string_view, int& v) {
    v = static_cast<int>(integer_at(result, row, col++));
  }
  void operator()(std::string_view, bool& v) { v = *PQgetvalue(result, row, col++) == 't'; }
  void operator()(std::string_view, std::vector<AttemptRecord>& v) {
    auto decoded = decode_attempts(text_at(result, row, col++));
    if (decoded) {
      v = std::move(*decoded);
    } else if (!error) {
      error = decoded.error();
    }
  }
};

}  // namespace

void PostgresStore::ClearResult::operator()(pg_result* r) const { PQclear(r); }

Result<std::unique_ptr<PostgresStore>> PostgresStore::open(std::string url, Options options) {
  // libpq's parse errors quote the string they could not parse: never shown, it may hold a
  // password.
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &error);
  PQfreemem(error);
  if (parsed == nullptr) {
    return Error(ErrorKind::kBadRequest,
                 "postgres: the connection URL does not parse (value not shown)");
  }
  PQconninfoFree(parsed);
  return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(url), options));
}

PostgresStore::~PostgresStore() { disconnect(); }

void PostgresStore::disconnect() {
  if (conn_ != nullptr) {
    PQfinish(conn_);
    conn_ = nullptr;
  }
  prepared_ = false;
}

std::chrono::milliseconds PostgresStore::statement_deadline() const {
  // The server's statement_timeout should end a slow statement first, with a clear error; the
  // client's deadline is for a server that does not answer at all.
  return options_.statement_timeout + std::chrono::milliseconds(2000);
}

Result<void> PostgresStore::connect() {
  disconnect();
  const std::string connect_timeout = std::to_string(options_.connect_timeout.count());
  const std::string user_timeout =
      std::to_string(std::chrono::milliseconds(statement_deadline()).count());
  // Defaults first, then the URL as dbname: libpq keeps the last value of a repeated keyword,
  // so whatever the URL sets wins (https://www.postgresql.org/docs/15/libpq-connect.html).
  const char* const keywords[] = {"connect_timeout",
                                  "application_name",
                                  "keepalives",
                                  "keepalives_idle",
                                  "keepalives_interval",
                                  "keepalives_count",
                                  "tcp_user_timeout",
                                  "dbname",
                                  nullptr};
  const char* const values[] = {connect_timeout.c_str(), "sluice",     "1",    "5", "2", "3",
                                user_timeout.c_str(),    url_.c_str(), nullptr};
  conn_ = PQconnectdbParams(keywords, values, 1);
  if (conn_ == nullptr) {
    return unavailable("out of memory connecting");
  }
  if (PQstatus(conn_) != CONNECTION_OK) {
    Error e = unavailable(fmt::format("cannot connect: {}", one_line(PQerrorMessage(conn_))));
    disconnect();
    return e;
  }
  // Bound every statement on the server too; `SET` keeps it for the session.
  auto set =
      run(fmt::format("SET statement_timeout = {}; SET lock_timeout = {}",
                      options_.statement_timeout.count(), options_.statement_timeout.count()));
  if (!set) {
    disconnect();
    return set.error();
  }
  return {};
}

Result<PostgresStore::PgResult> PostgresStore::run(const char* name, const std::string& sql,
                                                   Params* params,
                                                   std::chrono::milliseconds timeout) {
  if (conn_ == nullptr) {
    return unavailable("not connected");
  }
  const auto deadline = Clock::now() + timeout;
  Params* p = params;
  const int n = p != nullptr ? static_cast<int>(p->values.size()) : 0;
  const char* const* values = p != nullptr ? p->finish() : nullptr;
  const int sent =
      name != nullptr ? PQsendQueryPrepared(conn_, name, n, values, nullptr, nullptr, 0)
      : n > 0 ? PQsendQueryParams(conn_, sql.c_str(), n, nullptr, values, nullptr, nullptr, 0)
              : PQsendQuery(conn_, sql.c_str());
  if (sent != 1) {
    return unavailable(fmt::format("cannot send: {}", one_line(PQerrorMessage(conn_))));
  }
  // Wait for the whole answer without blocking past the deadline.
  while (true) {
    const int flushed = PQflush(conn_);
    if (flushed < 0) {
      return unavailable(fmt::format("cannot send: {}", one_line(PQerrorMessage(conn_))));
    }
    if (flushed == 0 && !PQisBusy(conn_)) {
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      disconnect();
      return unavailable(
          fmt::format("no answer within {} ms; connection dropped", timeout.count()));
    }
    pollfd fd{PQsocket(conn_), static_cast<short>(POLLIN | (flushed == 1 ? POLLOUT : 0)), 0};
    if (::poll(&fd, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      return unavailable("poll failed");
    }
    if (PQconsumeInput(conn_) != 1) {
      return unavailable(fmt::format("connection lost: {}", one_line(PQerrorMessage(conn_))));
    }
  }
  // Several statements in one string give several results; the first error wins, else the
  // last result (the one callers read).
  PgResult last;
  std::optional<Error> failed;
  while (PGresult* r = PQgetResult(conn_)) {
    PgResult result(r);
    const ExecStatusType status = PQresultStatus(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && !failed) {
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      const bool lost = PQstatus(conn_) == CONNECTION_BAD;
      // The primary message only: DETAIL may quote a whole failing row.
      const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
      // Classes 22 (data exception) and 23 (integrity constraint violation): the statement's
      // data is refused, whatever the server's state; it would be again.
      const bool data = state != nullptr && (std::string_view(state).starts_with("22") ||
                                             std::string_view(state).starts_with("23"));
      failed = Error(lost   ? ErrorKind::kUnavailable
                     : data ? ErrorKind::kBadRequest
                            : ErrorKind::kInternal,
                     fmt::format("postgres: {}{}{}",
                                 one_line(primary != nullptr ? primary : PQresultErrorMessage(r)),
                                 state != nullptr ? " (SQLSTATE " : "",
                                 state != nullptr ? std::string(state) + ")" : ""));
    }
    last = std::move(result);
  }
  if (failed) {
    return *failed;
  }
  if (!last) {
    return unavailable(fmt::format("no result: {}", one_line(PQerrorMessage(conn_))));
  }
  return last;
}

template <class T, class Call>
Result<T> PostgresStore::with_connection(Call&& call) {
  bool fresh = false;
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
    if (auto c = connect(); !c) {
      return c.error();
    }
    fresh = true;
  }
  Result<T> result = call();
  if (result || fresh || conn_ == nullptr || PQstatus(conn_) != CONNECTION_BAD) {
    // Succeeded, failed on a new connection, or timed out (dropped: retrying would double the
    // wait), or an SQL error on a healthy connection.
    if (!result && conn_ != nullptr && PQstatus(conn_) == CONNECTION_BAD) {
      disconnect();
    }
    return result;
  }
  // An idle connection had broken (server restarted, network cut): once more, afresh.
  if (auto c = connect(); !c) {
    return c.error();
  }
  return call();
}

Result<void> PostgresStore::prepare_statements() {
  if (prepared_) {
    return {};
  }
  static const std::string find_sql = usage_find_sql(Dialect::kPostgres);
  static const std::string insert_sql = insert_usage_sql();
  for (const auto& [name, sql] : {std::pair{kFindUsage, &find_sql}, {kInsertUsage, &insert_sql}}) {
    if (auto r = run(fmt::format("PREPARE {} AS {}", name, *sql)); !r) {
      return r.error();
    }
  }
  prepared_ = true;
  return {};
}

Result<void> PostgresStore::execute_for_test(const std::string& sql) {
  return with_connection<void>([&]() -> Result<void> {
    auto r = run(sql);
    if (!r) {
      return r.error();
    }
    return {};
  });
}

Result<void> PostgresStore::ping() {
  return with_connection<void>([&]() -> Result<void> {
    auto r = run("SELECT 1");
    if (!r) {
      return r.error();
    }
    return {};
  });
}

// The migration runner's transaction on this connection: a transaction-scoped advisory lock
// makes two gateways starting together migrate one after the other; each statement may take
// the migration timeout (DDL may legitimately take longer than an insert).
class PostgresStore::MigrationAccess final : public MigrationSession {
 public:
  explicit MigrationAccess(PostgresStore& store) : store_(store) {}

  Dialect dialect() const override { return Dialect::kPostgres; }

  Result<void> begin() override {
    if (auto r = store_.run("BEGIN"); !r) {
      return r.error();
    }
    if (auto r =
            step(fmt::format("SET LOCAL statement_timeout = {}; SELECT pg_advisory_xact_lock({})",
                             store_.options_.migration_timeout.count(), kMigrationLock));
        !r) {
      rollback();
      return r;
    }
    return {};
  }
  Result<void> commit() override {
    auto r = store_.run("COMMIT");
    if (!r) {
      return r.error();
    }
    return {};
  }
  void rollback() override {
    if (store_.conn_ != nullptr) {
      (void)store_.run("ROLLBACK");
    }
  }
  Result<void> execute(std::string_view sql) override { return step(std::string(sql)); }
  Result<std::vector<std::int64_t>> query_integers(std::string_view sql) override {
    auto r = store_.run(nullptr, std::string(sql), nullptr, timeout());
    if (!r) {
      return r.error();
    }
    std::vector<std::int64_t> out;
    for (int i = 0; i < PQntuples(r->get()); ++i) {
      out.push_back(integer_at(r->get(), i, 0));
    }
    return out;
  }

 private:
  std::chrono::milliseconds timeout() const {
    return store_.options_.migration_timeout + std::chrono::milliseconds(2000);
  }
  Result<void> step(const std::string& sql) {
    auto r = store_.run(nullptr, sql, nullptr, timeout());
    if (!r) {
      return r.error();
    }
    return {};
  }

  PostgresStore& store_;
};

Result<void> PostgresStore::migrate(std::span<const Migration> list) {
  return with_connection<void>([&]() -> Result<void> {
    MigrationAccess access(*this);
    if (auto r = run_migrations(access, list, now_ms()); !r) {
      return r;
    }
    // The schema may have changed under statements prepared earlier.
    if (prepared_) {
      prepared_ = false;
      (void)run("DEALLOCATE ALL");
    }
    return {};
  });
}

Result<void> PostgresStore::migrate() { return migrate(migrations(Dialect::kPostgres)); }

Result<void> PostgresStore::insert_usage(std::span<const UsageRecord> records) {
  if (records.empty()) {
    return {};
  }
  return with_connection<void>([&]() -> Result<void> {
    if (auto r = prepare_statements(); !r) {
      return r;
    }
    if (auto r = run("BEGIN"); !r) {
      return r.error();
    }
    auto body = [&]() -> Result<void> {
      SpendTally spend;
      RollupTally rollup;
      Params p;
      p.values.resize(usage_columns().size());
      for (std::string& column : p.values) {
        column.reserve(records.size() * 16);
      }
      ArrayBinder binder{&p.values, 0, {}};
      for (const UsageRecord& record : records) {
        binder.col = 0;
        visit_usage_fields(record, binder);
        if (!binder.failed_field.empty()) {
          return Error(ErrorKind::kBadRequest,
                       fmt::format("postgres: record {}: {} is out of range for BIGINT",
                                   record.record_id, binder.failed_field));
        }
      }
      for (std::string& column : p.values) {
        column += '}';
      }
      {
        auto r = run(kInsertUsage, {}, &p, statement_deadline());
        if (!r) {
          return Error(r.error().kind(),
                       fmt::format("{} (batch of {} records from {})", r.error().message(),
                                   records.size(), records.front().record_id));
        }
        const PGresult* res = r->get();
        for (int row = 0; row < PQntuples(res); ++row) {
          UsageRecord added;
          added.started_at_ms = integer_at(res, row, 0);
          added.key_group = text_at(res, row, 1);
          added.key_name = text_at(res, row, 2);
          added.priced = *PQgetvalue(res, row, 3) == 't';
          added.cost_micros = integer_at(res, row, 4);
          added.tenant = text_at(res, row, 5);
          added.feature = text_at(res, row, 6);
          added.alias = text_at(res, row, 7);
          added.provider = text_at(res, row, 8);
          added.model = text_at(res, row, 9);
          added.outcome = text_at(res, row, 10);
          added.input_tokens = static_cast<std::uint64_t>(integer_at(res, row, 11));
          added.output_tokens = static_cast<std::uint64_t>(integer_at(res, row, 12));
          added.cache_read_tokens = static_cast<std::uint64_t>(integer_at(res, row, 13));
          added.cache_write_tokens = static_cast<std::uint64_t>(integer_at(res, row, 14));
          added.reasoning_tokens = static_cast<std::uint64_t>(integer_at(res, row, 15));
          added.key_id = text_at(res, row, 16);
          added.saved_input_tokens = static_cast<std::uint64_t>(integer_at(res, row, 17));
          added.saved_output_tokens = static_cast<std::uint64_t>(integer_at(res, row, 18));
          added.saved_cost_micros = integer_at(res, row, 19);
          spend.add(added.started_at_ms, added.key_group, added.key_id, added.priced,
                    added.cost_micros);
          rollup.add(added);
        }
      }
      // A tally's entries go up in statements of up to kRowsPerUpsert rows: one round trip
      // for a batch's usually few dozen entries, not one per entry.
      auto upsert = [&](const auto& sums, std::size_t columns, auto sql_for,
                        auto bind) -> Result<void> {
        Params u;
        u.values.reserve(std::min(sums.size(), kRowsPerUpsert) * columns);
        std::string statement;
        std::size_t statement_rows = 0;
        std::size_t rows = 0;
        auto flush = [&]() -> Result<void> {
          if (rows == 0) {
            return {};
          }
          if (rows != statement_rows) {
            statement = sql_for(rows);
            statement_rows = rows;
          }
          auto r = run(statement, &u);
          u.values.clear();
          rows = 0;
          if (!r) {
            return r.error();
          }
          return {};
        };
        for (const auto& entry : sums) {
          bind(entry, u);
          if (++rows == kRowsPerUpsert) {
            if (auto r = flush(); !r) {
              return r;
            }
          }
        }
        return flush();
      };
      auto spend_sql = [](std::size_t rows) { return spend_upsert_sql(Dialect::kPostgres, rows); };
      if (auto r = upsert(spend.sums(), kSpendUpsertColumns, spend_sql,
                          [](const auto& entry, Params& u) {
                            const auto& [bucket, group, name] = entry.first;
                            u.add(std::to_string(bucket));
                            u.add(group);
                            u.add(name);
                            u.add(std::to_string(entry.second.cost_micros));
                            u.add(std::to_string(entry.second.records));
                          });
          !r) {
        return r;
      }
      auto rollup_sql = [](std::size_t rows) {
        return rollup_upsert_sql(Dialect::kPostgres, rows);
      };
      if (auto r = upsert(
              rollup.sums(), kRollupUpsertColumns, rollup_sql,
              [](const auto& entry, Params& u) {
                std::apply(
                    [&](const auto&... field) {
                      auto add = [&](const auto& v) {
                        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
                          u.add(v);
                        } else {
                          u.add(std::to_string(v));
                        }
                      };
                      (add(field), ...);
                    },
                    entry.first);
                for (std::int64_t sum : entry.second) {
                  u.add(std::to_string(sum));
                }
              });
          !r) {
        return r;
      }
      return {};
    };
    if (auto r = body(); !r) {
      if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) {
        (void)run("ROLLBACK");
      }
      return r;
    }
    auto commit = run("COMMIT");
    if (!commit) {
      return commit.error();
    }
    return {};
  });
}

Result<std::vector<UsageRow>> PostgresStore::query_usage(const UsageQuery& query) {
  auto text = usage_query_sql(Dialect::kPostgres, query);
  if (!text) {
    return text.error();
  }
  Params p;
  for (const SqlParam& param : text->params) {
    if (const auto* i = std::get_if<std::int64_t>(&param)) {
      p.add(std::to_string(*i));
    } else {
      p.add(std::get<std::string>(param));
    }
  }
  return with_connection<std::vector<UsageRow>>([&]() -> Result<std::vector<UsageRow>> {
    auto r = run(text->sql, &p);
    if (!r) {
      return r.error();
    }
    const PGresult* res = r->get();
    std::vector<UsageRow> rows;
    rows.reserve(PQntuples(res));
    for (int row = 0; row < PQntuples(res); ++row) {
      rows.push_back(read_usage_row(
          query.group_by.size(), [&](int col) { return text_at(res, row, col); },
          [&](int col) { return integer_at(res, row, col); }));
    }
    return rows;
  });
}

Result<std::vector<SpendRow>> PostgresStore::spend_since(std::int64_t from_ms) {
  const SqlText text = spend_since_sql(Dialect::kPostgres, from_ms);
  Params p;
  for (const SqlParam& param : text.params) {
    p.add(std::to_string(std::get<std::int64_t>(param)));
  }
  return with_connection<std::vector<SpendRow>>([&]() -> Result<std::vector<SpendRow>> {
    auto r = run(text.sql, &p);
    if (!r) {
      return r.error();
    }
    const PGresult* res = r->get();
    std::vector<SpendRow> rows;
    rows.reserve(PQntuples(res));
    for (int row = 0; row < PQntuples(res); ++row) {
      rows.push_back({text_at(res, row, 0), text_at(res, row, 1), integer_at(res, row, 2)});
    }
    return rows;
  });
}

Result<std::optional<UsageRecord>> PostgresStore::find_usage(std::string_view request_id) {
  return with_connection<std::optional<UsageRecord>>([&]() -> Result<std::optional<UsageRecord>> {
    if (auto r = prepare_statements(); !r) {
      return r.error();
    }
    Params p;
    p.add(std::string(request_id));
    auto r = run(kFindUsage, {}, &p, statement_deadline());
    if (!r) {
      return r.error();
    }
    if (PQntuples(r->get()) == 0) {
      return std::optional<UsageRecord>();
    }
    UsageRecord record;
    Reader reader{r->get(), 0, std::nullopt};
    visit_usage_fields(record, reader);
    if (reader.error) {
      return *reader.error;
    }
    return std::optional<UsageRecord>(std::move(record));
  });
}

Result<std::uint64_t> PostgresStore::count_usage() {
  return with_connection<std::uint64_t>([&]() -> Result<std::uint64_t> {
    auto r = run("SELECT COUNT(*) FROM usage_records");
    if (!r) {
      return r.error();
    }
    return static_cast<std::uint64_t>(integer_at(r->get(), 0, 0));
  });
}

Result<void> PostgresStore::export_usage(std::int64_t from_ms, std::int64_t to_ms,
                                         const std::function<bool(const UsageRecord&)>& each) {
  static const std::string sql = usage_export_sql(Dialect::kPostgres);
  constexpr int kPage = 1000;
  std::int64_t after_started = std::numeric_limits<std::int64_t>::min();
  std::int64_t after_id = std::numeric_limits<std::int64_t>::min();
  const int id_column = static_cast<int>(usage_columns().size());
  // Pages in (started_at_ms, id) order: a million records never sit in one result.
  for (;;) {
    bool done = false;
    auto page = with_connection<void>([&]() -> Result<void> {
      Params p;
      for (std::int64_t v :
           {from_ms, to_ms, after_started, after_id, static_cast<std::int64_t>(kPage)}) {
        p.add(std::to_string(v));
      }
      auto r = run(sql, &p);
      if (!r) {
        return r.error();
      }
      const int rows = PQntuples(r->get());
      for (int row = 0; row < rows; ++row) {
        UsageRecord record;
        Reader reader{r->get(), 0, std::nullopt, row};
        visit_usage_fields(record, reader);
        if (reader.error) {
          return *reader.error;
        }
        after_started = record.started_at_ms;
        after_id = integer_at(r->get(), row, id_column);
        if (!each(record)) {
          done = true;
          return {};
        }
      }
      done = rows < kPage;
      return {};
    });
    if (!page || done) {
      return page;
    }
  }
}

// Tenancy statements through libpq: `?` numbered $1, $2, ..., parameters and columns as text.
class PostgresStore::TenancyAccess final : public TenancySql {
 public:
  explicit TenancyAccess(PostgresStore& store) : store_(store) {}

  Dialect dialect() const override { return Dialect::kPostgres; }

  Result<std::vector<TenancyRow>> query(const std::string& sql,
                                        const std::vector<TenancyValue>& params) override {
    std::string numbered;
    numbered.reserve(sql.size() + 16);
    int n = 0;
    for (char c : sql) {
      if (c == '?') {
        numbered += fmt::format("${}", ++n);
      } else {
        numbered += c;
      }
    }
    Params p;
    for (const TenancyValue& v : params) {
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        p.add(std::to_string(*i));
      } else if (const auto* text = std::get_if<std::string>(&v)) {
        p.add(*text);
      } else {
        p.add_null();
      }
    }
    auto r = store_.run(numbered, params.empty() ? nullptr : &p);
    if (!r) {
      return r.error();
    }
    const PGresult* res = r->get();
    std::vector<TenancyRow> rows(PQntuples(res));
    for (int row = 0; row < PQntuples(res); ++row) {
      rows[row].reserve(PQnfields(res));
      for (int col = 0; col < PQnfields(res); ++col) {
        if (PQgetisnull(res, row, col)) {
          rows[row].emplace_back();
        } else {
          rows[row].emplace_back(text_at(res, row, col));
        }
      }
    }
    return rows;
  }

 private:
  PostgresStore& store_;
};

template <class T, class Body>
Result<T> PostgresStore::in_transaction(const char* begin, Body&& body) {
  return with_connection<T>([&]() -> Result<T> {
    if (auto r = run(begin); !r) {
      return r.error();
    }
    Result<T> result = body();
    if (!result) {
      if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) {
        (void)run("ROLLBACK");
      }
      return result;
    }
    if (auto r = run("COMMIT"); !r) {
      return r.error();
    }
    return result;
  });
}

Result<TenancyState> PostgresStore::load_tenancy() {
  TenancyAccess access(*this);
  return in_transaction<TenancyState>("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                                      [&] { return load_tenancy_in(access); });
}

Result<std::uint64_t> PostgresStore::tenancy_revision() {
  TenancyAccess access(*this);
  return with_connection<std::uint64_t>([&] { return tenancy_revision_in(access); });
}

Result<std::uint64_t> PostgresStore::commit_tenancy(const TenancyCommit& commit) {
  TenancyAccess access(*this);
  return in_transaction<std::uint64_t>("BEGIN",
                                       [&] { return commit_tenancy_in(access, commit, now_ms()); });
}

Result<std::optional<IdempotentReply>> PostgresStore::find_idempotent(std::string_view key,
                                                                      std::int64_t now_ms) {
  TenancyAccess access(*this);
  return with_connection<std::optional<IdempotentReply>>(
      [&] { return find_idempotent_in(access, key, now_ms); });
}

Result<void> PostgresStore::purge_idempotent(std::int64_t now_ms) {
  TenancyAccess access(*this);
  return with_connection<void>([&] { return purge_idempotent_in(access, now_ms); });
}

Result<std::vector<AuditEntry>> PostgresStore::list_audit(const AuditQuery& query) {
  TenancyAccess access(*this);
  return with_connection<std::vector<AuditEntry>>([&] { return list_audit_in(access, query); });
}

}  // namespace sluice::store
