#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::codec {

// Appends JSON text to a std::string without building a DOM: the stream and response
// encoders emit small, fixed-shape objects per event, where a DOM + serializer costs more
// than the event itself. The caller is responsible for well-formedness (commas, nesting);
// string values are escaped per RFC 8259 section 7 (quote, backslash, control characters);
// well-formed UTF-8 is copied as is and each malformed byte becomes \ufffd, so the output
// is always valid JSON whatever bytes the text came from.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  // "text" with escaping.
  JsonWriter& string(std::string_view text);
  // "key": with escaping of the key.
  JsonWriter& key(std::string_view key);
  // ,"key": for a key the caller knows needs no escaping (a literal), in one append.
  JsonWriter& next_key(std::string_view trusted_key);
  // Raw JSON text (a number, a literal, or a value the caller knows is valid JSON).
  JsonWriter& raw(std::string_view json) {
    out_.append(json);
    return *this;
  }
  JsonWriter& number(std::uint64_t v);
  JsonWriter& number(std::int64_t v);
  JsonWriter& number(double v);
  JsonWriter& boolean(bool v) { return raw(v ? "true" : "false"); }
  JsonWriter& null() { return raw("null"); }
  JsonWriter& ch(char c) {
    out_.push_back(c);
    return *this;
  }

  std::string& out() { return out_; }

 private:
  std::string& out_;
};

// Appends `text` JSON-escaped, without the surrounding quotes.
void append_json_escaped(std::string& out, std::string_view text);

}  // namespace sluice::codec
