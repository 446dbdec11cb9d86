#include "pipeline/snapshot.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "providers/registry.h"

namespace sluice::pipeline {

std::array<char, 64> sha256_hex(std::string_view text) {
  // One digest context per thread, the algorithm fetched once: EVP_Digest would allocate a
  // context and fetch SHA-256 by name (three heap allocations) on every authenticated request.
  struct Hasher {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Hasher() {
      EVP_MD_CTX_free(ctx);
      EVP_MD_free(md);
    }
  };
  thread_local Hasher hasher;
  std::array<char, 64> out{};
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (hasher.md == nullptr || hasher.ctx == nullptr ||
      EVP_DigestInit_ex2(hasher.ctx, hasher.md, nullptr) != 1 ||
      EVP_DigestUpdate(hasher.ctx, text.data(), text.size()) != 1 ||
      EVP_DigestFinal_ex(hasher.ctx, digest, &len) != 1 || len != 32) {
    return out;  // all zero bytes: matches no stored (hex) hash
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return out;
}

namespace {

Result<std::shared_ptr<const metering::PriceBook>> load_prices(const config::Config& cfg) {
  const std::string& path = cfg.metering.prices;
  if (path.empty()) {
    return metering::default_price_book();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error(ErrorKind::kBadRequest, "metering.prices: cannot read " + path);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return metering::load_price_book(text.str(), path);
}

}  // namespace

const RouteRuntime::GroupGuardrails* RouteRuntime::group(std::string_view key_group) const {
  for (const GroupGuardrails& g : group_guardrails) {
    if (!key_group.empty() && g.group == key_group) return &g;
  }
  return nullptr;
}

const guardrails::Policies& RouteRuntime::input_guardrails_for(std::string_view key_group) const {
  const GroupGuardrails* g = group(key_group);
  return g != nullptr ? g->input : input_guardrails;
}

const guardrails::Policies& RouteRuntime::output_guardrails_for(std::string_view key_group) const {
  const GroupGuardrails* g = group(key_group);
  return g != nullptr ? g->output : output_guardrails;
}

std::vector<const guardrails::Policies*> RouteRuntime::guardrail_sets(bool input) const {
  std::vector<const guardrails::Policies*> sets{input ? &input_guardrails : &output_guardrails};
  for (const GroupGuardrails& g : group_guardrails) sets.push_back(input ? &g.input : &g.output);
  return sets;
}

Result<std::shared_ptr<const Snapshot>> Snapshot::build(
    std::shared_ptr<const config::Config> cfg, std::shared_ptr<routing::HealthRegistry> health) {
  auto snap = std::make_shared<Snapshot>();
  snap->config_ = cfg;
  snap->health_ = health ? std::move(health) : std::make_shared<routing::HealthRegistry>();
  auto prices = load_prices(*cfg);
  if (!prices) {
    return std::move(prices).error();
  }
  snap->price_book_ = std::move(*prices);
  snap->reasoning_seal_ = std::make_unique<const ReasoningSeal>(cfg->server.reasoning_seal_key);
  // Each guardrail policy compiled once, shared by the routes that apply it.
  std::unordered_map<std::string_view, std::shared_ptr<const guardrails::Policy>> policies;
  for (const config::GuardrailPolicy& p : cfg->guardrails.policies) {
    auto compiled = guardrails::Policy::compile(p);
    if (!compiled) {
      return std::move(compiled).error();
    }
    policies[p.name] = std::move(*compiled);
  }
  std::unordered_map<std::string_view, const ProviderRuntime*> by_id;
  for (const config::Provider& p : cfg->providers) {
    auto rt = std::make_unique<ProviderRuntime>();
    rt->config = &p;
    auto adapter = providers::make_adapter(p);
    if (!adapter) {
      return std::move(adapter).error();
    }
    rt->adapter = std::move(*adapter);
    by_id[p.id] = rt.get();
    snap->providers_.push_back(std::move(rt));
  }
  // An external checker reaches its service through a provider entry (its base URL, TLS, pool).
  for (const auto& [name, policy] : policies) {
    for (const guardrails::Policy::External& e : policy->externals()) {
      const auto it = by_id.find(e.checker.provider);
      if (it == by_id.end() || it->second->adapter->endpoint() == nullptr) {
        return Error(ErrorKind::kBadRequest, "guardrail policy \"" + policy->name() +
                                                 "\": external checker \"" + e.name +
                                                 "\" needs a network provider \"" +
                                                 e.checker.provider + "\" (providers:), enabled");
      }
    }
  }
  for (const config::Route& r : cfg->routes) {
    if (r.targets.empty()) {
      continue;
    }
    auto rr = std::make_unique<RouteRuntime>();
    rr->config = &r;
    rr->index = snap->routes_.size();
    rr->operation = r.kind == config::RouteKind::kEmbeddings ? protocol::Operation::kEmbeddings
                                                             : protocol::Operation::kChat;
    rr->policy.compile(r, cfg->routing, *snap->health_);
    const auto add = [&](const std::vector<std::string>& names, guardrails::Policies& input,
                         guardrails::Policies& output) {
      for (const std::string& name : names) {
        const auto& policy = policies.at(name);  // the config checked the names
        for (auto [wanted, list] :
             {std::pair{policy->input(), &input}, std::pair{policy->output(), &output}}) {
          if (wanted && std::find(list->begin(), list->end(), policy) == list->end()) {
            list->push_back(policy);
          }
        }
      }
    };
    add(cfg->guardrails.apply, rr->input_guardrails, rr->output_guardrails);
    add(r.guardrails, rr->input_guardrails, rr->output_guardrails);
    for (const auto& [group, names] : cfg->guardrails.key_groups) {
      RouteRuntime::GroupGuardrails& g = rr->group_guardrails.emplace_back();
      g.group = group;
      g.input = rr->input_guardrails;
      g.output = rr->output_guardrails;
      add(names, g.input, g.output);
    }
    for (std::size_t i = 0; i < r.targets.size(); ++i) {
      const config::Target& t = r.targets[i];
      auto it = by_id.find(t.provider);
      if (it == by_id.end()) {
        return Error(ErrorKind::kBadRequest,
                     r.source + ": route refers to unknown provider " + t.provider);
      }
      TargetRuntime& target = rr->targets.emplace_back();
      target.operation = rr->operation;
      target.provider = it->second;
      if (target.provider->adapter->wire_protocol(rr->operation).empty()) {
        return Error(ErrorKind::kBadRequest,
                     t.source + ": provider " + it->second->config->id + " (adapter " +
                         it->second->config->adapter + ") cannot serve " +
                         std::string(protocol::to_string(rr->operation)) + " routes");
      }
      target.model = t.model;
      target.timeouts = t.timeout   ? *t.timeout
                        : r.timeout ? *r.timeout
                                    : it->second->config->timeout;
      target.health = rr->policy.health[i];
      target.path = rr->policy.paths[i];
    }
    rr->policy.deadline = r.retry.deadline;
    if (rr->policy.deadline.count() == 0) {
      for (const TargetRuntime& t : rr->targets) {
        rr->policy.deadline = std::max(rr->policy.deadline, t.timeouts.total);
      }
    }
    for (const std::string& alias : r.aliases) {
      snap->by_alias_[alias] = rr.get();
    }
    snap->routes_.push_back(std::move(rr));
  }
  for (const config::Key& k : cfg->keys) {
    snap->by_hash_[k.sha256_hex] = &k;
  }
  return std::shared_ptr<const Snapshot>(std::move(snap));
}

const RouteRuntime* Snapshot::find_route(std::string_view alias) const {
  auto it = by_alias_.find(alias);
  return it == by_alias_.end() ? nullptr : it->second;
}

const config::Key* Snapshot::authenticate(std::string_view presented) const {
  if (presented.empty() || presented.size() > 1024) {
    return nullptr;
  }
  const std::array<char, 64> hash = sha256_hex(presented);
  return find_key(std::string_view(hash.data(), hash.size()));
}

const config::Key* Snapshot::find_key(std::string_view digest) const {
  auto it = by_hash_.find(digest);
  if (it == by_hash_.end()) {
    return nullptr;
  }
  // The map lookup already matched; the constant-time compare makes the intent explicit
  // and keeps the check correct should the lookup ever become prefix- or bucket-based.
  const std::string& stored = it->second->sha256_hex;
  if (stored.size() != digest.size() ||
      CRYPTO_memcmp(stored.data(), digest.data(), digest.size()) != 0) {
    return nullptr;
  }
  return it->second;
}

std::string_view Snapshot::stored_alias(std::string_view alias) const {
  auto it = by_alias_.find(alias);
  return it == by_alias_.end() ? std::string_view() : it->first;
}

bool Snapshot::key_allows(const config::Key* key, std::string_view alias) {
  if (key == nullptr || key->allowed_aliases.empty()) {
    return true;
  }
  return std::find(key->allowed_aliases.begin(), key->allowed_aliases.end(), alias) !=
         key->allowed_aliases.end();
}

std::vector<std::string_view> Snapshot::aliases_for(const config::Key* key) const {
  std::vector<std::string_view> out;
  for (const auto& r : routes_) {
    for (const std::string& alias : r->config->aliases) {
      if (key_allows(key, alias)) {
        out.push_back(alias);
      }
    }
  }
  return out;
}

}  // namespace sluice::pipeline
