#include "store/sqlite_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <tuple>

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include "store/migrations.h"
#include "store/tenancy_sql.h"
#include "store/usage_fields.h"
#include "store/usage_sql.h"

namespace sluice::store {
namespace {

// sql/sqlite/005_segments.sql: its data step is move_ledger_to_segments.
constexpr int kSegmentsMigration = 5;

// Binds a generated statement's parameters in order (usage_sql.h); text is bound without a
// copy, so `params` must outlive the statement's steps.
void bind_params(sqlite3_stmt* stmt, const std::vector<SqlParam>& params) {
  int index = 0;
  for (const SqlParam& p : params) {
    ++index;
    if (const auto* i = std::get_if<std::int64_t>(&p)) {
      sqlite3_bind_int64(stmt, index, *i);
    } else {
      const std::string& v = std::get<std::string>(p);
      sqlite3_bind_text(stmt, index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    }
  }
}

// The first segment bucket that can hold a record started at or after `from_ms`.
std::int64_t first_bucket(std::int64_t from_ms) {
  return from_ms < std::numeric_limits<std::int64_t>::min() + kRollupBucketMs
             ? std::numeric_limits<std::int64_t>::min()
             : rollup_bucket(from_ms);
}

// A token count the SQL sums cannot hold (above BIGINT) refuses the batch, as a ledger row
// would.
struct TooLarge {
  std::string_view field;
  void operator()(std::string_view name, const std::uint64_t& v) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      field = name;
    }
  }
  template <class T>
  void operator()(std::string_view, const T&) {}
};

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Failures that may pass (another writer, a full or unreadable disk) are kUnavailable, so the
// usage sink spools and retries; the rest (constraints, a schema it does not know) kInternal.
ErrorKind kind_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
      return ErrorKind::kUnavailable;
    default:
      return ErrorKind::kInternal;
  }
}

std::string column_text(sqlite3_stmt* stmt, int i) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
  return text == nullptr ? std::string() : std::string(text, sqlite3_column_bytes(stmt, i));
}

// Reads a usage_records row (usage_columns() order) into a UsageRecord.
struct Reader {
  sqlite3_stmt* stmt;
  int index = 0;
  std::optional<Error> error;

  void operator()(std::string_view, std::string& v) { v = column_text(stmt, index++); }
  void operator()(std::string_view, std::int64_t& v) { v = sqlite3_column_int64(stmt, index++); }
  void operator()(std::string_view, std::uint64_t& v) {
    v = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, index++));
  }
  void operator()(std::string_view, int& v) { v = sqlite3_column_int(stmt, index++); }
  void operator()(std::string_view, bool& v) { v = sqlite3_column_int(stmt, index++) != 0; }
  void operator()(std::string_view, std::vector<AttemptRecord>& v) {
    auto decoded = decode_attempts(column_text(stmt, index++));
    if (decoded) {
      v = std::move(*decoded);
    } else if (!error) {
      error = decoded.error();
    }
  }
};

}  // namespace

