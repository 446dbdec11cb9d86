#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
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

// A key the config does not list (a store key: tenancy/key_set.h) and the rate quotas its own
// record and its key group's carry (0 = none). Both quotas point into the key's owner.
struct ExtraKey {
  const config::Key* key = nullptr;
  const config::RateLimits* key_quota = nullptr;
  const config::RateLimits* group_quota = nullptr;
};

// The `limits:` section of one config version compiled into buckets, and the lookup admission
// does per request: which buckets a (key, alias, provider) touches. Immutable and thread-safe
// once built; every bucket's local state comes from `local` (LocalLimiter::state), so a bucket
// that exists in the old and the new version keeps its level across a reload.
class LimitPlan {
 public:
  // `config` must outlive the plan (the plan indexes its keys by address). `extra` are keys
  // from outside the config (store keys, indexed by address too), kept alive by `owner`; their
  // limits, per layer, take the first that exists:
  //   key layer    limits.keys.<name>, else the key's own quota, else limits.key
  //   group layer  limits.groups.<group>, else the group's quota from the store
  LimitPlan(std::shared_ptr<const config::Config> config, LocalLimiter& local,
            const std::vector<ExtraKey>& extra = {}, std::shared_ptr<const void> owner = {});

  // Whether any limit is configured (admission does nothing otherwise).
  bool empty() const { return empty_; }
  const config::Config& config() const { return *config_; }
  // What keeps the extra keys alive (the store's key set), null without any.
  const void* owner() const { return owner_.get(); }

  // The charges of one request: requests 1 and `tokens` from the key's, its group's, the
  // model's and the provider's buckets, a slot from the group and the instance. `key` null
  // (auth off) skips the key and group layers; `provider` "" skips the provider layer.
  Charges charges(const config::Key* key, std::string_view alias, std::string_view provider,
                  std::uint64_t tokens) const;
  // The token buckets of the same request (for settlement), with `delta` each.
  Charges token_charges(const config::Key* key, std::string_view alias, std::string_view provider,
                        std::int64_t delta) const;
  // One attempt's charges on a provider's capacity alone: requests 1 and `tokens` (admission
  // charges the caller's layers once, with provider "", and each attempt its provider).
  Charges provider_charges(std::string_view provider, std::uint64_t tokens) const;

 private:
  using Named = std::map<std::string, LayerBuckets, std::less<>>;
  // A key's buckets are its id's: a store key renamed keeps them, and a config key and a store
  // key of the same name never share them.
  LayerBuckets key_layer(const config::Key& key, const config::RateLimits& limits,
                         LocalLimiter& local);
  // `name` for messages, `owner` in the bucket's local and Redis key, `tenant` its hash tag.
  LayerBuckets layer(Layer layer, const std::string& name, std::string_view owner,
                     std::string_view tenant, const config::RateLimits& limits,
                     LocalLimiter& local);
  const LayerBuckets* find(const Named& named, std::string_view name) const;
  const LayerBuckets* key_buckets(const config::Key* key) const;
  template <class Fn>
  void for_each_layer(const config::Key* key, std::string_view alias, std::string_view provider,
                      Fn&& fn) const;

  // An extra key's buckets: its own layer and its group's (null: no group limit).
  struct ExtraBuckets {
    LayerBuckets key;
    const LayerBuckets* group = nullptr;
  };
  const ExtraBuckets* extra_buckets(const config::Key* key) const;

  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<const void> owner_;
  std::deque<Bucket> buckets_;        // stable addresses
  std::vector<LayerBuckets> by_key_;  // parallel to config_->keys
  Named groups_;
  Named models_;
  Named providers_;
  Named store_groups_;  // groups limited by their store quota alone
  std::unordered_map<const config::Key*, ExtraBuckets> by_extra_;
  // By id, for an extra key of another key set revision than the plan's (rare).
  std::unordered_map<std::string_view, const ExtraBuckets*> extra_by_id_;
  const Bucket* instance_slots_ = nullptr;
  bool empty_ = true;
};

}  // namespace sluice::limits
