#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

// Schema drift in upstream answers: the fields (at the levels a translation decoder reads: the
// answer or event object, message / choice / candidate, content block / part, usage) and the
// event types a decoder does not know. Fields a codec skips on purpose (system_fingerprint,
// logprobs, safetyRatings, ...) are in its known lists and never count. The count reaches the
// access log's upstream[] entry as `drift` (docs/protocols.md, "Schema drift").
namespace sluice::protocol {

using FieldNames = std::span<const std::string_view>;

class Drift {
 public:
  // `name` (a field or an event type) is not known. Each distinct name counts once per answer,
  // so a field repeated in every chunk of a stream counts once; past kMaxNames distinct names
  // every further one counts without being remembered.
  void unknown(std::string_view name) {
    for (const std::string& seen : names_) {
      if (seen == name) {
        return;
      }
    }
    if (names_.size() < kMaxNames) {
      names_.emplace_back(name);
    }
    ++count_;
  }

  // Counts the members of `o` that are not in `known`. With `snake_case`, a member spelt in
  // snake_case matches its camelCase name in `known` (Gemini's proto3 JSON accepts both).
  void fields(const boost::json::object& o, FieldNames known, bool snake_case = false) {
    for (const auto& kv : o) {
      const std::string_view key(kv.key().data(), kv.key().size());
      if (!is_known(key, known, snake_case)) {
        unknown(key);
      }
    }
  }

  std::uint32_t count() const { return count_; }
  // The distinct names counted (at most kMaxNames), for tests and diagnostics.
  const std::vector<std::string>& names() const { return names_; }

  static bool is_known(std::string_view key, FieldNames known, bool snake_case = false) {
    for (std::string_view k : known) {
      if (k == key) {
        return true;
      }
    }
    if (snake_case && key.find('_') != std::string_view::npos) {
      for (std::string_view k : known) {
        if (snake_of(key, k)) {
          return true;
        }
      }
    }
    return false;
  }

 private:
  static constexpr std::size_t kMaxNames = 32;

  // Whether `snake` is `camel` in snake_case ("usage_metadata", "usageMetadata").
  static bool snake_of(std::string_view snake, std::string_view camel) {
    std::size_t i = 0;
    for (char c : camel) {
      if (c >= 'A' && c <= 'Z') {
        if (i >= snake.size() || snake[i] != '_') {
          return false;
        }
        ++i;
        c = static_cast<char>(c - 'A' + 'a');
      }
      if (i >= snake.size() || snake[i] != c) {
        return false;
      }
      ++i;
    }
    return i == snake.size();
  }

  std::vector<std::string> names_;
  std::uint32_t count_ = 0;
};

}  // namespace sluice::protocol
