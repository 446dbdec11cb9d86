#include "guardrails/pseudonyms.h"

#include <algorithm>

#include "codec/json_writer.h"

namespace sluice::guardrails {

void Pseudonyms::add(std::string placeholder, std::string original) {
  longest_ = std::max(longest_, placeholder.size());
  entries_.push_back(Entry{std::move(placeholder), std::move(original)});
}

std::optional<std::string> Pseudonyms::restore(std::string_view text, bool inner) const {
  if (entries_.empty() || text.find('[') == std::string_view::npos) {
    return std::nullopt;
  }
  std::string out;
  std::size_t copied = 0;
  std::size_t at = 0;
  while ((at = text.find('[', at)) != std::string_view::npos) {
    const Entry* hit = nullptr;
    for (const Entry& e : entries_) {
      if (text.substr(at, e.placeholder.size()) == e.placeholder) {
        hit = &e;
        break;
      }
    }
    if (hit == nullptr) {
      ++at;
      continue;
    }
    out.append(text.substr(copied, at - copied));
    if (inner) {
      std::string quoted;
      codec::JsonWriter(quoted).string(hit->original);
      out.append(quoted, 1, quoted.size() - 2);  // the escaped text, without its quotes
    } else {
      out += hit->original;
    }
    at += hit->placeholder.size();
    copied = at;
  }
  if (copied == 0) {
    return std::nullopt;
  }
  out.append(text.substr(copied));
  return out;
}

std::size_t Pseudonyms::partial_tail(std::string_view text) const {
  const std::size_t from = text.size() > longest_ ? text.size() - longest_ + 1 : 0;
  const std::size_t open = text.find('[', from);
  if (open == std::string_view::npos) {
    return 0;
  }
  // The earliest '[' in reach whose tail begins some placeholder.
  for (std::size_t at = open; at < text.size(); at = text.find('[', at + 1)) {
    const std::string_view tail = text.substr(at);
    for (const Entry& e : entries_) {
      if (tail.size() < e.placeholder.size() && e.placeholder.starts_with(tail)) {
        return tail.size();
      }
    }
  }
  return 0;
}

}  // namespace sluice::guardrails
