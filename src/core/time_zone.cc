#include "core/time_zone.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace sluice {

namespace {

Error tz_error(std::string message) { return Error(ErrorKind::kBadRequest, std::move(message)); }

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) {
    --q;
  }
  return q;
}

bool is_leap(std::int32_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(std::int32_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && is_leap(y)) ? 29 : kDays[m - 1];
}

// A POSIX TZ date rule: Jn (1..365, Feb 29 never counted), n (0..365), or Mm.w.d.
struct DateRule {
  enum class Kind : std::uint8_t { kJulian1, kJulian0, kMonthWeekDay };
  Kind kind = Kind::kMonthWeekDay;
  int day = 0;  // Jn / n
  int month = 0, week = 0, weekday = 0;
  std::int32_t time = 7200;  // seconds after local midnight; may be negative or > 24h

  // Days since the epoch of the rule's date in `year`.
  std::int64_t day_in(std::int32_t year) const {
    const std::int64_t jan1 = days_from_civil(year, 1, 1);
    switch (kind) {
      case Kind::kJulian1: {
        std::int64_t d = jan1 + day - 1;
        if (is_leap(year) && day >= 60) {
          ++d;  // Jn never counts February 29
        }
        return d;
      }
      case Kind::kJulian0:
        return jan1 + day;
      case Kind::kMonthWeekDay:
        break;
    }
    const std::int64_t first = days_from_civil(year, static_cast<unsigned>(month), 1);
    const int first_weekday = static_cast<int>(((first % 7) + 11) % 7);  // 1970-01-01: Thursday
    int d = 1 + (weekday - first_weekday + 7) % 7 + (week - 1) * 7;
    while (d > static_cast<int>(days_in_month(year, static_cast<unsigned>(month)))) {
      d -= 7;
    }
    return first + d - 1;
  }
};

struct PosixRule {
  std::int32_t std_offset = 0;  // east of UTC
  bool has_dst = false;
  std::int32_t dst_offset = 0;
  DateRule start, end;

  std::int32_t offset_at(std::int64_t t) const {
    if (!has_dst) {
      return std_offset;
    }
    const std::int64_t local_days = floor_div(t + std_offset, 86400);
    std::int32_t year;
    unsigned month, day;
    civil_from_days(local_days, year, month, day);
    // Start is given in standard local time, end in daylight local time.
    const std::int64_t start_utc = start.day_in(year) * 86400 + start.time - std_offset;
    const std::int64_t end_utc = end.day_in(year) * 86400 + end.time - dst_offset;
    const bool in_dst =
        start_utc < end_utc ? (t >= start_utc && t < end_utc) : (t >= start_utc || t < end_utc);
    return in_dst ? dst_offset : std_offset;
  }
};

// Parses the pieces of a POSIX TZ string; every method advances `pos` or reports false.
class PosixParser {
 public:
  explicit PosixParser(std::string_view text) : s_(text) {}

  bool parse(PosixRule& out) {
    if (!name() || !offset(out.std_offset, true)) {
      return false;
    }
    if (pos_ == s_.size()) {
      return true;
    }
    out.has_dst = true;
    if (!name()) {
      return false;
    }
    out.dst_offset = out.std_offset + 3600;
    if (pos_ < s_.size() && s_[pos_] != ',') {
      if (!offset(out.dst_offset, true)) {
        return false;
      }
    }
    if (pos_ == s_.size()) {
      // No rule: RFC 8536 leaves this to the implementation; the US rules of 2007 are
      // what glibc assumes.
      out.start = DateRule{DateRule::Kind::kMonthWeekDay, 0, 3, 2, 0, 7200};
      out.end = DateRule{DateRule::Kind::kMonthWeekDay, 0, 11, 1, 0, 7200};
      return true;
    }
    return eat(',') && date(out.start) && eat(',') && date(out.end) && pos_ == s_.size();
  }

