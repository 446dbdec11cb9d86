#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>
#include <unordered_set>

namespace sluice::mock {

// A provider's prompt cache, as far as billing shows it (x-mock-prompt-cache: <scope>): a
// request's cached tokens are those of its longest message prefix that an earlier request of
// the same scope (one simulated provider) sent, and every prefix it sends (itself included) is
// remembered.
// Thread-safe; bounded (forgets everything past a million prefixes).
class PromptCache {
 public:
  // `prefix_hashes[i]`: a hash of messages [0, i]; `prefix_tokens[i]`: their tokens.
  std::uint32_t cached_tokens(std::string_view scope, std::span<const std::uint64_t> prefix_hashes,
                              std::span<const std::uint32_t> prefix_tokens);
  void clear();

 private:
  static constexpr std::size_t kMaxPrefixes = 1 << 20;
  std::mutex mu_;
  std::unordered_set<std::uint64_t> seen_;
};

}  // namespace sluice::mock
