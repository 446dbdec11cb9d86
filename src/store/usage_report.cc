#include "store/usage_report.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/time_zone.h"
#include "store/usage_fields.h"

namespace sluice::store {
namespace {

constexpr std::uint32_t kMaxLimit = 100000;

Error bad(std::string message) { return Error(ErrorKind::kBadRequest, std::move(message)); }

bool digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) {
  if (pos + n > s.size()) {
    return false;
  }
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') {
      return false;
    }
    out = out * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return true;
}

unsigned days_in_month(std::int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// Text that goes to a terminal: control bytes (escape sequences in a feature tag) become '?'.
std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      c = '?';
    }
  }
  return out;
}

// Display width in code points (UTF-8 continuation bytes do not count).
std::size_t width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string csv_cell(std::string_view s, bool text) {
  std::string value(s);
  // A cell starting like a formula is run by spreadsheets (OWASP "CSV injection"); feature tags
  // come from request headers.
  if (text && !value.empty() && std::string_view("=+-@\t\r").find(value[0]) != std::string::npos) {
    value.insert(value.begin(), '\'');
  }
  if (value.find_first_of(",\"\r\n") == std::string::npos && value == s) {
    return value;
  }
  std::string out = "\"";
  for (char c : value) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  return out + "\"";
}

// A duration in microseconds as milliseconds with three decimals; -1 (not measured) as "-".
std::string format_us(std::int64_t us) {
  if (us < 0) {
    return "-";
  }
  return fmt::format("{}.{:03} ms", us / 1000, us % 1000);
}

struct Column {
  std::string name;
  bool text;
};

// `saved`: the columns of what answers served without an upstream call saved (always in CSV,
// for programs; in the table only when some row saved anything).
std::vector<Column> columns(const UsageQuery& query, bool saved) {
  std::vector<Column> out;
  for (Dimension d : query.group_by) {
    out.push_back({std::string(to_string(d)), true});
  }
  for (const char* name :
       {"requests", "failed", "input_tokens", "output_tokens", "cache_read_tokens",
        "cache_write_tokens", "reasoning_tokens", "cost", "unaccounted"}) {
    out.push_back({name, false});
  }
  if (saved) {
    for (const char* name : {"saved_input_tokens", "saved_output_tokens", "saved_cost"}) {
      out.push_back({name, false});
    }
  }
  return out;
}

std::vector<std::string> cells(const UsageRow& row, bool saved) {
  std::vector<std::string> out = row.group;
  for (std::uint64_t v : {row.requests, row.failed, row.input_tokens, row.output_tokens,
                          row.cache_read_tokens, row.cache_write_tokens, row.reasoning_tokens}) {
    out.push_back(std::to_string(v));
  }
  out.push_back(format_micros(row.cost_micros));
  out.push_back(std::to_string(row.unaccounted));
  if (saved) {
    out.push_back(std::to_string(row.saved_input_tokens));
    out.push_back(std::to_string(row.saved_output_tokens));
    out.push_back(format_micros(row.saved_cost_micros));
  }
  return out;
}

std::string render_json(const UsageQuery& query, const std::vector<UsageRow>& rows) {
  boost::json::object out;
  out["from"] = query.from_ms > 0 ? boost::json::value(format_rfc3339_ms(query.from_ms)) : nullptr;
  out["to"] = query.to_ms != std::numeric_limits<std::int64_t>::max()
                  ? boost::json::value(format_rfc3339_ms(query.to_ms))
                  : nullptr;
  boost::json::array group_by;
  for (Dimension d : query.group_by) {
    group_by.emplace_back(to_string(d));
  }
  out["group_by"] = std::move(group_by);
  boost::json::array list;
  for (const UsageRow& row : rows) {
    boost::json::object o;
    for (std::size_t i = 0; i < query.group_by.size() && i < row.group.size(); ++i) {
      o[to_string(query.group_by[i])] = row.group[i];
    }
    o["requests"] = row.requests;
    o["failed"] = row.failed;
    o["input_tokens"] = row.input_tokens;
    o["output_tokens"] = row.output_tokens;
    o["cache_read_tokens"] = row.cache_read_tokens;
    o["cache_write_tokens"] = row.cache_write_tokens;
    o["reasoning_tokens"] = row.reasoning_tokens;
    // Both: the decimal for people, the integer for programs that must not parse a float.
    o["cost"] = format_micros(row.cost_micros);
    o["cost_micros"] = row.cost_micros;
    o["unaccounted"] = row.unaccounted;
    // Served without an upstream call (cache hits, coalesced followers, idempotent replays).
    o["saved_input_tokens"] = row.saved_input_tokens;
    o["saved_output_tokens"] = row.saved_output_tokens;
    o["saved_cost"] = format_micros(row.saved_cost_micros);
    o["saved_cost_micros"] = row.saved_cost_micros;
    list.push_back(std::move(o));
  }
  out["rows"] = std::move(list);
  return boost::json::serialize(out) + "\n";
}