void SqliteStore::FinalizeStatement::operator()(sqlite3_stmt* stmt) const {
  sqlite3_finalize(stmt);
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  // Memory statistics take a process-wide mutex around every SQLite allocation (dozens per
  // record inserted); nothing here reads them. Must precede SQLite's initialisation, hence
  // once, before the first connection; a no-op (SQLITE_MISUSE) if something initialised first.
  static std::once_flag configured;
  std::call_once(configured, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  // Key names, features and spend are nobody else's business: a new database file is created
  // owner-only, and SQLite gives its -wal and -shm files the same mode.
  if (path != ":memory:" && !path.empty()) {
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
    }
  }
  sqlite3* db = nullptr;
  // NOMUTEX: one thread at a time uses a Store (store.h), so SQLite's own locking is not needed.
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e(ErrorKind::kUnavailable,
            fmt::format("sqlite: cannot open {}: {}", path,
                        db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
    sqlite3_close(db);
    return e;
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
  // WAL: `sluice usage` reads while the gateway writes. NORMAL is durable against process
  // crashes in WAL mode (https://www.sqlite.org/pragma.html#pragma_synchronous).
  // The usage ledger's indexes on random ids (record_id, request_id) touch pages all over the
  // file on every insert: with SQLite's default 2 MiB cache each batch re-read most of them
  // with pread. A 64 MiB cache and reads through a memory map keep the writer's cost per record
  // flat as the ledger grows (the page cache is per connection; one writer, one reader each).
  // Checkpoints every 16384 pages (64 MiB of WAL) instead of 1000: a hot index page changed by
  // many batches is copied into the database once per checkpoint, not once per few batches.
  if (auto r = store->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                           "PRAGMA cache_size=-65536; PRAGMA mmap_size=1073741824; "
                           "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=16384;");
      !r) {
    return Error(r.error().kind(), fmt::format("{} (database {})", r.error().message(), path));
  }
  return store;
}

SqliteStore::~SqliteStore() {
  // Every cached statement is finalized before the connection closes: sqlite3_close refuses
  // (SQLITE_BUSY) while one is outstanding and the connection would leak. close_v2 would wait
  // for a forgotten statement instead of failing, so a new slot left out here cannot leak it.
  for (Statement* slot : {&segment_insert_, &layout_find_, &run_find_, &run_insert_, &run_extend_,
                          &run_delete_, &edge_insert_, &spend_upsert_, &rollup_upsert_, &count_}) {
    slot->reset();
  }
  sqlite3_close_v2(db_);
}

Error SqliteStore::error(std::string_view doing) const {
  return Error(kind_of(sqlite3_extended_errcode(db_)),
               fmt::format("sqlite: {}: {}", doing, sqlite3_errmsg(db_)));
}

Result<void> SqliteStore::exec(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    Error e(kind_of(rc),
            fmt::format("sqlite: {}", message != nullptr ? message : sqlite3_errstr(rc)));
    sqlite3_free(message);
    return e;
  }
  return {};
}

Result<SqliteStore::Statement> SqliteStore::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return error("preparing a statement (has the store been migrated?)");
  }
  return Statement(stmt);
}

Result<sqlite3_stmt*> SqliteStore::cached(Statement& slot, const std::string& sql) {
  if (!slot) {
    auto s = prepare(sql);
    if (!s) {
      return s.error();
    }
    slot = std::move(*s);
  }
  sqlite3_reset(slot.get());
  sqlite3_clear_bindings(slot.get());
  return slot.get();
}

Result<void> SqliteStore::migrate() { return migrate_up_to(std::numeric_limits<int>::max()); }

