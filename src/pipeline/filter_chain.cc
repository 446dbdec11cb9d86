#include "pipeline/filter_chain.h"

#include "protocol/registry.h"

namespace sluice::pipeline {

FilterStatus Filter::after_decode(CallContext& /*call*/) { return FilterStatus::proceed(); }
Awaitable<FilterStatus> Filter::before_plan(CallContext& /*call*/) {
  co_return FilterStatus::proceed();
}
Awaitable<FilterStatus> Filter::before_attempt(CallContext& /*call*/,
                                               UpstreamRequest& /*attempt*/) {
  co_return FilterStatus::proceed();
}
FilterStatus Filter::on_response_head(CallContext& /*call*/, ResponseHead& /*head*/) {
  return FilterStatus::proceed();
}
FilterStatus Filter::on_response_body(CallContext& /*call*/, std::string& /*body*/) {
  return FilterStatus::proceed();
}
FilterStatus Filter::on_stream_data(CallContext& /*call*/, std::string& /*data*/) {
  return FilterStatus::proceed();
}
void Filter::on_end(CallContext& /*call*/) {}
Awaitable<void> Filter::alongside(CallContext& /*call*/) { co_return; }
Awaitable<FilterStatus> Filter::before_release(CallContext& /*call*/,
                                               const std::string* /*answer*/) {
  co_return FilterStatus::proceed();
}
Awaitable<FilterStatus> Filter::check_stream_data(CallContext& /*call*/, std::string& /*data*/,
                                                  bool /*ending*/) {
  co_return FilterStatus::proceed();
}

FilterChain::FilterChain(std::span<const FilterRegistration> registry, const FilterSetup& setup,
                         std::span<Filter* const> extra) {
  for (const FilterRegistration& r : registry) {
    if (std::unique_ptr<Filter> filter = r.make(setup)) {
      add(*filter);
      owned_.push_back(std::move(filter));
    }
  }
  for (Filter* filter : extra) {
    add(*filter);
  }
}

void FilterChain::add(Filter& filter) {
  all_.push_back(&filter);
  const FilterHooks hooks = filter.hooks();
  for (std::size_t h = 0; h < kFilterHookCount; ++h) {
    if (hooks.has(static_cast<FilterHook>(h))) {
      by_hook_[h].push_back(&filter);
    }
  }
}

std::string FilterChain::describe() const {
  std::string out;
  for (const Filter* f : all_) {
    if (!out.empty()) {
      out += ", ";
    }
    out += f->name();
  }
  return out;
}

RouteChains::RouteChains(std::shared_ptr<const Snapshot> snapshot, const PipelineParts& parts,
                         std::span<const FilterRegistration> registry,
                         std::span<Filter* const> extra)
    : snapshot_(std::move(snapshot)) {
  const auto codecs = protocol::ingress_codecs();
  codecs_ = codecs.size();
  chains_.resize(snapshot_->routes().size() * codecs_);
  for (const auto& route : snapshot_->routes()) {
    for (std::size_t c = 0; c < codecs_; ++c) {
      if (codecs[c]->operation() == route->operation) {
        chains_[route->index * codecs_ + c] = std::make_unique<FilterChain>(
            registry, FilterSetup{*snapshot_, *route, *codecs[c], parts}, extra);
      }
    }
  }
}

const FilterChain& RouteChains::of(const RouteRuntime& route,
                                   const protocol::IngressCodec& ingress) const {
  const auto codecs = protocol::ingress_codecs();
  std::size_t c = 0;
  while (c < codecs.size() && codecs[c] != &ingress) {
    ++c;
  }
  const std::size_t at = route.index * codecs_ + c;
  return c < codecs_ && at < chains_.size() && chains_[at] ? *chains_[at] : none_;
}

}  // namespace sluice::pipeline
