#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/usage_record.h"

namespace sluice::store {

// The SQLite ledger keeps usage records in segments (sql/sqlite/005_segments.sql): one row per
// started minute of each batch the usage writer commits, its records encoded one after the
// other. Beside each segment is the field list it was written with, its layout:
// "record_id:s,request_id:s,...,attempts:a(provider:s,...,reused_connection:b),...", stored
// once per distinct list in usage_segment_layouts. A build reads segments written by any other:
// fields are matched by name, a field the layout lacks keeps its default, one this build does
// not know is skipped.
//
// Encoding, field by field in layout order (all counts and lengths LEB128 varints):
//   s  string: p, q, n, then n bytes: the value is the first p bytes of the same field's value
//      in the record before (for attempts: the attempt before, in the segment), the n bytes,
//      then the last q bytes of that value. Names, models, prices and ids that share a prefix
//      with the record before cost a few bytes. request_id is always whole (p = q = 0), so
//      a segment holding a request id has its bytes in it: what find_usage searches.
//   l, i  signed integer: zigzag varint.   u  unsigned: varint.   b  one byte, 0 or 1.
//   a  attempts: a count, then each attempt's fields as listed in the parentheses.
// A segment's bytes were most of what the usage writer paid per record: each is written to the
// WAL and again at the checkpoint, and at 717 bytes per record (fixed-width) that copying was
// over a third of the writer's CPU.

// This build's layout (visit_usage_fields, visit_attempt_fields).
const std::string& usage_segment_layout();

// Encodes records into a segment body. Each record appended must stay alive (and unchanged)
// until the next append or start: the next one is encoded against it.
class SegmentEncoder {
 public:
  void start(std::string& body);  // a new segment: clears `body`
  void append(std::string& body, const UsageRecord& record);

  static constexpr std::size_t kSlots = 64;

 private:
  std::array<std::string_view, kSlots> previous_{};
};

// The bytes `request_id` is written as in a segment (it is never front-coded): a segment that
// holds a record of that request contains them.
std::string segment_request_id_bytes(std::string_view request_id);

class SegmentLayout {
 public:
  // Errors when the text is not a layout or names a type this build cannot read.
  static Result<SegmentLayout> parse(std::string_view text);

  SegmentLayout(SegmentLayout&&) noexcept;
  SegmentLayout& operator=(SegmentLayout&&) noexcept;
  ~SegmentLayout();

  struct Fields;  // usage_segment.cc
  const Fields& fields() const { return *fields_; }

 private:
  explicit SegmentLayout(std::unique_ptr<Fields> fields);
  std::unique_ptr<Fields> fields_;
};

// Reads the records of one segment body, in order. `layout` and `body` must outlive it.
class SegmentReader {
 public:
  SegmentReader(const SegmentLayout& layout, std::string_view body);
  ~SegmentReader();

  bool done() const { return body_.empty(); }
  // Reads the next record into `record` (which should be default-constructed). False when the
  // body ends inside it.
  bool next(UsageRecord& record);

 private:
  struct Scratch;

  const SegmentLayout::Fields& fields_;
  std::string_view body_;
  std::vector<std::string> previous_;  // the last value of each string field (by layout slot)
  std::unique_ptr<Scratch> scratch_;
};

// A record id as a prefix and a trailing decimal sequence, so the ledger can remember which ids
// it stored as runs of consecutive sequences per prefix ("7f3a-0-" 1..5000) instead of one index
// entry per record. The id is always the prefix followed by the sequence in decimal (nothing
// when it is -1, for an id not ending in a digit), so distinct ids never share a pair. Zeros
// before other digits stay in the prefix: "a-007" is ("a-00", 7).
struct RecordSequence {
  std::string_view prefix;
  std::int64_t sequence = -1;
};
RecordSequence split_record_id(std::string_view record_id);

}  // namespace sluice::store