Result<void> SqliteStore::migrate_up_to(int version) {
  // BEGIN IMMEDIATE takes the write lock first, so two processes starting together apply each
  // migration once: the second waits (busy timeout), then finds it recorded.
  if (auto r = exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                    "name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL) STRICT;"
                    "BEGIN IMMEDIATE;");
      !r) {
    return r;
  }
  auto run = [&]() -> Result<void> {
    auto applied = prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
    auto record = prepare(
        "INSERT INTO schema_migrations (version, name, applied_at_ms) "
        "VALUES (?, ?, ?)");
    if (!applied || !record) {
      return !applied ? applied.error() : record.error();
    }
    for (const Migration& m : migrations(Dialect::kSqlite)) {
      if (m.version > version) {
        break;
      }
      sqlite3_reset(applied->get());
      sqlite3_bind_int(applied->get(), 1, m.version);
      const int rc = sqlite3_step(applied->get());
      if (rc == SQLITE_ROW) {
        continue;
      }
      if (rc != SQLITE_DONE) {
        return error("reading schema_migrations");
      }
      auto r = exec(std::string(m.sql));
      if (r && m.version == kSegmentsMigration) {
        r = move_ledger_to_segments();
      }
      if (!r) {
        return Error(r.error().kind(),
                     fmt::format("migration {:03}_{}: {}", m.version, m.name, r.error().message()));
      }
      sqlite3_reset(record->get());
      sqlite3_bind_int(record->get(), 1, m.version);
      sqlite3_bind_text(record->get(), 2, m.name.data(), static_cast<int>(m.name.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(record->get(), 3, now_ms());
      if (sqlite3_step(record->get()) != SQLITE_DONE) {
        return error("recording a migration");
      }
    }
    return {};
  };
  if (auto r = run(); !r) {
    (void)exec("ROLLBACK");
    return r;
  }
  return exec("COMMIT");
}

Result<void> SqliteStore::ping() {
  // Reads the schema page: the file is there and readable, migrated or not.
  return exec("SELECT COUNT(*) FROM sqlite_schema");
}

Result<void> SqliteStore::insert_usage(std::span<const UsageRecord> records) {
  if (records.empty()) {
    return {};
  }
  return in_transaction<void>("BEGIN IMMEDIATE", [&] { return store_records(records, true); });
}

Result<void> SqliteStore::store_records(std::span<const UsageRecord> records, bool tally) {
  auto fresh = claim_record_ids(records);
  if (!fresh || fresh->empty()) {
    return fresh ? Result<void>() : Result<void>(fresh.error());
  }
  auto layout = layout_id();
  if (!layout) {
    return layout.error();
  }
  // One segment per started minute: the minutes at a report's ends read only their own.
  std::vector<std::size_t>& order = *fresh;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rollup_bucket(records[a].started_at_ms) < rollup_bucket(records[b].started_at_ms);
  });
  static const std::string insert_sql =
      "INSERT INTO usage_segments (layout, bucket_ms, records, body) VALUES (?, ?, ?, ?)";
  auto stmt = cached(segment_insert_, insert_sql);
  if (!stmt) {
    return stmt.error();
  }
  SpendTally spend;
  RollupTally rollup;
  SegmentEncoder encoder;
  for (std::size_t begin = 0; begin < order.size();) {
    const std::int64_t bucket = rollup_bucket(records[order[begin]].started_at_ms);
    std::size_t end = begin;
    encoder.start(body_);
    for (; end < order.size() && rollup_bucket(records[order[end]].started_at_ms) == bucket;
         ++end) {
      const UsageRecord& record = records[order[end]];
      encoder.append(body_, record);
      if (tally) {
        spend.add(record.started_at_ms, record.key_group, record.key_id, record.priced,
                  record.cost_micros);
        rollup.add(record);
      }
    }
    sqlite3_reset(*stmt);
    sqlite3_bind_int64(*stmt, 1, *layout);
    sqlite3_bind_int64(*stmt, 2, bucket);
    sqlite3_bind_int64(*stmt, 3, static_cast<std::int64_t>(end - begin));
    sqlite3_bind_blob64(*stmt, 4, body_.data(), body_.size(), SQLITE_STATIC);
    const int rc = sqlite3_step(*stmt);
    sqlite3_reset(*stmt);
    if (rc != SQLITE_DONE) {
      return error(fmt::format("inserting a segment of {} records", end - begin));
    }
    begin = end;
  }
  if (body_.capacity() > (4u << 20)) {
    std::string().swap(body_);  // a burst's buffer is not kept
  }
  if (auto added = add_spend(spend); !added) {
    return added;
  }
  return add_rollup(rollup);
}