 private:
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool name() {
    if (eat('<')) {
      const std::size_t close = s_.find('>', pos_);
      if (close == std::string_view::npos || close - pos_ < 3) {
        return false;
      }
      pos_ = close + 1;
      return true;
    }
    const std::size_t begin = pos_;
    while (pos_ < s_.size() &&
           ((s_[pos_] >= 'A' && s_[pos_] <= 'Z') || (s_[pos_] >= 'a' && s_[pos_] <= 'z'))) {
      ++pos_;
    }
    return pos_ - begin >= 3;
  }

  bool number(int& out, int max) {
    const std::size_t begin = pos_;
    out = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && pos_ - begin < 4) {
      out = out * 10 + (s_[pos_] - '0');
      ++pos_;
    }
    return pos_ > begin && out <= max;
  }

  // [+-]hh[:mm[:ss]]; POSIX offsets count west of UTC, so `negate` flips them to east.
  bool offset(std::int32_t& out, bool negate) {
    int sign = 1;
    if (eat('-')) {
      sign = -1;
    } else {
      eat('+');
    }
    int h = 0, m = 0, sec = 0;
    if (!number(h, 167)) {
      return false;
    }
    if (eat(':') && (!number(m, 59) || (eat(':') && !number(sec, 59)))) {
      return false;
    }
    out = sign * (h * 3600 + m * 60 + sec);
    if (negate) {
      out = -out;
    }
    return true;
  }

  bool date(DateRule& out) {
    if (eat('M')) {
      out.kind = DateRule::Kind::kMonthWeekDay;
      if (!number(out.month, 12) || out.month < 1 || !eat('.') || !number(out.week, 5) ||
          out.week < 1 || !eat('.') || !number(out.weekday, 6)) {
        return false;
      }
    } else if (eat('J')) {
      out.kind = DateRule::Kind::kJulian1;
      if (!number(out.day, 365) || out.day < 1) {
        return false;
      }
    } else {
      out.kind = DateRule::Kind::kJulian0;
      if (!number(out.day, 365)) {
        return false;
      }
    }
    out.time = 7200;
    if (eat('/')) {
      return offset(out.time, false);
    }
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

std::int64_t read_be(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | p[i];
  }
  if (bytes == 4) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  }
  return static_cast<std::int64_t>(v);
}

bool valid_zone_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '/' || name.front() == '.') {
    return false;
  }
  if (name.find("..") != std::string_view::npos) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '_' || c == '-' || c == '+';
  });
}

}  // namespace

struct TimeZone::Data {
  std::string name = "UTC";
  std::vector<std::int64_t> transitions;  // ascending unix seconds
  std::vector<std::int32_t> offsets;      // offset in effect from transitions[i]
  std::int32_t initial_offset = 0;        // before the first transition
  bool has_footer = false;
  PosixRule footer;
};

std::int64_t days_from_civil(std::int32_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int32_t& year, unsigned& month, unsigned& day) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = static_cast<std::int32_t>(static_cast<std::int64_t>(yoe) + era * 400 + (month <= 2));
}

TimeZone::TimeZone() : data_(std::make_shared<const Data>()) {}

const std::string& TimeZone::name() const { return data_->name; }

Result<TimeZone> TimeZone::from_posix(std::string_view rule) {
  auto data = std::make_shared<Data>();
  data->name = std::string(rule);
  PosixParser parser(rule);
  if (!parser.parse(data->footer)) {
    return tz_error("invalid POSIX TZ rule \"" + std::string(rule) + "\"");
  }
  data->has_footer = true;
  data->initial_offset = data->footer.std_offset;
  return TimeZone(std::move(data));
}

