#pragma once

#include <string>
#include <string_view>

#include "store/usage_record.h"

namespace sluice::metering {

// A usage record as flat bytes, for the sink's per-worker queues: the worker appends each record
// to one buffer and frees the record itself, so no memory a worker allocated is freed by the
// writer thread (cross-thread frees make the worker's malloc take its arena lock, and a writer
// preempted while holding it stalls the worker). In-process only, never persisted: the layout
// may change with any build. Strings are a u32 length and the bytes, numbers their native
// 8/4/1 bytes, attempts a u32 count then each attempt's fields.
void append_record_bytes(std::string& out, const store::UsageRecord& record);

// Reads one record from the front of `in` into `record` (which should be default-constructed
// or reused) and advances `in` past it. False when `in` ends inside a record.
bool read_record_bytes(std::string_view& in, store::UsageRecord& record);

}  // namespace sluice::metering