Result<std::vector<std::size_t>> SqliteStore::claim_record_ids(
    std::span<const UsageRecord> records) {
  struct Id {
    RecordSequence id;
    std::size_t index;
  };
  std::vector<Id> ids;
  ids.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].record_id.empty()) {
      return Error(ErrorKind::kBadRequest, "sqlite: a usage record has no record_id");
    }
    TooLarge check;
    visit_usage_fields(records[i], check);
    if (!check.field.empty()) {
      return Error(ErrorKind::kBadRequest,
                   fmt::format("sqlite: record {}: {} cannot be stored (above 2^63 - 1)",
                               records[i].record_id, check.field));
    }
    ids.push_back({split_record_id(records[i].record_id), i});
  }
  std::sort(ids.begin(), ids.end(), [](const Id& a, const Id& b) {
    return std::tie(a.id.prefix, a.id.sequence, a.index) <
           std::tie(b.id.prefix, b.id.sequence, b.index);
  });
  static const std::string find_sql =
      "SELECT first_sequence, last_sequence FROM usage_record_runs WHERE prefix = ? AND "
      "first_sequence <= ? ORDER BY first_sequence DESC";
  static const std::string insert_sql =
      "INSERT INTO usage_record_runs (prefix, first_sequence, last_sequence) VALUES (?, ?, ?)";
  static const std::string extend_sql =
      "UPDATE usage_record_runs SET last_sequence = ? WHERE prefix = ? AND first_sequence = ?";
  static const std::string delete_sql =
      "DELETE FROM usage_record_runs WHERE prefix = ? AND first_sequence = ?";
  sqlite3_stmt* find = nullptr;
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* extend = nullptr;
  sqlite3_stmt* remove = nullptr;
  for (auto [slot, sql, stmt] :
       {std::tuple{&run_find_, &find_sql, &find}, std::tuple{&run_insert_, &insert_sql, &insert},
        std::tuple{&run_extend_, &extend_sql, &extend},
        std::tuple{&run_delete_, &delete_sql, &remove}}) {
    auto prepared = cached(*slot, *sql);
    if (!prepared) {
      return prepared.error();
    }
    *stmt = *prepared;
  }
  auto bind_prefix = [](sqlite3_stmt* stmt, int index, std::string_view prefix) {
    sqlite3_bind_text(stmt, index, prefix.data(), static_cast<int>(prefix.size()), SQLITE_STATIC);
  };
  // The stored runs of `prefix` that start at or before `at`, nearest first, while `more`.
  using Run = std::pair<std::int64_t, std::int64_t>;
  auto runs_before = [&](std::string_view prefix, std::int64_t at,
                         auto&& more) -> Result<std::vector<Run>> {
    std::vector<Run> runs;
    sqlite3_reset(find);
    bind_prefix(find, 1, prefix);
    sqlite3_bind_int64(find, 2, at);
    int rc;
    while ((rc = sqlite3_step(find)) == SQLITE_ROW) {
      const Run run{sqlite3_column_int64(find, 0), sqlite3_column_int64(find, 1)};
      if (!more(run)) {
        break;
      }
      runs.push_back(run);
    }
    sqlite3_reset(find);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return error("reading usage_record_runs");
    }
    return runs;
  };
  auto step = [&](sqlite3_stmt* stmt) -> Result<void> {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) {
      return error("writing usage_record_runs");
    }
    return {};
  };
  std::vector<std::size_t> fresh;
  fresh.reserve(records.size());
  for (std::size_t begin = 0; begin < ids.size();) {
    const std::string_view prefix = ids[begin].id.prefix;
    std::size_t end = begin;
    while (end < ids.size() && ids[end].id.prefix == prefix) {
      ++end;
    }
    const std::int64_t low = ids[begin].id.sequence;
    const std::int64_t high = ids[end - 1].id.sequence;
    // Runs of one prefix do not overlap, so the ones reaching into [low, high] are consecutive
    // from the nearest down.
    auto stored = runs_before(prefix, high, [&](const Run& r) { return r.second >= low; });
    if (!stored) {
      return stored.error();
    }
    std::reverse(stored->begin(), stored->end());
    std::vector<Run> added;  // runs of this batch's new sequences
    std::size_t next_stored = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const std::int64_t sequence = ids[i].id.sequence;
      if (i > begin && sequence == ids[i - 1].id.sequence) {
        continue;  // the same id twice in the batch
      }
      while (next_stored < stored->size() && (*stored)[next_stored].second < sequence) {
        ++next_stored;
      }
      if (next_stored < stored->size() && (*stored)[next_stored].first <= sequence) {
        continue;  // stored already (a replay)
      }
      fresh.push_back(ids[i].index);
      if (!added.empty() && added.back().second + 1 == sequence) {
        added.back().second = sequence;
      } else {
        added.push_back({sequence, sequence});
      }
    }
    for (const Run& run : added) {
      // A run joins the stored run ending just before it and the one starting just after it.
      auto before =
          runs_before(prefix, run.first, [n = 0](const Run&) mutable { return n++ == 0; });
      if (!before) {
        return before.error();
      }
      std::int64_t last = run.second;
      auto after = runs_before(prefix, run.second + 1,
                               [&](const Run& r) { return r.first == run.second + 1; });
      if (!after) {
        return after.error();
      }
      if (!after->empty()) {
        last = after->front().second;
        sqlite3_reset(remove);
        bind_prefix(remove, 1, prefix);
        sqlite3_bind_int64(remove, 2, after->front().first);
        if (auto r = step(remove); !r) {
          return r.error();
        }
      }
      if (!before->empty() && before->front().second + 1 == run.first) {
        sqlite3_reset(extend);
        sqlite3_bind_int64(extend, 1, last);
        bind_prefix(extend, 2, prefix);
        sqlite3_bind_int64(extend, 3, before->front().first);
        if (auto r = step(extend); !r) {
          return r.error();
        }
      } else {
        sqlite3_reset(insert);
        bind_prefix(insert, 1, prefix);
        sqlite3_bind_int64(insert, 2, run.first);
        sqlite3_bind_int64(insert, 3, last);
        if (auto r = step(insert); !r) {
          return r.error();
        }
      }
    }
    begin = end;
  }
  std::sort(fresh.begin(), fresh.end());  // the batch's order
  return fresh;
}

