#pragma once

#include <span>

#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

// Every kind of filter, in the order chains run them (registry.cc). Adding a filter: its own
// header and source in this folder, a static make() returning null when not configured, and one
// line here (docs/architecture.md, "Adding a filter").
std::span<const FilterRegistration> filter_registry();

}  // namespace sluice::pipeline