std::string render_csv(const UsageQuery& query, const std::vector<UsageRow>& rows) {
  const std::vector<Column> cols = columns(query, true);
  std::string out;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i > 0) {
      out += ',';
    }
    out += cols[i].name;
  }
  out += "\r\n";
  for (const UsageRow& row : rows) {
    const std::vector<std::string> values = cells(row, true);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) {
        out += ',';
      }
      out += csv_cell(values[i], i < cols.size() && cols[i].text);
    }
    out += "\r\n";
  }
  return out;
}

std::string render_table(const UsageQuery& query, const std::vector<UsageRow>& rows) {
  const bool saved = std::any_of(rows.begin(), rows.end(), [](const UsageRow& r) {
    return r.saved_input_tokens + r.saved_output_tokens > 0;
  });
  const std::vector<Column> cols = columns(query, saved);
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header;
  for (const Column& c : cols) {
    header.push_back(c.name);
  }
  table.push_back(header);
  for (const UsageRow& row : rows) {
    std::vector<std::string> values = cells(row, saved);
    for (std::size_t i = 0; i < query.group_by.size() && i < values.size(); ++i) {
      values[i] = values[i].empty() ? "(none)" : printable(values[i]);
    }
    table.push_back(std::move(values));
  }
  std::vector<std::size_t> widths(cols.size(), 0);
  for (const auto& line : table) {
    for (std::size_t i = 0; i < line.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], width(line[i]));
    }
  }
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (std::size_t i = 0; i < line.size() && i < widths.size(); ++i) {
      const std::string pad(widths[i] - width(line[i]), ' ');
      if (i > 0) {
        text += "  ";
      }
      text += cols[i].text ? line[i] + pad : pad + line[i];
    }
    while (!text.empty() && text.back() == ' ') {
      text.pop_back();
    }
    out += text + "\n";
  }
  if (rows.size() == query.limit) {
    out += fmt::format("(first {} rows; raise limit= for more)\n", query.limit);
  }
  return out;
}

boost::json::object record_json(const UsageRecord& r) {
  boost::json::object o;
  visit_usage_fields(r, [&](std::string_view name, const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::vector<AttemptRecord>>) {
      o[name] = boost::json::parse(encode_attempts(v));
    } else {
      o[name] = v;
    }
  });
  // cost_items is JSON already: embedded as a value when it parses, else kept as text.
  boost::system::error_code ec;
  boost::json::value items = boost::json::parse(r.cost_items, ec);
  if (!ec) {
    o["cost_items"] = std::move(items);
  }
  o["cost"] = format_micros(r.cost_micros);
  o["saved_cost"] = format_micros(r.saved_cost_micros);
  return o;
}

