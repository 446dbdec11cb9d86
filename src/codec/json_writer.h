#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::codec {

class EscapedText;

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
  // The same bytes as string(text.text()), copied from the escaped form when it has one.
  JsonWriter& string(const EscapedText& text);
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

// Appends `text` JSON-escaped, without the surrounding quotes. Returns false when a malformed
// UTF-8 byte was replaced: only then may escaping two pieces apart differ from escaping them
// joined (a sequence split between them).
bool append_json_escaped(std::string& out, std::string_view text);

// Text that grows by pieces (a stream's deltas) and is written whole again later (the done
// events and the final response), kept escaped as well so the whole is copied, not escaped
// again. Each piece is escaped once, when appended; while every piece was well-formed UTF-8 the
// escaped pieces joined are the escaped whole, otherwise string() escapes the raw text again.
class EscapedText {
 public:
  // Appends `piece`; returns its escaped form (no quotes), valid until the next append.
  std::string_view append(std::string_view piece) {
    const std::size_t from = escaped_.size();
    joinable_ = append_json_escaped(escaped_, piece) && joinable_;
    text_.append(piece);
    return std::string_view(escaped_).substr(from);
  }
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }

 private:
  friend class JsonWriter;

  std::string text_;
  std::string escaped_;
  bool joinable_ = true;
};

}  // namespace sluice::codec
