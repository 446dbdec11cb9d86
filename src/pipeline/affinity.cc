#include "pipeline/affinity.h"

#include <algorithm>

namespace sluice::pipeline {

ResponseAffinity::ResponseAffinity(Options options)
    : options_(options), per_shard_(std::max<std::size_t>(1, options.capacity / kShards)) {}

ResponseAffinity::Shard& ResponseAffinity::shard_for(std::string_view id) const {
  // The map hashes the id too; mixing the bits keeps shard choice and bucket choice apart.
  const std::size_t h = Hash{}(id);
  return shards_[(h ^ (h >> 17)) % kShards];
}

void ResponseAffinity::evict(Shard& shard, TimePoint now) const {
  while (!shard.order.empty() &&
         (shard.order.front().expires <= now || shard.entries.size() > per_shard_)) {
    const Queued front = shard.order.front();
    shard.order.pop_front();
    auto it = shard.entries.find(front.id);
    if (it != shard.entries.end() && it->second.stamp == front.stamp) {
      shard.entries.erase(it);
    }
  }
}

void ResponseAffinity::remember(std::string_view id, std::string_view provider,
                                std::string_view owner, TimePoint now) {
  if (id.empty()) {
    return;
  }
  Shard& shard = shard_for(id);
  const TimePoint expires = now + options_.ttl;
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end()) {
    it = shard.entries.emplace(std::string(id), Entry{}).first;
  }
  Entry& entry = it->second;
  entry.record.provider.assign(provider);
  entry.record.owner.assign(owner);
  entry.expires = expires;
  entry.stamp = shard.next_stamp++;
  shard.order.push_back({it->first, entry.stamp, expires});
  evict(shard, now);
}

std::optional<ResponseAffinity::Record> ResponseAffinity::find(std::string_view id,
                                                               TimePoint now) const {
  Shard& shard = shard_for(id);
  std::lock_guard lock(shard.mu);
  const auto it = shard.entries.find(id);
  if (it == shard.entries.end() || it->second.expires <= now) {
    return std::nullopt;  // an expired record leaves with the next remember() in its shard
  }
  return it->second.record;
}

std::size_t ResponseAffinity::size() const {
  std::size_t n = 0;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    n += shard.entries.size();
  }
  return n;
}

}  // namespace sluice::pipeline