Result<TimeZone> TimeZone::from_tzif(std::string_view bytes, std::string name) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t size = bytes.size();
  const auto bad = [&](std::string_view why) {
    return tz_error("time zone " + name + ": invalid TZif data (" + std::string(why) + ")");
  };
  struct Counts {
    std::int64_t isut, isstd, leap, time, type, chars;
  };
  const auto header = [&](std::size_t at, Counts& c) {
    if (size < at + 44 || std::string_view(bytes.data() + at, 4) != "TZif") {
      return false;
    }
    const unsigned char* h = p + at + 20;
    c = {read_be(h, 4),      read_be(h + 4, 4),  read_be(h + 8, 4),
         read_be(h + 12, 4), read_be(h + 16, 4), read_be(h + 20, 4)};
    return c.isut >= 0 && c.isstd >= 0 && c.leap >= 0 && c.time >= 0 && c.type > 0 &&
           c.type <= 256 && c.chars >= 0 && c.time < (1 << 20);
  };
  Counts v1;
  if (!header(0, v1)) {
    return bad("header");
  }
  if (p[4] < '2') {
    return bad("version 1 files are not supported; install a current tzdata");
  }
  const std::size_t v1_size = static_cast<std::size_t>(v1.time * 5 + v1.type * 6 + v1.chars +
                                                       v1.leap * 8 + v1.isstd + v1.isut);
  const std::size_t at = 44 + v1_size;
  Counts c;
  if (!header(at, c)) {
    return bad("second header");
  }
  const std::size_t body = at + 44;
  const std::size_t types_at = body + static_cast<std::size_t>(c.time) * 9;
  const std::size_t end =
      types_at + static_cast<std::size_t>(c.type * 6 + c.chars + c.leap * 12 + c.isstd + c.isut);
  if (end > size) {
    return bad("truncated");
  }
  auto data = std::make_shared<Data>();
  data->name = std::move(name);
  std::vector<std::int32_t> type_offsets;
  for (std::int64_t i = 0; i < c.type; ++i) {
    type_offsets.push_back(static_cast<std::int32_t>(read_be(p + types_at + i * 6, 4)));
  }
  data->initial_offset = type_offsets.front();
  for (std::int64_t i = 0; i < c.time; ++i) {
    const std::int64_t t = read_be(p + body + i * 8, 8);
    const unsigned idx = p[body + c.time * 8 + i];
    if (idx >= type_offsets.size() ||
        (!data->transitions.empty() && t <= data->transitions.back())) {
      return bad("transition table");
    }
    data->transitions.push_back(t);
    data->offsets.push_back(type_offsets[idx]);
  }
  // Footer: "\n<POSIX TZ>\n"; empty means no rule after the table.
  if (end < size && p[end] == '\n') {
    const std::size_t close = bytes.find('\n', end + 1);
    if (close == std::string_view::npos) {
      return bad("footer");
    }
    const std::string_view rule = bytes.substr(end + 1, close - end - 1);
    if (!rule.empty()) {
      PosixParser parser(rule);
      if (!parser.parse(data->footer)) {
        return bad("footer rule \"" + std::string(rule) + "\"");
      }
      data->has_footer = true;
    }
  }
  return TimeZone(std::move(data));
}