Result<std::int64_t> SqliteStore::layout_id() {
  const std::string& fields = usage_segment_layout();
  static const std::string find_sql = "SELECT id FROM usage_segment_layouts WHERE fields = ?";
  auto find = cached(layout_find_, find_sql);
  if (!find) {
    return find.error();
  }
  sqlite3_bind_text(*find, 1, fields.data(), static_cast<int>(fields.size()), SQLITE_STATIC);
  const int rc = sqlite3_step(*find);
  const std::int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(*find, 0) : 0;
  sqlite3_reset(*find);
  if (rc == SQLITE_ROW) {
    return id;
  }
  if (rc != SQLITE_DONE) {
    return error("reading usage_segment_layouts");
  }
  auto insert = prepare("INSERT INTO usage_segment_layouts (fields) VALUES (?)");
  if (!insert) {
    return insert.error();
  }
  sqlite3_bind_text(insert->get(), 1, fields.data(), static_cast<int>(fields.size()),
                    SQLITE_STATIC);
  if (sqlite3_step(insert->get()) != SQLITE_DONE) {
    return error("adding the segment layout");
  }
  return sqlite3_last_insert_rowid(db_);
}

Result<void> SqliteStore::read_segments(sqlite3_stmt* stmt,
                                        const std::function<bool(UsageRecord&)>& each) {
  int rc;
  UsageRecord record;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const std::int64_t layout = sqlite3_column_int64(stmt, 0);
    auto known = layouts_.find(layout);
    if (known == layouts_.end()) {
      auto text = prepare("SELECT fields FROM usage_segment_layouts WHERE id = ?");
      if (!text) {
        return text.error();
      }
      sqlite3_bind_int64(text->get(), 1, layout);
      if (sqlite3_step(text->get()) != SQLITE_ROW) {
        return Error(ErrorKind::kInternal,
                     fmt::format("sqlite: usage segment layout {} is missing", layout));
      }
      auto parsed = SegmentLayout::parse(column_text(text->get(), 0));
      if (!parsed) {
        return Error(parsed.error().kind(), fmt::format("sqlite: usage segment layout {}: {}",
                                                        layout, parsed.error().message()));
      }
      known = layouts_.emplace(layout, std::move(*parsed)).first;
    }
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt, 1));
    std::string_view body(data != nullptr ? data : "",
                          static_cast<std::size_t>(sqlite3_column_bytes(stmt, 1)));
    SegmentReader reader(known->second, body);
    while (!reader.done()) {
      record = UsageRecord();
      if (!reader.next(record)) {
        return Error(ErrorKind::kInternal, "sqlite: a usage segment ends inside a record");
      }
      if (!each(record)) {
        return {};
      }
    }
  }
  if (rc != SQLITE_DONE) {
    return error("reading usage segments");
  }
  return {};
}

Result<void> SqliteStore::move_ledger_to_segments() {
  // Fields added after 005 are no columns of the old table: they read as their default.
  if (auto r = exec("ALTER TABLE usage_records ADD COLUMN key_id TEXT NOT NULL DEFAULT ''"); !r) {
    return r;
  }
  static const std::string sql = usage_export_sql(Dialect::kSqlite);
  auto page = prepare(sql);
  if (!page) {
    return page.error();
  }
  constexpr int kPage = 1024;
  std::int64_t after_started = std::numeric_limits<std::int64_t>::min();
  std::int64_t after_id = std::numeric_limits<std::int64_t>::min();
  std::vector<UsageRecord> batch;
  const int id_column = static_cast<int>(usage_columns().size());
  for (;;) {
    sqlite3_stmt* s = page->get();
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, std::numeric_limits<std::int64_t>::min());
    sqlite3_bind_int64(s, 2, std::numeric_limits<std::int64_t>::max());
    sqlite3_bind_int64(s, 3, after_started);
    sqlite3_bind_int64(s, 4, after_id);
    sqlite3_bind_int64(s, 5, kPage);
    batch.clear();
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      Reader reader{s, 0, std::nullopt};
      visit_usage_fields(batch.emplace_back(), reader);
      if (reader.error) {
        return *reader.error;
      }
      after_started = batch.back().started_at_ms;
      after_id = sqlite3_column_int64(s, id_column);
    }
    if (rc != SQLITE_DONE) {
      return error("reading usage_records");
    }
    sqlite3_reset(s);
    if (batch.empty()) {
      break;
    }
    // Their spend and rollup were added when they were inserted.
    if (auto r = store_records(batch, false); !r) {
      return r;
    }
  }
  page->reset();
  return exec("DROP TABLE usage_records");
}

