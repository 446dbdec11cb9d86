#pragma once

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "codec/json_writer.h"

// A Boost.JSON value written back as compact JSON text, for codecs that carry a JSON object
// (tool arguments, schemas, tool results) from one protocol's DOM into another's text.
// Header-only for the same reason as json_read.h: sluice_codec links only core, and the
// protocol libraries that include this already link Boost::json.
namespace sluice::codec {

// Appends `value` as compact JSON text (no whitespace). Strings are escaped as JsonWriter does;
// doubles use the shortest form that round-trips (std::to_chars), so 1.0 becomes 1; integers,
// literals, key order and duplicate keys are reproduced exactly.
inline void append_compact_json(std::string& out, const boost::json::value& value) {
  namespace json = boost::json;
  JsonWriter w(out);
  switch (value.kind()) {
    case json::kind::null:
      w.null();
      return;
    case json::kind::bool_:
      w.boolean(value.get_bool());
      return;
    case json::kind::int64:
      w.number(value.get_int64());
      return;
    case json::kind::uint64:
      w.number(value.get_uint64());
      return;
    case json::kind::double_:
      w.number(value.get_double());
      return;
    case json::kind::string:
      w.string(std::string_view(value.get_string().data(), value.get_string().size()));
      return;
    case json::kind::array: {
      char sep = '[';
      for (const json::value& v : value.get_array()) {
        w.ch(sep);
        sep = ',';
        append_compact_json(out, v);
      }
      w.raw(sep == '[' ? "[]" : "]");
      return;
    }
    case json::kind::object: {
      char sep = '{';
      for (const json::key_value_pair& kv : value.get_object()) {
        w.ch(sep);
        sep = ',';
        w.key(std::string_view(kv.key().data(), kv.key().size()));
        append_compact_json(out, kv.value());
      }
      w.raw(sep == '{' ? "{}" : "}");
      return;
    }
  }
}

}  // namespace sluice::codec