std::string render_record_text(const UsageRecord& r) {
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : printable(s); };
  std::string out;
  out +=
      fmt::format("request    {}  (record {})\n", printable(r.request_id), printable(r.record_id));
  out += fmt::format("time       {} -> {}\n", format_rfc3339_ms(r.started_at_ms),
                     format_rfc3339_ms(r.ended_at_ms));
  out +=
      fmt::format("who        key {}  key_group {}  tenant {}  feature {}\n", or_dash(r.key_name),
                  or_dash(r.key_group), or_dash(r.tenant), or_dash(r.feature));
  out += fmt::format("what       {} {} {}  alias {} -> {} / {}\n", or_dash(r.ingress),
                     or_dash(r.operation), r.stream ? "stream" : "non-stream", or_dash(r.alias),
                     or_dash(r.provider), or_dash(r.model));
  out += fmt::format("result     status {}  outcome {}  finish {}  error {}\n", r.status,
                     or_dash(r.outcome), or_dash(r.finish_reason), or_dash(r.error_class));
  if (r.usage_reported) {
    out += fmt::format(
        "usage      input {} (cache read {}, cache write {})  output {} (reasoning {})\n",
        r.input_tokens, r.cache_read_tokens, r.cache_write_tokens, r.output_tokens,
        r.reasoning_tokens);
  } else {
    out += "usage      not reported by the upstream\n";
  }
  if (r.priced) {
    out += fmt::format("cost       {} {}  price version {}\n", format_micros(r.cost_micros),
                       or_dash(r.currency), or_dash(r.price_version));
  } else {
    out += fmt::format("cost       unaccounted (no price for this model)  price version {}\n",
                       or_dash(r.price_version));
  }
  if (!r.cost_items.empty()) {
    out += fmt::format("cost items {}\n", printable(r.cost_items));
  }
  if (r.saved_input_tokens + r.saved_output_tokens > 0) {
    out += fmt::format("saved      input {}  output {}  cost {} {} (no upstream call)\n",
                       r.saved_input_tokens, r.saved_output_tokens,
                       format_micros(r.saved_cost_micros), or_dash(r.currency));
  }
  if (!r.guardrails.empty()) {
    out += fmt::format("guardrails {}\n", printable(r.guardrails));
  }
  out += fmt::format("timings    total {}  gateway overhead {}  queueing {}\n",
                     format_us(r.total_us), format_us(r.overhead_us), format_us(r.queue_us));
  out += fmt::format("           upstream first byte {}  first token {}  output {}\n",
                     format_us(r.upstream_ttfb_us), format_us(r.ttft_us),
                     r.output_tokens_per_s_milli < 0
                         ? std::string("-")
                         : fmt::format("{}.{:03} tokens/s", r.output_tokens_per_s_milli / 1000,
                                       r.output_tokens_per_s_milli % 1000));
  out += fmt::format("attempts   {}\n", r.attempts.size());
  std::int64_t n = 0;
  for (const AttemptRecord& a : r.attempts) {
    out += fmt::format(
        "  #{} {} / {} (path {})  status {}  error {}\n"
        "     backoff before {} ms  pool+connect {}  first byte {}  duration {}  {}\n",
        ++n, or_dash(a.provider), or_dash(a.model), or_dash(a.path), a.status,
        or_dash(a.error_class), a.backoff_ms, format_us(a.acquire_us), format_us(a.first_byte_us),
        format_us(a.duration_us), a.reused_connection ? "reused connection" : "new connection");
  }
  return out;
}

}  // namespace

const std::vector<std::string_view>& usage_report_parameters() {
  static const std::vector<std::string_view> names = {
      "by",    "since",    "until", "key",     "key_group", "tenant", "feature",
      "alias", "provider", "model", "outcome", "limit",     "format"};
  return names;
}

std::string format_micros(std::int64_t micros) {
  // Through unsigned so INT64_MIN has a magnitude.
  const bool negative = micros < 0;
  const std::uint64_t magnitude =
      negative ? ~static_cast<std::uint64_t>(micros) + 1 : static_cast<std::uint64_t>(micros);
  return fmt::format("{}{}.{:06}", negative ? "-" : "", magnitude / 1000000, magnitude % 1000000);
}

