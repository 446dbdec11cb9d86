#include "limits/limit_plan.h"

namespace sluice::limits {

namespace {

// Indexed by the enumerators' values.
constexpr std::string_view kLayerWords[] = {"key", "key group", "model", "provider", "instance"};
constexpr std::string_view kLayerLabels[] = {"key", "group", "model", "provider", "instance"};
constexpr std::string_view kDimensionWords[] = {"requests per minute", "tokens per minute",
                                                "concurrent requests"};
constexpr std::string_view kDimensionLabels[] = {"rpm", "tpm", "concurrency"};

}  // namespace

std::string_view to_string(Layer layer) { return kLayerWords[static_cast<std::size_t>(layer)]; }
std::string_view label(Layer layer) { return kLayerLabels[static_cast<std::size_t>(layer)]; }
std::string_view to_string(Dimension dimension) {
  return kDimensionWords[static_cast<std::size_t>(dimension)];
}
std::string_view label(Dimension dimension) {
  return kDimensionLabels[static_cast<std::size_t>(dimension)];
}

LimitPlan::LimitPlan(std::shared_ptr<const config::Config> config, LocalLimiter& local,
                     const std::vector<ExtraKey>& extra, std::shared_ptr<const void> owner)
    : config_(std::move(config)), owner_(std::move(owner)) {
  const config::LimitSettings& l = config_->limits;
  empty_ = !l.any();
  by_key_.reserve(config_->keys.size());
  for (const config::Key& key : config_->keys) {
    auto own = l.keys.find(key.name);
    by_key_.push_back(key_layer(key, own != l.keys.end() ? own->second : l.key, local));
  }
  for (const auto& [name, limits] : l.groups) {
    groups_.emplace(name, layer(Layer::kGroup, name, name, name, limits, local));
  }
  for (const auto& [name, limits] : l.models) {
    models_.emplace(name, layer(Layer::kModel, name, name, "model:" + name, limits, local));
  }
  for (const auto& [name, limits] : l.providers) {
    providers_.emplace(name,
                       layer(Layer::kProvider, name, name, "provider:" + name, limits, local));
  }
  if (l.instance_concurrency != 0) {
    config::RateLimits instance;
    instance.concurrency = l.instance_concurrency;
    instance_slots_ = layer(Layer::kInstance, "", "", "instance", instance, local).slots;
  }
  by_extra_.reserve(extra.size());
  extra_by_id_.reserve(extra.size());
  for (const ExtraKey& e : extra) {
    const config::Key& key = *e.key;
    const config::RateLimits* own = nullptr;
    if (auto it = l.keys.find(key.name); it != l.keys.end()) {
      own = &it->second;
    } else if (e.key_quota != nullptr && e.key_quota->any()) {
      own = e.key_quota;
    } else {
      own = &l.key;
    }
    ExtraBuckets& b = by_extra_[e.key];
    b.key = key_layer(key, *own, local);
    if (!key.group.empty()) {
      if (auto g = groups_.find(key.group); g != groups_.end()) {
        b.group = &g->second;
      } else if (e.group_quota != nullptr && e.group_quota->any()) {
        auto [s, added] = store_groups_.try_emplace(key.group);
        if (added) {
          s->second = layer(Layer::kGroup, key.group, key.group, key.group, *e.group_quota, local);
        }
        b.group = &s->second;
      }
    }
    if (b.key.requests != nullptr || b.key.tokens != nullptr || b.group != nullptr) {
      empty_ = false;
    }
    extra_by_id_.emplace(key.id, &b);
  }
}

LayerBuckets LimitPlan::key_layer(const config::Key& key, const config::RateLimits& limits,
                                  LocalLimiter& local) {
  // Redis keys of a tenant share its hash tag (the key's group, else the key), so a tenant's
  // buckets live in one Redis Cluster slot.
  const std::string_view tenant = key.group.empty() ? std::string_view(key.id) : key.group;
  return layer(Layer::kKey, key.name, key.id, tenant, limits, local);
}

LayerBuckets LimitPlan::layer(Layer layer, const std::string& name, std::string_view owner,
                              std::string_view tenant, const config::RateLimits& limits,
                              LocalLimiter& local) {
  LayerBuckets out;
  const auto add = [&](Dimension dimension, std::uint64_t limit) -> const Bucket* {
    if (limit == 0) {
      return nullptr;
    }
    Bucket& b = buckets_.emplace_back();
    b.layer = layer;
    b.dimension = dimension;
    b.name = name;
    b.limit = limit;
    const std::string id =
        std::string(label(dimension)) + ":" + std::string(label(layer)) + ":" + std::string(owner);
    b.redis_key = config_->state.key_prefix + "{" + std::string(tenant) + "}:" + id;
    b.local = local.state(id);
    b.lease_ttl = config_->limits.lease_ttl;
    return &b;
  };
  out.requests = add(Dimension::kRequests, limits.rpm);
  out.tokens = add(Dimension::kTokens, limits.tpm);
  out.slots = add(Dimension::kConcurrency, limits.concurrency);
  return out;
}

const LayerBuckets* LimitPlan::find(const Named& named, std::string_view name) const {
  if (named.empty()) {
    return nullptr;
  }
  auto it = named.find(name);
  return it == named.end() ? nullptr : &it->second;
}

const LayerBuckets* LimitPlan::key_buckets(const config::Key* key) const {
  const auto& keys = config_->keys;
  if (key >= keys.data() && key < keys.data() + keys.size()) {
    return &by_key_[static_cast<std::size_t>(key - keys.data())];
  }
  return nullptr;
}

const LimitPlan::ExtraBuckets* LimitPlan::extra_buckets(const config::Key* key) const {
  if (by_extra_.empty()) {
    return nullptr;
  }
  auto it = by_extra_.find(key);
  return it == by_extra_.end() ? nullptr : &it->second;
}

template <class Fn>
void LimitPlan::for_each_layer(const config::Key* key, std::string_view alias,
                               std::string_view provider, Fn&& fn) const {
  if (key != nullptr) {
    const LayerBuckets* k = key_buckets(key);
    const ExtraBuckets* e = k == nullptr ? extra_buckets(key) : nullptr;
    if (k == nullptr && e == nullptr) {
      // A key of another config version (a request that pinned an older snapshot) or of
      // another key set revision than the plan's (rare): by id.
      for (std::size_t i = 0; i < config_->keys.size() && k == nullptr; ++i) {
        if (config_->keys[i].id == key->id) {
          k = &by_key_[i];
        }
      }
      if (k == nullptr) {
        if (auto it = extra_by_id_.find(key->id); it != extra_by_id_.end()) {
          e = it->second;
        }
      }
    }
    if (e != nullptr) {
      fn(e->key);
      if (e->group != nullptr) {
        fn(*e->group);
      }
    } else {
      if (k != nullptr) {
        fn(*k);
      }
      if (!key->group.empty()) {
        if (const LayerBuckets* g = find(groups_, key->group)) {
          fn(*g);
        }
      }
    }
  }
  if (const LayerBuckets* m = find(models_, alias)) {
    fn(*m);
  }
  if (!provider.empty()) {
    if (const LayerBuckets* p = find(providers_, provider)) {
      fn(*p);
    }
  }
}

Charges LimitPlan::charges(const config::Key* key, std::string_view alias,
                           std::string_view provider, std::uint64_t tokens) const {
  Charges out;
  // Slots first: they are the cheapest to give back when a bucket refuses.
  if (instance_slots_ != nullptr) {
    out.push_back({instance_slots_, 1});
  }
  for_each_layer(key, alias, provider, [&](const LayerBuckets& l) {
    if (l.slots != nullptr) {
      out.push_back({l.slots, 1});
    }
  });
  for_each_layer(key, alias, provider, [&](const LayerBuckets& l) {
    if (l.requests != nullptr) {
      out.push_back({l.requests, 1});
    }
    if (l.tokens != nullptr) {
      out.push_back({l.tokens, static_cast<std::int64_t>(tokens)});
    }
  });
  return out;
}

Charges LimitPlan::token_charges(const config::Key* key, std::string_view alias,
                                 std::string_view provider, std::int64_t delta) const {
  Charges out;
  for_each_layer(key, alias, provider, [&](const LayerBuckets& l) {
    if (l.tokens != nullptr) {
      out.push_back({l.tokens, delta});
    }
  });
  return out;
}

Charges LimitPlan::provider_charges(std::string_view provider, std::uint64_t tokens) const {
  Charges out;
  if (const LayerBuckets* p = find(providers_, provider)) {
    if (p->requests != nullptr) {
      out.push_back({p->requests, 1});
    }
    if (p->tokens != nullptr) {
      out.push_back({p->tokens, static_cast<std::int64_t>(tokens)});
    }
  }
  return out;
}

}  // namespace sluice::limits
