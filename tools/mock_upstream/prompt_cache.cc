#include "prompt_cache.h"

#include <functional>

namespace sluice::mock {

std::uint32_t PromptCache::cached_tokens(std::string_view scope,
                                         std::span<const std::uint64_t> prefix_hashes,
                                         std::span<const std::uint32_t> prefix_tokens) {
  const std::uint64_t salt = std::hash<std::string_view>{}(scope)*0x9e3779b97f4a7c15ull;
  std::uint32_t cached = 0;
  std::lock_guard lock(mu_);
  if (seen_.size() > kMaxPrefixes) {
    seen_.clear();
  }
  // Every prefix, the whole prompt included: a provider writes what it read to its cache, so
  // the next turn (this prompt plus the answer and a new message) reads all of this one.
  for (std::size_t i = 0; i < prefix_hashes.size(); ++i) {
    if (!seen_.insert(prefix_hashes[i] ^ salt).second) {
      cached = prefix_tokens[i];
    }
  }
  return cached;
}

void PromptCache::clear() {
  std::lock_guard lock(mu_);
  seen_.clear();
}

}  // namespace sluice::mock