std::optional<std::int64_t> parse_report_time(std::string_view text, std::int64_t now_ms) {
  if (text.empty()) {
    return std::nullopt;
  }
  // Relative: 7d, 24h, 90m.
  const char unit = text.back();
  if (unit == 'd' || unit == 'h' || unit == 'm') {
    std::uint64_t n = 0;
    const std::string_view number = text.substr(0, text.size() - 1);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (ec != std::errc() || end != number.data() + number.size() || number.empty() ||
        n > 3650ULL * 24 * 60) {
      return std::nullopt;
    }
    const std::int64_t unit_ms = unit == 'd' ? 86400000 : unit == 'h' ? 3600000 : 60000;
    return now_ms - static_cast<std::int64_t>(n) * unit_ms;
  }
  // Absolute: a UTC date (its midnight) or an RFC 3339 date-time.
  if (text.size() > 10) {
    auto t = parse_rfc3339_ms(text);
    return t ? std::optional<std::int64_t>(*t) : std::nullopt;
  }
  unsigned year, month, day;
  if (text.size() != 10 || !digits(text, 0, 4, year) || text[4] != '-' ||
      !digits(text, 5, 2, month) || text[7] != '-' || !digits(text, 8, 2, day) || month < 1 ||
      month > 12 || day < 1 || day > days_in_month(year, month)) {
    return std::nullopt;
  }
  return days_from_civil(static_cast<std::int32_t>(year), month, day) * 86400000;
}

Result<UsageReportRequest> parse_usage_report(
    const std::vector<std::pair<std::string, std::string>>& params, std::int64_t now_ms) {
  UsageReportRequest out;
  std::vector<std::string_view> seen;
  for (const auto& [name, value] : params) {
    const auto& known = usage_report_parameters();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (std::string_view k : known) {
        list += (list.empty() ? "" : ", ") + std::string(k);
      }
      return bad(
          fmt::format("unknown parameter \"{}\" (expected one of {})", printable(name), list));
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return bad(fmt::format("{}: given twice", name));
    }
    seen.push_back(name);

    if (name == "by") {
      std::string_view rest = value;
      while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const std::optional<Dimension> d = parse_dimension(item);
        if (!d) {
          return bad(fmt::format(
              "by: unknown dimension \"{}\" (expected key, key_group, tenant, feature, alias, "
              "provider, model, outcome, day or hour, comma-separated)",
              printable(item)));
        }
        if (std::find(out.query.group_by.begin(), out.query.group_by.end(), *d) !=
            out.query.group_by.end()) {
          return bad(fmt::format("by: {} given twice", item));
        }
        out.query.group_by.push_back(*d);
      }
    } else if (name == "since" || name == "until") {
      const std::optional<std::int64_t> t = parse_report_time(value, now_ms);
      if (!t) {
        return bad(
            fmt::format("{}: expected a time like 7d, 24h, 90m (before now), 2026-11-01 or "
                        "2026-11-01T10:00:00Z (UTC), got \"{}\"",
                        name, printable(value)));
      }
      (name == "since" ? out.query.from_ms : out.query.to_ms) = *t;
    } else if (name == "limit") {
      std::uint32_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n == 0 || n > kMaxLimit) {
        return bad(fmt::format("limit: expected a number of rows from 1 to {}, got \"{}\"",
                               kMaxLimit, printable(value)));
      }
      out.query.limit = n;
    } else if (name == "format") {
      if (value == "table") {
        out.format = ReportFormat::kTable;
      } else if (value == "json") {
        out.format = ReportFormat::kJson;
      } else if (value == "csv") {
        out.format = ReportFormat::kCsv;
      } else {
        return bad(
            fmt::format("format: expected table, json or csv, got \"{}\"", printable(value)));
      }
    } else {
      // An exact-match filter: the parameter is the dimension's name.
      out.query.where.emplace_back(*parse_dimension(name), value);
    }
  }
  if (out.query.from_ms >= out.query.to_ms) {
    return bad(fmt::format("since ({}) must be before until ({})",
                           format_rfc3339_ms(out.query.from_ms),
                           format_rfc3339_ms(out.query.to_ms)));
  }
  return out;
}

std::string render_usage(const UsageQuery& query, const std::vector<UsageRow>& rows,
                         ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson:
      return render_json(query, rows);
    case ReportFormat::kCsv:
      return render_csv(query, rows);
    case ReportFormat::kTable:
      break;
  }
  return render_table(query, rows);
}

std::string render_usage_record(const UsageRecord& record, ReportFormat format) {
  if (format == ReportFormat::kJson) {
    return boost::json::serialize(record_json(record)) + "\n";
  }
  return render_record_text(record);
}

}  // namespace sluice::store
