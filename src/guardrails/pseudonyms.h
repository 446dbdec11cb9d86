#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::guardrails {

// The placeholders one request's pseudonymised values became ([EMAIL_1] for jane@example.org),
// so that the answer the caller receives says jane@example.org again while the provider only
// ever saw [EMAIL_1] (docs/guardrails.md#pseudonymise). Made by the Inspector on the way in,
// read on the way back; one per request, never shared: another request's [EMAIL_1] is someone
// else.
class Pseudonyms {
 public:
  void add(std::string placeholder, std::string original);
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

  // `text` with every placeholder of this request put back; nullopt when none occurs. `inner`:
  // the text is itself JSON (a tool call's arguments), so an original is written escaped.
  std::optional<std::string> restore(std::string_view text, bool inner) const;
  // How many characters at the end of `text` begin a placeholder without completing it ("[EMA"
  // of "[EMAIL_1]"): a stream's next delta may complete it.
  std::size_t partial_tail(std::string_view text) const;

 private:
  struct Entry {
    std::string placeholder;
    std::string original;
  };
  std::vector<Entry> entries_;
  std::size_t longest_ = 0;
};

}  // namespace sluice::guardrails
