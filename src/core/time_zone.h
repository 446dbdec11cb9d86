#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sluice {

// Calendar fields of an instant in some time zone.
struct LocalTime {
  std::int32_t year = 1970;
  std::uint8_t month = 1;               // 1..12
  std::uint8_t day = 1;                 // 1..31
  std::uint8_t weekday = 4;             // 0 = Sunday .. 6 = Saturday
  std::int32_t second_of_day = 0;       // 0..86399
  std::int32_t utc_offset_seconds = 0;  // east of UTC
};

// An IANA time zone read from a TZif file (RFC 8536, version 2 or later: the 64-bit data
// block and the POSIX TZ footer that gives the rule for instants after the last recorded
// transition), or a POSIX TZ rule on its own ("CET-1CEST,M3.5.0,M10.5.0/3"). Immutable and
// cheap to copy (shared data); every method is pure and thread-safe. Loading reads a file and
// is meant for start-up and config loading, never for a worker thread.
class TimeZone {
 public:
  // UTC; never fails, needs no file.
  TimeZone();

  // "UTC" and "Etc/UTC" need no file; other names are read from $TZDIR (when set) or
  // /usr/share/zoneinfo. Names are checked ("../" and absolute paths are rejected).
  static Result<TimeZone> load(std::string_view name);
  // Parses TZif bytes; `name` is what name() returns.
  static Result<TimeZone> from_tzif(std::string_view bytes, std::string name);
  // A POSIX TZ rule string (the TZif footer format, RFC 8536 section 3.3).
  static Result<TimeZone> from_posix(std::string_view rule);

  const std::string& name() const;
  // Offset east of UTC, in seconds, in effect at `unix_seconds`.
  std::int32_t offset_at(std::int64_t unix_seconds) const;
  // The local calendar fields of `unix_ms` (floor to the second).
  LocalTime local(std::int64_t unix_ms) const;

  struct Data;

 private:
  explicit TimeZone(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
};

// Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's algorithms).
std::int64_t days_from_civil(std::int32_t year, unsigned month, unsigned day);
void civil_from_days(std::int64_t days, std::int32_t& year, unsigned& month, unsigned& day);

// An RFC 3339 date-time ("2026-11-30T10:00:00Z", "2026-11-30T11:00:00.250+01:00") as unix
// milliseconds. Seconds may carry up to 3 fractional digits; the offset is required.
Result<std::int64_t> parse_rfc3339_ms(std::string_view text);
// Unix milliseconds as "2026-11-30T10:00:00Z" (".250" added when there are milliseconds).
std::string format_rfc3339_ms(std::int64_t unix_ms);

}  // namespace sluice