namespace {

void bind_value(sqlite3_stmt* stmt, int index, std::int64_t v) {
  sqlite3_bind_int64(stmt, index, v);
}
void bind_value(sqlite3_stmt* stmt, int index, const std::string& v) {
  sqlite3_bind_text(stmt, index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

// Binds a rollup entry: the key's columns, then its sums, from parameter 1 on.
template <class Key, class... Sums>
void bind_entry(sqlite3_stmt* stmt, const Key& key, const Sums&... sums) {
  int index = 0;
  std::apply([&](const auto&... field) { (bind_value(stmt, ++index, field), ...); }, key);
  (bind_value(stmt, ++index, sums), ...);
}

}  // namespace

template <class Entries, class Bind>
Result<void> SqliteStore::upsert_each(Statement& slot, const std::string& sql,
                                      const Entries& entries, std::string_view table, Bind&& bind) {
  if (entries.empty()) {
    return {};  // nor a statement: migration 005 moves records before usage_spend is rebuilt
  }
  auto stmt = cached(slot, sql);
  if (!stmt) {
    return stmt.error();
  }
  for (const auto& entry : entries) {
    sqlite3_reset(*stmt);
    bind(*stmt, entry);
    if (sqlite3_step(*stmt) != SQLITE_DONE) {
      Error e = error(fmt::format("adding to {}", table));
      sqlite3_reset(*stmt);
      return e;
    }
  }
  sqlite3_reset(*stmt);
  return {};
}

Result<void> SqliteStore::add_spend(const SpendTally& spend) {
  static const std::string sql = spend_upsert_sql(Dialect::kSqlite);
  return upsert_each(
      spend_upsert_, sql, spend.sums(), "usage_spend", [](sqlite3_stmt* stmt, const auto& entry) {
        bind_entry(stmt, entry.first, entry.second.cost_micros, entry.second.records);
      });
}

Result<void> SqliteStore::add_rollup(const RollupTally& rollup) {
  static const std::string sql = rollup_upsert_sql(Dialect::kSqlite);
  return upsert_each(rollup_upsert_, sql, rollup.sums(), "usage_rollup",
                     [](sqlite3_stmt* stmt, const auto& entry) {
                       std::apply([&](auto... sum) { bind_entry(stmt, entry.first, sum...); },
                                  entry.second);
                     });
}

Result<void> SqliteStore::fill_edges(
    std::initializer_list<std::pair<std::int64_t, std::int64_t>> ranges) {
  if (auto r =
          exec("CREATE TEMP TABLE IF NOT EXISTS usage_edges (started_at_ms INTEGER, key_name TEXT, "
               "key_group TEXT, tenant TEXT, feature TEXT, alias TEXT, provider TEXT, model TEXT, "
               "outcome TEXT, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens "
               "INTEGER, cache_write_tokens INTEGER, reasoning_tokens INTEGER, priced INTEGER, "
               "cost_micros INTEGER, key_id TEXT); DELETE FROM temp.usage_edges;");
      !r) {
    return r;
  }
  static const std::string insert_sql =
      "INSERT INTO temp.usage_edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  auto insert = cached(edge_insert_, insert_sql);
  if (!insert) {
    return insert.error();
  }
  auto segments = prepare(
      "SELECT layout, body FROM usage_segments WHERE bucket_ms >= ? AND bucket_ms < ? "
      "ORDER BY bucket_ms, id");
  if (!segments) {
    return segments.error();
  }
  for (const auto& [from, to] : ranges) {
    if (from >= to) {
      continue;
    }
    sqlite3_reset(segments->get());
    sqlite3_bind_int64(segments->get(), 1, first_bucket(from));
    sqlite3_bind_int64(segments->get(), 2, to);
    bool failed = false;
    auto read = read_segments(segments->get(), [&](UsageRecord& r) {
      if (r.started_at_ms < from || r.started_at_ms >= to) {
        return true;
      }
      sqlite3_stmt* s = *insert;
      sqlite3_reset(s);
      int i = 0;
      sqlite3_bind_int64(s, ++i, r.started_at_ms);
      for (const std::string* text : {&r.key_name, &r.key_group, &r.tenant, &r.feature, &r.alias,
                                      &r.provider, &r.model, &r.outcome}) {
        sqlite3_bind_text(s, ++i, text->data(), static_cast<int>(text->size()), SQLITE_STATIC);
      }
      for (std::uint64_t tokens : {r.input_tokens, r.output_tokens, r.cache_read_tokens,
                                   r.cache_write_tokens, r.reasoning_tokens}) {
        sqlite3_bind_int64(s, ++i, static_cast<std::int64_t>(tokens));
      }
      sqlite3_bind_int(s, ++i, r.priced ? 1 : 0);
      sqlite3_bind_int64(s, ++i, r.cost_micros);
      sqlite3_bind_text(s, ++i, r.key_id.data(), static_cast<int>(r.key_id.size()), SQLITE_STATIC);
      failed = sqlite3_step(s) != SQLITE_DONE;
      sqlite3_reset(s);
      return !failed;
    });
    if (!read) {
      return read;
    }
    if (failed) {
      return error("filling temp.usage_edges");
    }
  }
  return {};
}

Result<std::vector<SpendRow>> SqliteStore::spend_since(std::int64_t from_ms) {
  // One read transaction: the rollup and the segments as of the same moment.
  return in_transaction<std::vector<SpendRow>>("BEGIN", [&]() -> Result<std::vector<SpendRow>> {
    if (auto r = fill_edges({{from_ms, spend_boundary(from_ms)}}); !r) {
      return r.error();
    }
    const SqlText text = spend_since_sql(Dialect::kSqlite, from_ms, "temp.usage_edges");
    auto s = prepare(text.sql);
    if (!s) {
      return s.error();
    }
    bind_params(s->get(), text.params);
    std::vector<SpendRow> rows;
    int rc;
    while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) {
      rows.push_back(
          {column_text(s->get(), 0), column_text(s->get(), 1), sqlite3_column_int64(s->get(), 2)});
    }
    if (rc != SQLITE_DONE) {
      return error("reading spend");
    }
    return rows;
  });
}

Result<std::vector<UsageRow>> SqliteStore::query_usage(const UsageQuery& query) {
  auto text = usage_query_sql(Dialect::kSqlite, query, "temp.usage_edges");
  if (!text) {
    return text.error();
  }
  const UsageSplit split = usage_query_split(query);
  return in_transaction<std::vector<UsageRow>>("BEGIN", [&]() -> Result<std::vector<UsageRow>> {
    if (auto r = fill_edges({{split.from, split.first}, {split.last, split.to}}); !r) {
      return r.error();
    }
    auto s = prepare(text->sql);
    if (!s) {
      return s.error();
    }
    bind_params(s->get(), text->params);
    std::vector<UsageRow> rows;
    int rc;
    while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) {
      rows.push_back(read_usage_row(
          query.group_by.size(), [&](int i) { return column_text(s->get(), i); },
          [&](int i) { return sqlite3_column_int64(s->get(), i); }));
    }
    if (rc != SQLITE_DONE) {
      return error("querying usage");
    }
    return rows;
  });
}

