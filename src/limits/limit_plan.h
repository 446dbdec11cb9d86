#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "limits/limiter.h"
#include "limits/local_limiter.h"

namespace sluice::limits {

// The buckets one layer of the tenancy tree has (null where it has no such limit).
struct LayerBuckets {
  const Bucket* requests = nullptr;
  const Bucket* tokens = nullptr;
  const Bucket* slots = nullptr;
};

// The `limits:` section of one config version compiled into buckets, and the lookup admission
// does per request: which buckets a (key, alias, provider) touches. Immutable and thread-safe
// once built; every bucket's local state comes from `local` (LocalLimiter::state), so a bucket
// that exists in the old and the new version keeps its level across a reload.
class LimitPlan {
 public:
  // `config` must outlive the plan (the plan indexes its keys by address).
  LimitPlan(std::shared_ptr<const config::Config> config, LocalLimiter& local);

  // Whether any limit is configured (admission does nothing otherwise).
  bool empty() const { return empty_; }
  const config::Config& config() const { return *config_; }

  // The charges of one request: requests 1 and `tokens` from the key's, its group's, the
  // model's and the provider's buckets, a slot from the group and the instance. `key` null
  // (auth off) skips the key and group layers; `provider` "" skips the provider layer.
  Charges charges(const config::Key* key, std::string_view alias, std::string_view provider,
                  std::uint64_t tokens) const;
  // The token buckets of the same request (for settlement), with `delta` each.
  Charges token_charges(const config::Key* key, std::string_view alias, std::string_view provider,
                        std::int64_t delta) const;

 private:
  using Named = std::map<std::string, LayerBuckets, std::less<>>;
  LayerBuckets layer(Layer layer, const std::string& name, std::string_view tenant,
                     const config::RateLimits& limits, LocalLimiter& local);
  const LayerBuckets* find(const Named& named, std::string_view name) const;
  const LayerBuckets* key_buckets(const config::Key* key) const;
  template <class Fn>
  void for_each_layer(const config::Key* key, std::string_view alias, std::string_view provider,
                      Fn&& fn) const;

  std::shared_ptr<const config::Config> config_;
  std::deque<Bucket> buckets_;        // stable addresses
  std::vector<LayerBuckets> by_key_;  // parallel to config_->keys
  Named groups_;
  Named models_;
  Named providers_;
  const Bucket* instance_slots_ = nullptr;
  bool empty_ = true;
};

}  // namespace sluice::limits
