#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/usage_record.h"

namespace sluice::metering {

// The usage sink's append-only local spool: where records go while the store is down or slow,
// until they are replayed into it.
//
// On disk, a sequence of frames, each
//   magic "SLSP" (4 bytes) | payload length (u32, little endian) | CRC-32 of the payload (u32,
//   little endian) | payload (the record as one JSON object, record_json.h)
// A frame is acknowledged once append() returns: it was written and fdatasync'd. A crash can
// leave only the frame being written torn; open() detects it (short frame or bad checksum at
// the end) and cuts it off, so frames appended later are never hidden behind it. A damaged
// frame in the middle is skipped by scanning for the next valid frame (counted in
// skipped_bytes()).
//
// Not thread-safe: the usage sink's writer thread is its only user.
class Spool {
 public:
  // Opens (creating if needed) and scans `path`. Fails when the file cannot be opened.
  static Result<std::unique_ptr<Spool>> open(std::string path);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Appends every record and fdatasyncs. On error the file is cut back to where it was: a
  // batch is acknowledged entirely or not at all.
  Result<void> append(std::span<const store::UsageRecord> records);

  struct Chunk {
    std::vector<store::UsageRecord> records;
    std::uint64_t next_offset = 0;  // where the next read() continues
    bool at_end = false;            // nothing valid follows next_offset
  };
  // Up to `max_records` valid records starting at byte `offset` (0 = the beginning).
  Result<Chunk> read(std::uint64_t offset, std::size_t max_records) const;
  // Empties the file (every record in it is stored elsewhere now) and fsyncs.
  Result<void> clear();

  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t records() const { return records_; }
  // Bytes of damaged frames skipped or cut off at open.
  std::uint64_t skipped_bytes() const { return skipped_bytes_; }

 private:
  Spool(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Result<void> scan();

  std::string path_;
  int fd_ = -1;
  std::uint64_t bytes_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t skipped_bytes_ = 0;
};

}  // namespace sluice::metering
