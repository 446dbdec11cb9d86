#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

// Walks the members of a JSON object already known to be valid (a request body a decoder has
// accepted) by byte offsets, decoding nothing but keys: for the rewrites that must leave every
// other byte as it was (json_envelope.h, json_members.h). Not a validator: on text that is not
// valid JSON its answers are meaningless, never out of bounds.
namespace sluice::codec {

// A small reader over a body already known to be valid JSON: it finds byte ranges, and never
// decodes more than an object key.
class JsonObjectReader {
 public:
  explicit JsonObjectReader(std::string_view body) : b_(body) {}

  std::size_t at() const { return i_; }

  void ws() {
    while (i_ < b_.size() &&
           (b_[i_] == ' ' || b_[i_] == '\t' || b_[i_] == '\n' || b_[i_] == '\r')) {
      ++i_;
    }
  }
  bool eat(char c) {
    ws();
    if (i_ < b_.size() && b_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // A string token at i_: true and its decoded text in `text` when it decodes to ASCII (keys
  // compared with "model" need no more), false otherwise; i_ moves past it either way.
  bool string(std::string& text) {
    text.clear();
    bool ascii = true;
    ++i_;  // the opening quote
    while (i_ < b_.size() && b_[i_] != '"') {
      char c = b_[i_++];
      if (c == '\\' && i_ < b_.size()) {
        const char e = b_[i_++];
        switch (e) {
          case 'u': {
            unsigned code = 0;
            for (int k = 0; k < 4 && i_ < b_.size(); ++k, ++i_) {
              const char h = b_[i_];
              code = code * 16 + static_cast<unsigned>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
            }
            ascii = ascii && code < 0x80;
            c = static_cast<char>(code);
            break;
          }
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case 'n':
            c = '\n';
            break;
          case 'r':
            c = '\r';
            break;
          case 't':
            c = '\t';
            break;
          default:
            c = e;
            break;  // " \\ /
        }
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        ascii = false;
      }
      text += c;
    }
    ++i_;  // the closing quote
    return ascii;
  }
  // Moves past the string token at i_ without decoding it. A prompt is mostly string bytes,
  // so this jumps from quote to quote (memchr) instead of walking each byte: a quote ends the
  // string unless an odd run of backslashes escapes it.
  void skip_string() {
    const std::size_t start = ++i_;  // past the opening quote
    while (i_ < b_.size()) {
      const void* quote = std::memchr(b_.data() + i_, '"', b_.size() - i_);
      if (quote == nullptr) {
        i_ = b_.size();
        return;
      }
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(quote) - b_.data());
      std::size_t backslashes = 0;
      while (at - backslashes > start && b_[at - backslashes - 1] == '\\') {
        ++backslashes;
      }
      i_ = at + 1;
      if (backslashes % 2 == 0) {
        return;
      }
    }
  }
  // Moves past one value; returns its byte range.
  std::pair<std::size_t, std::size_t> value() {
    ws();
    const std::size_t begin = i_;
    if (i_ < b_.size() && b_[i_] == '"') {
      skip_string();
    } else if (i_ < b_.size() && (b_[i_] == '{' || b_[i_] == '[')) {
      std::size_t depth = 0;
      do {
        const char c = b_[i_];
        if (c == '"') {
          skip_string();
          continue;
        }
        depth += (c == '{' || c == '[') ? 1 : 0;
        depth -= (c == '}' || c == ']') ? 1 : 0;
        ++i_;
      } while (depth > 0 && i_ < b_.size());
    } else {
      while (i_ < b_.size() && b_[i_] != ',' && b_[i_] != '}' && b_[i_] != ']' && b_[i_] != ' ' &&
             b_[i_] != '\t' && b_[i_] != '\n' && b_[i_] != '\r') {
        ++i_;
      }
    }
    return {begin, i_};
  }
  bool at_string() {
    ws();
    return i_ < b_.size() && b_[i_] == '"';
  }

  // One member of an object: its key (decoded; `ascii` false when it decodes to more than
  // ASCII), where the key token and the value sit.
  struct Member {
    std::string_view key;
    bool ascii = true;
    std::size_t key_begin = 0;  // the opening quote
    std::size_t key_end = 0;    // past the closing quote
    std::size_t value_begin = 0;
    std::size_t value_end = 0;
  };
  // Calls `visit(const Member&)` for each member of the object at the reader's position, in
  // order; false when there is no object there.
  template <class Visit>
  bool members(Visit&& visit) {
    if (!eat('{')) {
      return false;
    }
    if (eat('}')) {
      return true;
    }
    std::string key;
    do {
      if (!at_string()) {
        return false;
      }
      Member m;
      m.key_begin = i_;
      m.ascii = string(key);
      m.key_end = i_;
      if (!eat(':')) {
        return false;
      }
      std::tie(m.value_begin, m.value_end) = value();
      m.key = key;
      visit(static_cast<const Member&>(m));
    } while (eat(','));
    return eat('}');
  }

 private:
  std::string_view b_;
  std::size_t i_ = 0;
};

}  // namespace sluice::codec