Result<std::optional<UsageRecord>> SqliteStore::find_usage(std::string_view request_id) {
  // No index by request id (one entry per record is what segments save): the segments whose
  // bytes hold the id as the encoder writes it (whole: varints 0, 0, its length, then the
  // bytes) are decoded. A scan of the ledger's bytes, ~0.1-0.3 KB per record.
  const std::string needle = segment_request_id_bytes(request_id);
  auto s = prepare("SELECT layout, body FROM usage_segments WHERE instr(body, ?) > 0 ORDER BY id");
  if (!s) {
    return s.error();
  }
  sqlite3_bind_blob64(s->get(), 1, needle.data(), needle.size(), SQLITE_STATIC);
  std::optional<UsageRecord> newest;
  auto r = read_segments(s->get(), [&](UsageRecord& record) {
    if (record.request_id == request_id &&
        (!newest || record.started_at_ms >= newest->started_at_ms)) {
      newest = std::move(record);
    }
    return true;
  });
  if (!r) {
    return r.error();
  }
  return newest;
}

Result<std::uint64_t> SqliteStore::count_usage() {
  auto stmt = cached(count_, "SELECT COALESCE(SUM(records), 0) FROM usage_segments");
  if (!stmt) {
    return stmt.error();
  }
  if (sqlite3_step(*stmt) != SQLITE_ROW) {
    Error e = error("counting usage records");
    sqlite3_reset(*stmt);
    return e;
  }
  const auto n = static_cast<std::uint64_t>(sqlite3_column_int64(*stmt, 0));
  sqlite3_reset(*stmt);
  return n;
}

