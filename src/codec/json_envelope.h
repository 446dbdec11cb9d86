#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>

#include "codec/json_read.h"

// The top-level members of a JSON object that a relay acts on (a request's model, stream flag,
// limits), read in one SAX pass without a DOM, with where each string value sits so it can be
// replaced by splicing bytes instead of re-serialising a 400 KB prompt. Everything else is only
// syntax-checked. Header-only for the same reason as json_read.h: sluice_codec links only core,
// and its users already link Boost::json.
namespace sluice::codec {

struct EnvelopeField {
  enum class Kind : std::uint8_t {
    kAbsent,
    kString,
    kInteger,
    kNumber,
    kBool,
    kNull,
    kObject,
    kArray
  };

  explicit EnvelopeField(std::string_view name) : key(name) {}

  std::string_view key;
  Kind kind = Kind::kAbsent;
  int count = 0;             // how often the key appeared (a repeat means its last value wins)
  std::string text;          // kString: the value, unescaped
  bool flag = false;         // kBool
  std::int64_t integer = 0;  // kInteger (values above int64 are kNumber)
  std::size_t elements = 0;  // kArray: number of elements
  // kString: byte range of the value in the body, quotes included, when it appeared once and
  // was written without escapes (spliceable); begin == end otherwise.
  std::size_t begin = 0;
  std::size_t end = 0;

  bool spliceable() const { return count == 1 && kind == Kind::kString && end > begin; }
};

namespace detail {

class EnvelopeScanner {
 public:
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  using ec = boost::system::error_code;
  using sv = boost::json::string_view;
  using Kind = EnvelopeField::Kind;

  EnvelopeScanner(std::string_view body, std::span<EnvelopeField> fields)
      : body_(body), fields_(fields) {}

  bool root_is_object = false;

  bool on_document_begin(ec&) { return true; }
  bool on_document_end(ec&) { return true; }
  bool on_object_begin(ec&) {
    if (depth_ == 0) {
      root_is_object = true;
    }
    set(Kind::kObject);
    ++depth_;
    return true;
  }
  bool on_object_end(std::size_t, ec&) {
    --depth_;
    return true;
  }
  bool on_array_begin(ec&) {
    if (EnvelopeField* f = set(Kind::kArray)) {
      array_ = f;
    }
    ++depth_;
    return true;
  }
  bool on_array_end(std::size_t n, ec&) {
    --depth_;
    if (depth_ == 1 && array_ != nullptr) {
      array_->elements = n;
      array_ = nullptr;
    }
    return true;
  }
  bool on_key_part(sv s, std::size_t, ec&) {
    if (depth_ == 1) {
      key_.append(s.data(), s.size());
    }
    return true;
  }
  bool on_key(sv s, std::size_t, ec&) {
    if (depth_ == 1) {
      key_.append(s.data(), s.size());
      current_ = nullptr;
      for (EnvelopeField& f : fields_) {
        if (f.key == key_) {
          current_ = &f;
        }
      }
      key_.clear();
    }
    return true;
  }
  bool on_string_part(sv s, std::size_t, ec&) {
    if (depth_ == 1 && current_ != nullptr) {
      parts_.append(s.data(), s.size());
      split_ = true;
    }
    return true;
  }
  bool on_string(sv s, std::size_t, ec&) {
    if (depth_ == 1 && current_ != nullptr) {
      EnvelopeField& f = *current_;
      set(Kind::kString);
      f.text.assign(parts_);
      f.text.append(s.data(), s.size());
      const char* begin = body_.data();
      const bool in_body = s.data() > begin && s.data() + s.size() < begin + body_.size();
      if (!split_ && in_body && s.data()[-1] == '"' && s.data()[s.size()] == '"') {
        f.begin = static_cast<std::size_t>(s.data() - begin) - 1;
        f.end = f.begin + s.size() + 2;
      } else {
        f.begin = f.end = 0;
      }
      parts_.clear();
      split_ = false;
      current_ = nullptr;
      return true;
    }
    return true;
  }
  bool on_number_part(sv, ec&) { return true; }
  bool on_int64(std::int64_t v, sv, ec&) {
    if (EnvelopeField* f = set(Kind::kInteger)) {
      f->integer = v;
    }
    return true;
  }
  bool on_uint64(std::uint64_t, sv, ec&) {
    set(Kind::kNumber);
    return true;
  }
  bool on_double(double d, sv, ec& e) {
    if (!std::isfinite(d)) {  // as parse_json: a literal no double holds is refused
      e = boost::json::error::exponent_overflow;
      return false;
    }
    set(Kind::kNumber);
    return true;
  }
  bool on_bool(bool b, ec&) {
    if (EnvelopeField* f = set(Kind::kBool)) {
      f->flag = b;
    }
    return true;
  }
  bool on_null(ec&) {
    set(Kind::kNull);
    return true;
  }
  bool on_comment_part(sv, ec&) { return true; }
  bool on_comment(sv, ec&) { return true; }

