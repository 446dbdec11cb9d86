#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/result.h"
#include "store/sqlite_connection.h"
#include "store/usage_record.h"

namespace sluice::store {

// The record ids the SQLite ledger stores, kept as runs of sequences per id prefix
// (usage_record_runs: prefix, first_sequence, last_sequence; usage_segment.h split_record_id),
// so a replayed record is found without an index entry per record, and a writer whose
// sequences follow on keeps one run however many batches it writes.
// Runs on the ledger's connection, inside its write transaction; one thread at a time.
class SqliteRecordRuns {
 public:
  explicit SqliteRecordRuns(SqliteConnection& db) : db_(db) {}

  // Indexes into `records`, in batch order, of the ones to store: the first of each id, none
  // whose id is stored already. Records their ids (runs are joined where they meet).
  Result<std::vector<std::size_t>> claim(std::span<const UsageRecord> records);

 private:
  SqliteConnection& db_;
  SqliteConnection::Statement run_find_;
  SqliteConnection::Statement run_insert_;
  SqliteConnection::Statement run_extend_;
  SqliteConnection::Statement run_delete_;
};

}  // namespace sluice::store
