#pragma once

#include <memory>
#include <span>

#include "config/config.h"
#include "core/result.h"
#include "providers/adapter.h"

namespace sluice::providers {

// What config validation needs to know of every adapter kind (names, network or in-process,
// options). Pass it as config::LoadOptions::adapters.
std::span<const config::AdapterSchema> adapter_schemas();

// The adapter for a validated provider config. Fails (kBadRequest, with the provider's source
// location) on what validation cannot see, e.g. an unreadable CA file. `provider` must outlive
// the adapter (both belong to one snapshot).
Result<std::unique_ptr<ProviderAdapter>> make_adapter(const config::Provider& provider);

// config::load_from_file / load_from_string with adapter_schemas() filled in.
Result<std::shared_ptr<const config::Config>> load_config_file(const std::string& path,
                                                               config::LoadOptions options = {});
Result<std::shared_ptr<const config::Config>> load_config_string(const std::string& yaml,
                                                                 const std::string& source_name,
                                                                 config::LoadOptions options = {});

}  // namespace sluice::providers
