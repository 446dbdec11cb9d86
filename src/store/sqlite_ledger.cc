#include "store/sqlite_ledger.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <sqlite3.h>

#include "store/usage_fields.h"
#include "store/usage_sql.h"

namespace sluice::store {
namespace {

constexpr auto column_text = &SqliteConnection::column_text;

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

Result<void> SqliteLedger::insert(std::span<const UsageRecord> records) {
  if (records.empty()) {
    return {};
  }
  return db_.in_transaction<void>("BEGIN IMMEDIATE", [&] { return store_records(records, true); });
}

Result<void> SqliteLedger::store_records(std::span<const UsageRecord> records, bool tally) {
  for (const UsageRecord& record : records) {
    if (record.record_id.empty()) {
      return Error(ErrorKind::kBadRequest, "sqlite: a usage record has no record_id");
    }
    TooLarge check;
    visit_usage_fields(record, check);
    if (!check.field.empty()) {
      return Error(ErrorKind::kBadRequest,
                   fmt::format("sqlite: record {}: {} cannot be stored (above 2^63 - 1)",
                               record.record_id, check.field));
    }
  }
  auto fresh = runs_.claim(records);
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
  auto stmt = db_.cached(segment_insert_, insert_sql);
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
      return db_.error(fmt::format("inserting a segment of {} records", end - begin));
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

Result<std::int64_t> SqliteLedger::layout_id() {
  const std::string& fields = usage_segment_layout();
  static const std::string find_sql = "SELECT id FROM usage_segment_layouts WHERE fields = ?";
  auto find = db_.cached(layout_find_, find_sql);
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
    return db_.error("reading usage_segment_layouts");
  }
  auto insert = db_.prepare("INSERT INTO usage_segment_layouts (fields) VALUES (?)");
  if (!insert) {
    return insert.error();
  }
  sqlite3_bind_text(insert->get(), 1, fields.data(), static_cast<int>(fields.size()),
                    SQLITE_STATIC);
  if (sqlite3_step(insert->get()) != SQLITE_DONE) {
    return db_.error("adding the segment layout");
  }
  return db_.last_insert_rowid();
}

Result<void> SqliteLedger::read_segments(sqlite3_stmt* stmt,
                                         const std::function<bool(UsageRecord&)>& each) {
  int rc;
  UsageRecord record;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const std::int64_t layout = sqlite3_column_int64(stmt, 0);
    auto known = layouts_.find(layout);
    if (known == layouts_.end()) {
      auto text = db_.prepare("SELECT fields FROM usage_segment_layouts WHERE id = ?");
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
    return db_.error("reading usage segments");
  }
  return {};
}

Result<void> SqliteLedger::move_from_usage_records() {
  // Fields added after 005 are no columns of the old table: they read as their default.
  if (auto r = db_.exec(
          "ALTER TABLE usage_records ADD COLUMN key_id TEXT NOT NULL DEFAULT ''; "
          "ALTER TABLE usage_records ADD COLUMN saved_input_tokens INTEGER NOT NULL DEFAULT 0; "
          "ALTER TABLE usage_records ADD COLUMN saved_output_tokens INTEGER NOT NULL DEFAULT 0; "
          "ALTER TABLE usage_records ADD COLUMN saved_cost_micros INTEGER NOT NULL DEFAULT 0; "
          "ALTER TABLE usage_records ADD COLUMN guardrails TEXT NOT NULL DEFAULT ''");
      !r) {
    return r;
  }
  static const std::string sql = usage_export_sql(Dialect::kSqlite);
  auto page = db_.prepare(sql);
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
      return db_.error("reading usage_records");
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
  return db_.exec("DROP TABLE usage_records");
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
Result<void> SqliteLedger::upsert_each(Statement& slot, const std::string& sql,
                                       const Entries& entries, std::string_view table,
                                       Bind&& bind) {
  if (entries.empty()) {
    return {};  // nor a statement: migration 005 moves records before usage_spend is rebuilt
  }
  auto stmt = db_.cached(slot, sql);
  if (!stmt) {
    return stmt.error();
  }
  for (const auto& entry : entries) {
    sqlite3_reset(*stmt);
    bind(*stmt, entry);
    if (sqlite3_step(*stmt) != SQLITE_DONE) {
      Error e = db_.error(fmt::format("adding to {}", table));
      sqlite3_reset(*stmt);
      return e;
    }
  }
  sqlite3_reset(*stmt);
  return {};
}

Result<void> SqliteLedger::add_spend(const SpendTally& spend) {
  static const std::string sql = spend_upsert_sql(Dialect::kSqlite);
  return upsert_each(
      spend_upsert_, sql, spend.sums(), "usage_spend", [](sqlite3_stmt* stmt, const auto& entry) {
        bind_entry(stmt, entry.first, entry.second.cost_micros, entry.second.records);
      });
}

Result<void> SqliteLedger::add_rollup(const RollupTally& rollup) {
  static const std::string sql = rollup_upsert_sql(Dialect::kSqlite);
  return upsert_each(rollup_upsert_, sql, rollup.sums(), "usage_rollup",
                     [](sqlite3_stmt* stmt, const auto& entry) {
                       std::apply([&](auto... sum) { bind_entry(stmt, entry.first, sum...); },
                                  entry.second);
                     });
}

Result<void> SqliteLedger::fill_edges(
    std::initializer_list<std::pair<std::int64_t, std::int64_t>> ranges) {
  if (auto r = db_.exec(
          "CREATE TEMP TABLE IF NOT EXISTS usage_edges (started_at_ms INTEGER, key_name TEXT, "
          "key_group TEXT, tenant TEXT, feature TEXT, alias TEXT, provider TEXT, model TEXT, "
          "outcome TEXT, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens "
          "INTEGER, cache_write_tokens INTEGER, reasoning_tokens INTEGER, priced INTEGER, "
          "cost_micros INTEGER, key_id TEXT, saved_input_tokens INTEGER, saved_output_tokens "
          "INTEGER, saved_cost_micros INTEGER); DELETE FROM temp.usage_edges;");
      !r) {
    return r;
  }
  static const std::string insert_sql =
      "INSERT INTO temp.usage_edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?)";
  auto insert = db_.cached(edge_insert_, insert_sql);
  if (!insert) {
    return insert.error();
  }
  auto segments = db_.prepare(
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
      sqlite3_bind_int64(s, ++i, static_cast<std::int64_t>(r.saved_input_tokens));
      sqlite3_bind_int64(s, ++i, static_cast<std::int64_t>(r.saved_output_tokens));
      sqlite3_bind_int64(s, ++i, r.saved_cost_micros);
      failed = sqlite3_step(s) != SQLITE_DONE;
      sqlite3_reset(s);
      return !failed;
    });
    if (!read) {
      return read;
    }
    if (failed) {
      return db_.error("filling temp.usage_edges");
    }
  }
  return {};
}

Result<std::vector<SpendRow>> SqliteLedger::spend_since(std::int64_t from_ms) {
  // One read transaction: the rollup and the segments as of the same moment.
  return db_.in_transaction<std::vector<SpendRow>>("BEGIN", [&]() -> Result<std::vector<SpendRow>> {
    if (auto r = fill_edges({{from_ms, spend_boundary(from_ms)}}); !r) {
      return r.error();
    }
    const SqlText text = spend_since_sql(Dialect::kSqlite, from_ms, "temp.usage_edges");
    auto s = db_.prepare(text.sql);
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
      return db_.error("reading spend");
    }
    return rows;
  });
}

