#include "faults.h"

#include <algorithm>
#include <charconv>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

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

// Comma-separated decimal integers, each accepted by `ok`. `what` names the header and
// `expected` says what a good value looks like.
Result<std::vector<int>> parse_int_list(std::string_view text, std::string_view what,
                                        std::string_view expected, bool (*ok)(int)) {
  std::vector<int> out;
  std::string_view rest = text;
  while (true) {
    std::size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    int n = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || !ok(n)) {
      return bad_header(what, text, expected);
    }
    out.push_back(n);
    if (comma == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(comma + 1);
  }
  return out;
}

// "1" / "true" or "0" / "false".
Result<bool> parse_fault_flag(std::string_view text, std::string_view what) {
  std::string_view v = trim(text);
  if (v == "1" || v == "true") {
    return true;
  }
  if (v == "0" || v == "false") {
    return false;
  }
  return bad_header(what, text, "expected 1 or 0");
}

// One Faults member and the header that sets it.
template <class T>
struct HeaderField {
  std::string_view header;
  T Faults::*field;
};

// Sets each member in `table` whose header the request carries to parse(value, header).
template <class T, std::size_t N, class Parse>
Result<void> read_fields(const HeaderList& headers, const HeaderField<T> (&table)[N], Parse parse,
                         Faults& f) {
  for (const auto& entry : table) {
    if (auto v = find_header(headers, entry.header)) {
      auto parsed = parse(*v, entry.header);
      if (!parsed) {
        return parsed.error();
      }
      f.*(entry.field) = *parsed;
    }
  }
  return {};
}

// RFC 9110 section 5.6.2 token characters.
bool is_token(std::string_view name) {
  constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           kSpecials.find(c) != std::string_view::npos;
  });
}

// Appends "<name>: <value>\r\n" for every x-mock-set-<name> header, in wire order. The name
// is lower-cased; the value is kept as received. Framing headers are refused: the mock
// frames its own responses.
Result<std::string> parse_set_headers(const HeaderList& headers) {
  std::string out;
  std::string name;
  for (const auto& [wire_name, value] : headers) {
    if (wire_name.size() < kSetHeaderPrefix.size() ||
        !iequals(wire_name.substr(0, kSetHeaderPrefix.size()), kSetHeaderPrefix)) {
      continue;
    }
    assign_lower(name, wire_name.substr(kSetHeaderPrefix.size()));
    if (!is_token(name)) {
      return bad_header(wire_name, value, "the header name after x-mock-set- must be a token");
    }
    if (name == "content-length" || name == "transfer-encoding" || name == "connection") {
      return bad_header(wire_name, value, "framing headers cannot be set");
    }
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
      return bad_header(wire_name, value, "CR, LF and NUL are not allowed");
    }
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  return out;
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
  return parse_int_list(text, "x-mock-status", "expected HTTP statuses 100..599, comma-separated",
                        [](int n) { return n >= 100 && n <= 599; });
}

Result<std::vector<int>> parse_informational_list(std::string_view text) {
  return parse_int_list(text, "x-mock-informational",
                        "expected interim statuses 100..199 (not 101), comma-separated",
                        [](int n) { return n >= 100 && n <= 199 && n != 101; });
}

Result<StreamError> parse_stream_error(std::string_view text) {
  constexpr std::string_view kHeader = "x-mock-stream-error";
  std::string_view v = trim(text);
  StreamError out;
  if (std::size_t colon = v.find(':'); colon != std::string_view::npos) {
    auto n = parse_fault_number(v.substr(0, colon), kHeader);
    if (!n) {
      return n.error();
    }
    out.after = *n;
    v = trim(v.substr(colon + 1));
  }
  // overloaded_error (Anthropic), throttlingException (Bedrock's stream members): a lower-case
  // first letter, then letters and underscores.
  bool ok = !v.empty() && v.size() <= 64 && v.front() >= 'a' && v.front() <= 'z' &&
            std::all_of(v.begin(), v.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
            });
  if (!ok) {
    return bad_header(kHeader, text,
                      "expected TYPE or N:TYPE, TYPE like overloaded_error or throttlingException");
  }
  out.type = std::string(v);
  return out;
}

Result<std::string> parse_tool_arguments(std::string_view text) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) {
    return bad_header("x-mock-tool-arguments", text, "expected a JSON object");
  }
  return boost::json::serialize(v);
}

Result<Faults> parse_faults(const HeaderList& headers, const Faults& defaults) {
  Faults f = defaults;
  static constexpr HeaderField<std::uint32_t> kNumbers[] = {
      {"x-mock-latency-ms", &Faults::latency_ms}, {"x-mock-first-byte-ms", &Faults::first_byte_ms},
      {"x-mock-pace-ms", &Faults::pace_ms},       {"x-mock-end-delay-ms", &Faults::end_delay_ms},
      {"x-mock-events", &Faults::events},
  };
  if (auto read = read_fields(headers, kNumbers, parse_fault_number, f); !read) {
    return read.error();
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
  if (auto v = find_header(headers, "x-mock-stream-error")) {
    auto se = parse_stream_error(*v);
    if (!se) {
      return se.error();
    }
    f.stream_error = std::move(*se);
  }
  if (auto v = find_header(headers, "x-mock-informational")) {
    auto list = parse_informational_list(*v);
    if (!list) {
      return list.error();
    }
    f.informational = std::move(*list);
  }

  if (auto v = find_header(headers, "x-mock-tool-name")) {
    std::string_view name = trim(*v);
    if (name.empty()) {
      return bad_header("x-mock-tool-name", *v, "expected a tool name");
    }
    f.tool_name = std::string(name);
  }
  if (auto v = find_header(headers, "x-mock-embeddings")) {
    const std::string_view mode = trim(*v);
    if (mode != "hash" && mode != "bag-of-words") {
      return bad_header("x-mock-embeddings", *v, "expected hash or bag-of-words");
    }
    f.bag_of_words_embeddings = mode == "bag-of-words";
  }
  if (auto v = find_header(headers, "x-mock-tool-arguments")) {
    auto arguments = parse_tool_arguments(*v);
    if (!arguments) {
      return arguments.error();
    }
    f.tool_arguments = std::move(*arguments);
  }

  static constexpr HeaderField<bool> kFlags[] = {
      {"x-mock-trailing-response", &Faults::trailing_response},
      {"x-mock-omit-done", &Faults::omit_done},
  };
  if (auto read = read_fields(headers, kFlags, parse_fault_flag, f); !read) {
    return read.error();
  }

  auto set_headers = parse_set_headers(headers);
  if (!set_headers) {
    return set_headers.error();
  }
  f.set_headers = std::move(*set_headers);
  return f;
}

}  // namespace sluice::mock
