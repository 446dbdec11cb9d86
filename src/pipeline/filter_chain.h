#pragma once

#include <array>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "pipeline/filter.h"
#include "pipeline/snapshot.h"

namespace sluice::pipeline {

struct PipelineParts;

// What a filter factory may look at to decide whether a chain needs it and to build it: a chain
// serves one route for callers of one protocol.
struct FilterSetup {
  const Snapshot& snapshot;
  const RouteRuntime& route;
  const protocol::IngressCodec& ingress;
  const PipelineParts& parts;  // this worker's (admission, affinity store, clock, ...)
};

// One kind of filter, in chain order (filters/registry.cc): builds the filter for a chain, or
// returns null when that route's config, the caller's protocol or the process does not use it.
struct FilterRegistration {
  std::string_view name;
  std::unique_ptr<Filter> (*make)(const FilterSetup& setup);
};

// The filters of one (route, caller protocol) on one worker, built once per config version,
// each listed under the hooks it takes part in. Immutable once built.
class FilterChain {
 public:
  FilterChain() = default;  // no filters
  // Every registration's filter that `setup` configures, in registration order, then `extra`
  // (not owned; tests).
  FilterChain(std::span<const FilterRegistration> registry, const FilterSetup& setup,
              std::span<Filter* const> extra = {});

  // The filters taking part in `hook`, in chain order.
  std::span<Filter* const> at(FilterHook hook) const {
    const auto& list = by_hook_[static_cast<std::size_t>(hook)];
    return {list.data(), list.size()};
  }
  std::size_t size() const { return all_.size(); }
  // The filters' names in order, joined with ", " (start-up logs, tests).
  std::string describe() const;

 private:
  void add(Filter& filter);

  std::vector<std::unique_ptr<Filter>> owned_;
  std::vector<Filter*> all_;
  std::array<boost::container::small_vector<Filter*, 4>, kFilterHookCount> by_hook_;
};

// The chains of every route of one snapshot and every caller protocol of its operation, for one
// worker. A call holds the set it started with (shared ownership) until it ends, so a reload
// never frees a chain in use.
class RouteChains {
 public:
  RouteChains(std::shared_ptr<const Snapshot> snapshot, const PipelineParts& parts,
              std::span<const FilterRegistration> registry, std::span<Filter* const> extra);

  const Snapshot* snapshot() const { return snapshot_.get(); }
  // The chain for callers of `ingress` (a registered codec of the route's operation) on
  // `route`, one of this snapshot's routes.
  const FilterChain& of(const RouteRuntime& route, const protocol::IngressCodec& ingress) const;

 private:
  std::shared_ptr<const Snapshot> snapshot_;
  std::size_t codecs_ = 0;                            // protocol::ingress_codecs().size()
  std::vector<std::unique_ptr<FilterChain>> chains_;  // [route.index * codecs_ + codec]
  FilterChain none_;
};

}  // namespace sluice::pipeline