 private:
  // A value of a watched top-level key begins; returns the field (reset to this value).
  EnvelopeField* set(Kind kind) {
    if (depth_ != 1 || current_ == nullptr) {
      return nullptr;
    }
    EnvelopeField* f = current_;
    ++f->count;
    f->kind = kind;
    f->text.clear();
    f->flag = false;
    f->integer = 0;
    f->elements = 0;
    f->begin = f->end = 0;
    if (kind != Kind::kString) {
      current_ = nullptr;  // containers: nested keys are not top-level
    }
    return f;
  }

  std::string_view body_;
  std::span<EnvelopeField> fields_;
  std::string key_;
  std::string parts_;
  bool split_ = false;
  std::size_t depth_ = 0;
  EnvelopeField* current_ = nullptr;
  EnvelopeField* array_ = nullptr;
};

}  // namespace detail

// Reads `fields` from the JSON object `body` (any key not listed is syntax-checked only).
// Returns false when the body is not a single valid JSON object (nesting beyond `max_depth`
// included); `error` then says why.
inline bool scan_envelope(std::string_view body, std::span<EnvelopeField> fields,
                          std::string& error, std::size_t max_depth = 64) {
  boost::json::parse_options options;
  options.max_depth = max_depth;
  boost::json::basic_parser<detail::EnvelopeScanner> parser(options, body, fields);
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(false, body.data(), body.size(), ec);
  if (!ec && used != body.size()) {
    ec = boost::json::error::extra_data;
  }
  if (ec) {
    error = ec.message();
    return false;
  }
  if (!parser.handler().root_is_object) {
    error = "the body is not a JSON object";
    return false;
  }
  return true;
}

// `body` with the byte range [begin, end) replaced by `value` written as a JSON string.
std::string splice_json_string(std::string_view body, std::size_t begin, std::size_t end,
                               std::string_view value);

// The valid JSON object `body` with the value of every top-level member whose key decodes to
// "model" replaced by `model` as a JSON string; every other byte as it was (numbers are not
// re-written: Boost.JSON's reading of a double may be an ulp off). nullopt when `body` is not
// an object.
std::optional<std::string> replace_models(std::string_view body, std::string_view model);

// The JSON object `body` with its top-level "model" set to `model`: spliced into [begin, end)
// when `spliceable` (EnvelopeField::spliceable() of the "model" field), else by replace_models
// (an escaped or repeated "model"; rare: every occurrence is replaced, whichever one the
// upstream reads). A body that is not an object comes back unchanged.
inline std::string with_model(std::string_view body, bool spliceable, std::size_t begin,
                              std::size_t end, std::string_view model) {
  if (spliceable) {
    return splice_json_string(body, begin, end, model);
  }
  auto replaced = replace_models(body, model);
  return replaced ? std::move(*replaced) : std::string(body);
}

}  // namespace sluice::codec