Result<TimeZone> TimeZone::load(std::string_view name) {
  if (name == "UTC" || name == "Etc/UTC") {
    auto data = std::make_shared<Data>();
    data->name = std::string(name);
    return TimeZone(std::move(data));
  }
  if (!valid_zone_name(name)) {
    return tz_error("invalid time zone name \"" + std::string(name) + "\"");
  }
  const char* dir = std::getenv("TZDIR");
  const std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo") + "/" +
      std::string(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return tz_error("unknown time zone \"" + std::string(name) + "\" (no file " + path + ")");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (buffer.str().size() > (1u << 20)) {
    return tz_error("time zone file " + path + " is too large");
  }
  return from_tzif(buffer.str(), std::string(name));
}

std::int32_t TimeZone::offset_at(std::int64_t t) const {
  const Data& d = *data_;
  if (d.transitions.empty()) {
    return d.has_footer ? d.footer.offset_at(t) : d.initial_offset;
  }
  if (t < d.transitions.front()) {
    return d.initial_offset;
  }
  if (t >= d.transitions.back() && d.has_footer) {
    return d.footer.offset_at(t);
  }
  const auto it = std::upper_bound(d.transitions.begin(), d.transitions.end(), t);
  return d.offsets[static_cast<std::size_t>(it - d.transitions.begin()) - 1];
}

LocalTime TimeZone::local(std::int64_t unix_ms) const {
  const std::int64_t t = floor_div(unix_ms, 1000);
  LocalTime out;
  out.utc_offset_seconds = offset_at(t);
  const std::int64_t local = t + out.utc_offset_seconds;
  const std::int64_t days = floor_div(local, 86400);
  out.second_of_day = static_cast<std::int32_t>(local - days * 86400);
  out.weekday = static_cast<std::uint8_t>(((days % 7) + 11) % 7);
  unsigned month, day;
  civil_from_days(days, out.year, month, day);
  out.month = static_cast<std::uint8_t>(month);
  out.day = static_cast<std::uint8_t>(day);
  return out;
}

Result<std::int64_t> parse_rfc3339_ms(std::string_view text) {
  const auto bad = [&] {
    return tz_error("invalid RFC 3339 date-time \"" + std::string(text) +
                    "\" (expected e.g. 2026-11-30T10:00:00Z)");
  };
  std::size_t pos = 0;
  const auto digits = [&](std::size_t n, int& out) {
    if (pos + n > text.size()) {
      return false;
    }
    out = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = text[pos + i];
      if (c < '0' || c > '9') {
        return false;
      }
      out = out * 10 + (c - '0');
    }
    pos += n;
    return true;
  };
  const auto eat = [&](char c) {
    if (pos < text.size() && (text[pos] == c || (c == 'T' && text[pos] == 't'))) {
      ++pos;
      return true;
    }
    return false;
  };
  int y, mo, d, h, mi, s;
  if (!digits(4, y) || !eat('-') || !digits(2, mo) || !eat('-') || !digits(2, d) || !eat('T') ||
      !digits(2, h) || !eat(':') || !digits(2, mi) || !eat(':') || !digits(2, s)) {
    return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > static_cast<int>(days_in_month(y, mo)) || h > 23 ||
      mi > 59 || s > 59) {
    return bad();
  }
  int ms = 0;
  if (eat('.')) {
    const std::size_t begin = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (pos - begin < 3) {
        ms = ms * 10 + (text[pos] - '0');
      } else if (text[pos] != '0') {
        return bad();  // finer than a millisecond
      }
      ++pos;
    }
    if (pos == begin) {
      return bad();
    }
    for (std::size_t n = pos - begin; n < 3; ++n) {
      ms *= 10;
    }
  }
  std::int64_t offset = 0;
  if (eat('Z') || eat('z')) {
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om;
    if (!digits(2, oh) || !eat(':') || !digits(2, om) || oh > 23 || om > 59) {
      return bad();
    }
    offset = sign * (oh * 3600 + om * 60);
  } else {
    return bad();
  }
  if (pos != text.size()) {
    return bad();
  }
  const std::int64_t seconds =
      days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 +
      mi * 60 + s - offset;
  return seconds * 1000 + ms;
}

std::string format_rfc3339_ms(std::int64_t unix_ms) {
  const std::int64_t seconds = floor_div(unix_ms, 1000);
  const int ms = static_cast<int>(unix_ms - seconds * 1000);
  const std::int64_t days = floor_div(seconds, 86400);
  const int sod = static_cast<int>(seconds - days * 86400);
  std::int32_t y;
  unsigned mo, d;
  civil_from_days(days, y, mo, d);
  char buf[40];
  int n = std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d", y, mo, d, sod / 3600,
                        sod / 60 % 60, sod % 60);
  if (ms != 0) {
    n += std::snprintf(buf + n, sizeof(buf) - static_cast<std::size_t>(n), ".%03d", ms);
  }
  return std::string(buf, static_cast<std::size_t>(n)) + "Z";
}

}  // namespace sluice
