#include "codec/json_envelope.h"

#include <utility>
#include <vector>

#include "codec/json_writer.h"

namespace sluice::codec {

std::string splice_json_string(std::string_view body, std::size_t begin, std::size_t end,
                               std::string_view value) {
  std::string out;
  out.reserve(body.size() + value.size() + 2);
  out.append(body.substr(0, begin));
  JsonWriter(out).string(value);
  out.append(body.substr(end));
  return out;
}

namespace {

// A small reader over a body already known to be valid JSON: it finds byte ranges, and never
// decodes more than an object key.
class TopLevel {
 public:
  explicit TopLevel(std::string_view body) : b_(body) {}

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
  // Moves past one value; returns its byte range.
  std::pair<std::size_t, std::size_t> value() {
    ws();
    const std::size_t begin = i_;
    std::string ignored;
    if (i_ < b_.size() && b_[i_] == '"') {
      string(ignored);
    } else if (i_ < b_.size() && (b_[i_] == '{' || b_[i_] == '[')) {
      std::size_t depth = 0;
      do {
        const char c = b_[i_];
        if (c == '"') {
          string(ignored);
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

 private:
  std::string_view b_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<std::string> replace_models(std::string_view body, std::string_view model) {
  TopLevel in(body);
  if (!in.eat('{')) {
    return std::nullopt;
  }
  std::vector<std::pair<std::size_t, std::size_t>> models;
  std::string key;
  if (!in.eat('}')) {
    do {
      if (!in.at_string()) {
        return std::nullopt;
      }
      const bool ascii = in.string(key);
      if (!in.eat(':')) {
        return std::nullopt;
      }
      const auto range = in.value();
      if (ascii && key == "model") {
        models.push_back(range);
      }
    } while (in.eat(','));
    if (!in.eat('}')) {
      return std::nullopt;
    }
  }
  std::string out;
  out.reserve(body.size() + models.size() * (model.size() + 2));
  std::size_t at = 0;
  for (const auto& [begin, end] : models) {
    out.append(body.substr(at, begin - at));
    JsonWriter(out).string(model);
    at = end;
  }
  out.append(body.substr(at));
  return out;
}

}  // namespace sluice::codec