Result<std::vector<UsageRow>> SqliteLedger::query(const UsageQuery& query) {
  auto text = usage_query_sql(Dialect::kSqlite, query, "temp.usage_edges");
  if (!text) {
    return text.error();
  }
  const UsageSplit split = usage_query_split(query);
  return db_.in_transaction<std::vector<UsageRow>>("BEGIN", [&]() -> Result<std::vector<UsageRow>> {
    if (auto r = fill_edges({{split.from, split.first}, {split.last, split.to}}); !r) {
      return r.error();
    }
    auto s = db_.prepare(text->sql);
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
      return db_.error("querying usage");
    }
    return rows;
  });
}

Result<std::optional<UsageRecord>> SqliteLedger::find(std::string_view request_id) {
  // No index by request id (one entry per record is what segments save): the segments whose
  // bytes hold the id as the encoder writes it (whole: varints 0, 0, its length, then the
  // bytes) are decoded. A scan of the ledger's bytes, ~0.1-0.3 KB per record.
  const std::string needle = segment_request_id_bytes(request_id);
  auto s =
      db_.prepare("SELECT layout, body FROM usage_segments WHERE instr(body, ?) > 0 ORDER BY id");
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

Result<std::uint64_t> SqliteLedger::count() {
  auto stmt = db_.cached(count_, "SELECT COALESCE(SUM(records), 0) FROM usage_segments");
  if (!stmt) {
    return stmt.error();
  }
  if (sqlite3_step(*stmt) != SQLITE_ROW) {
    Error e = db_.error("counting usage records");
    sqlite3_reset(*stmt);
    return e;
  }
  const auto n = static_cast<std::uint64_t>(sqlite3_column_int64(*stmt, 0));
  sqlite3_reset(*stmt);
  return n;
}

Result<void> SqliteLedger::export_range(std::int64_t from_ms, std::int64_t to_ms,
                                        const std::function<bool(const UsageRecord&)>& each) {
  if (from_ms >= to_ms) {
    return {};
  }
  auto s = db_.prepare(
      "SELECT layout, body FROM usage_segments WHERE bucket_ms >= ? AND bucket_ms < ? "
      "ORDER BY bucket_ms, id");
  if (!s) {
    return s.error();
  }
  sqlite3_bind_int64(s->get(), 1, first_bucket(from_ms));
  sqlite3_bind_int64(s->get(), 2, to_ms);
  return db_.in_transaction<void>("BEGIN", [&] {
    return read_segments(s->get(), [&](UsageRecord& record) {
      return record.started_at_ms < from_ms || record.started_at_ms >= to_ms || each(record);
    });
  });
}

}  // namespace sluice::store