Result<void> SqliteStore::export_usage(std::int64_t from_ms, std::int64_t to_ms,
                                       const std::function<bool(const UsageRecord&)>& each) {
  if (from_ms >= to_ms) {
    return {};
  }
  auto s = prepare(
      "SELECT layout, body FROM usage_segments WHERE bucket_ms >= ? AND bucket_ms < ? "
      "ORDER BY bucket_ms, id");
  if (!s) {
    return s.error();
  }
  sqlite3_bind_int64(s->get(), 1, first_bucket(from_ms));
  sqlite3_bind_int64(s->get(), 2, to_ms);
  return in_transaction<void>("BEGIN", [&] {
    return read_segments(s->get(), [&](UsageRecord& record) {
      return record.started_at_ms < from_ms || record.started_at_ms >= to_ms || each(record);
    });
  });
}

// Tenancy statements through SQLite: parameters bound by type, every column read as text.
class SqliteStore::TenancyAccess final : public TenancySql {
 public:
  explicit TenancyAccess(SqliteStore& store) : store_(store) {}

  Dialect dialect() const override { return Dialect::kSqlite; }

  Result<std::vector<TenancyRow>> query(const std::string& sql,
                                        const std::vector<TenancyValue>& params) override {
    auto stmt = store_.prepare(sql);
    if (!stmt) {
      return stmt.error();
    }
    sqlite3_stmt* s = stmt->get();
    int index = 0;
    for (const TenancyValue& v : params) {
      ++index;
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        sqlite3_bind_int64(s, index, *i);
      } else if (const auto* text = std::get_if<std::string>(&v)) {
        sqlite3_bind_text(s, index, text->data(), static_cast<int>(text->size()), SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, index);
      }
    }
    std::vector<TenancyRow> rows;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      TenancyRow& row = rows.emplace_back();
      const int columns = sqlite3_column_count(s);
      row.reserve(columns);
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(s, c) == SQLITE_NULL) {
          row.emplace_back();
        } else {
          row.emplace_back(column_text(s, c));
        }
      }
    }
    if (rc != SQLITE_DONE) {
      return store_.error("tenancy statement");
    }
    return rows;
  }

 private:
  SqliteStore& store_;
};

template <class T, class Body>
Result<T> SqliteStore::in_transaction(const char* begin, Body&& body) {
  if (auto r = exec(begin); !r) {
    return r.error();
  }
  Result<T> result = body();
  if (!result) {
    (void)exec("ROLLBACK");
    return result;
  }
  if (auto r = exec("COMMIT"); !r) {
    (void)exec("ROLLBACK");
    return r.error();
  }
  return result;
}

Result<TenancyState> SqliteStore::load_tenancy() {
  TenancyAccess access(*this);
  // A deferred transaction reads one snapshot of the WAL.
  return in_transaction<TenancyState>("BEGIN", [&] { return load_tenancy_in(access); });
}

Result<std::uint64_t> SqliteStore::tenancy_revision() {
  TenancyAccess access(*this);
  return tenancy_revision_in(access);
}

Result<std::uint64_t> SqliteStore::commit_tenancy(const TenancyCommit& commit) {
  TenancyAccess access(*this);
  return in_transaction<std::uint64_t>("BEGIN IMMEDIATE",
                                       [&] { return commit_tenancy_in(access, commit, now_ms()); });
}

Result<std::optional<IdempotentReply>> SqliteStore::find_idempotent(std::string_view key,
                                                                    std::int64_t now_ms) {
  TenancyAccess access(*this);
  return find_idempotent_in(access, key, now_ms);
}

Result<void> SqliteStore::purge_idempotent(std::int64_t now_ms) {
  TenancyAccess access(*this);
  return purge_idempotent_in(access, now_ms);
}

Result<std::vector<AuditEntry>> SqliteStore::list_audit(const AuditQuery& query) {
  TenancyAccess access(*this);
  return list_audit_in(access, query);
}

}  // namespace sluice::store
