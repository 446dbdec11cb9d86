#include "faults.h"

#include <charconv>

namespace sluice::mock {
namespace {

bool is_off(std::string_view v) { return v == "none" || v == "off" || v == "-1"; }

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
    v.remove_prefix(1);
  }
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) {
    v.remove_suffix(1);
  }
  return v;
}

Error bad_header(std::string_view what, std::string_view value, std::string_view why) {
  std::string msg = "invalid ";
  msg += what;
  msg += " value '";
  msg += value.substr(0, 64);
  msg += "': ";
  msg += why;
  return Error(ErrorKind::kBadRequest, std::move(msg));
}

}  // namespace

Result<std::uint32_t> parse_fault_number(std::string_view text, std::string_view what) {
  std::string_view v = trim(text);
  std::uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
    return bad_header(what, text, "expected a non-negative integer");
  }
  if (n > kMaxFaultValue) {
    return bad_header(what, text, "too large");
  }
  return static_cast<std::uint32_t>(n);
}

Result<std::vector<int>> parse_status_list(std::string_view text) {
  std::vector<int> out;
  std::string_view rest = text;
  while (true) {
    std::size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    int n = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || n < 100 ||
        n > 599) {
      return bad_header("x-mock-status", text, "expected HTTP statuses 100..599, comma-separated");
    }
    out.push_back(n);
    if (comma == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(comma + 1);
  }
  return out;
}

Result<Faults> parse_faults(const HeaderList& headers, const Faults& defaults) {
  Faults f = defaults;
  struct NumberField {
    std::string_view header;
    std::uint32_t Faults::*field;
  };
  static constexpr NumberField kNumbers[] = {
      {"x-mock-latency-ms", &Faults::latency_ms},
      {"x-mock-first-byte-ms", &Faults::first_byte_ms},
      {"x-mock-pace-ms", &Faults::pace_ms},
      {"x-mock-events", &Faults::events},
  };
  for (const auto& nf : kNumbers) {
    if (auto v = find_header(headers, nf.header)) {
      auto n = parse_fault_number(*v, nf.header);
      if (!n) {
        return n.error();
      }
      f.*(nf.field) = *n;
    }
  }

  if (f.events > kMaxEvents) {
    return bad_header("x-mock-events", std::to_string(f.events), "at most 1000000");
  }

  struct OptionalField {
    std::string_view header;
    std::optional<std::uint32_t> Faults::*field;
  };
  static constexpr OptionalField kOptionals[] = {
      {"x-mock-stall-after", &Faults::stall_after},
      {"x-mock-disconnect-after", &Faults::disconnect_after},
  };
  for (const auto& of : kOptionals) {
    if (auto v = find_header(headers, of.header)) {
      if (is_off(trim(*v))) {
        f.*(of.field) = std::nullopt;
        continue;
      }
      auto n = parse_fault_number(*v, of.header);
      if (!n) {
        return n.error();
      }
      f.*(of.field) = *n;
    }
  }

  if (auto v = find_header(headers, "x-mock-disconnect-mode")) {
    std::string_view m = trim(*v);
    if (m == "fin" || m == "close") {
      f.disconnect_mode = DisconnectMode::kFin;
    } else if (m == "rst" || m == "reset") {
      f.disconnect_mode = DisconnectMode::kReset;
    } else {
      return bad_header("x-mock-disconnect-mode", *v, "expected fin or rst");
    }
  }

  if (auto v = find_header(headers, "x-mock-status")) {
    if (is_off(trim(*v))) {
      f.status.clear();
      f.sequence_key.clear();
    } else {
      auto list = parse_status_list(*v);
      if (!list) {
        return list.error();
      }
      f.status = std::move(*list);
      f.sequence_key = std::string(trim(*v));
    }
  }
  if (auto v = find_header(headers, "x-mock-sequence-key")) {
    f.sequence_key = std::string(trim(*v));
  }
  if (auto v = find_header(headers, "x-mock-retry-after")) {
    f.retry_after = std::string(trim(*v));
  }
  if (auto v = find_header(headers, "x-mock-fixture")) {
    f.fixture = std::string(trim(*v));
  }
  if (auto v = find_header(headers, "x-mock-raw-body")) {
    f.raw_body = std::string(*v);
  }
  if (auto v = find_header(headers, "x-mock-content-type")) {
    f.content_type = std::string(trim(*v));
  }
  return f;
}

}  // namespace sluice::mock
