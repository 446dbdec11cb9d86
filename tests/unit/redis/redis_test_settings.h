#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "providers/registry.h"

namespace sluice::redis {

// The settings of SLUICE_TEST_REDIS_URL (scripts/test-services.sh), read the way a config's
// `state.redis` is; nullopt without one.
inline std::optional<config::StateSettings> test_redis_settings() {
  const char* url = std::getenv("SLUICE_TEST_REDIS_URL");
  if (url == nullptr) {
    return std::nullopt;
  }
  auto config = providers::load_config_string(
      std::string("version: 1\nauth: none\nproviders: [{ id: mock, adapter: mock }]\n"
                  "routes: [{ alias: chat, provider: mock, model: m }]\n"
                  "state: { redis: { url: \"") +
          url + "\" } }\n",
      "test.yaml");
  if (!config) {
    ADD_FAILURE() << config.error().message();
    return std::nullopt;
  }
  return (*config)->state;
}

}  // namespace sluice::redis
