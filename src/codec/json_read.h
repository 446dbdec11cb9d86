#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <boost/json/error.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

// Helpers for codecs that read a Boost.JSON DOM. Header-only on purpose: sluice_codec itself
// links only core, and the protocol libraries that include this already link Boost::json.
namespace sluice::codec {

// The nesting limit for untrusted JSON (client bodies, upstream bytes) unless a caller has its
// own; Boost.JSON's default is 32.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Storage for one parsed document: its first 4 KiB on the stack of whoever declares it, the
// rest on the heap, so the small bodies of most requests and answers never reach malloc. Pass
// &arena.resource to parse_json; the document must not outlive the arena.
struct SmallDocumentArena {
  unsigned char stack[4096];
  boost::json::monotonic_resource resource{stack, sizeof stack};
};

// Whether `v` holds a double that is not finite anywhere inside (depth: parse_json's bound).
inline bool holds_non_finite(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::double_:
      return !std::isfinite(v.get_double());
    case boost::json::kind::array:
      for (const boost::json::value& e : v.get_array()) {
        if (holds_non_finite(e)) {
          return true;
        }
      }
      return false;
    case boost::json::kind::object:
      for (const auto& member : v.get_object()) {
        if (holds_non_finite(member.value())) {
          return true;
        }
      }
      return false;
    default:
      return false;
  }
}

// json::parse with a depth bound: more than `max_depth` levels fails with
// boost::json::error::too_deep, and a number literal no double holds (Boost.JSON reads 1e999 as
// infinity, 0e99999 as NaN; serialized again they are not JSON) with
// boost::json::error::exponent_overflow. The value allocates from `storage` (the default
// resource when null) and must not outlive it. On failure `ec` is set and the value is null.
inline boost::json::value parse_json(std::string_view text, boost::system::error_code& ec,
                                     boost::json::storage_ptr storage = {},
                                     std::size_t max_depth = kMaxJsonDepth) {
  boost::json::parse_options opts;
  opts.max_depth = max_depth;
  boost::json::value v = boost::json::parse(text, ec, std::move(storage), opts);
  if (!ec && holds_non_finite(v)) {
    ec = boost::json::error::exponent_overflow;
    return nullptr;
  }
  return v;
}

// A JSON value as a count (token counts, indices): a non-negative integer, whichever of
// int64 / uint64 Boost.JSON chose for it. Anything else (null, negative, 1.0, a string) is
// nullopt; callers decide whether that is an error or zero.
inline std::optional<std::uint64_t> as_count(const boost::json::value& v) {
  if (v.is_uint64()) {
    return v.get_uint64();
  }
  if (v.is_int64() && v.get_int64() >= 0) {
    return static_cast<std::uint64_t>(v.get_int64());
  }
  return std::nullopt;
}

// A JSON number as a double, whichever representation Boost.JSON chose; nullopt for anything
// else (a string, null, a boolean). A document read by parse_json holds no non-finite double.
inline std::optional<double> as_number(const boost::json::value& v) {
  if (v.is_double()) {
    return v.get_double();
  }
  if (v.is_int64()) {
    return static_cast<double>(v.get_int64());
  }
  if (v.is_uint64()) {
    return static_cast<double>(v.get_uint64());
  }
  return std::nullopt;
}

}  // namespace sluice::codec
