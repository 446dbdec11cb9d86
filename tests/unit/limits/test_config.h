#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "providers/registry.h"

namespace sluice::limits {

// A config with the route `chat` (provider `mock`), the key `dev` in group `research` and the
// key `ops` in no group, plus `sections` (limits:, state:).
inline std::shared_ptr<const config::Config> load_test_config(const std::string& sections) {
  auto result = providers::load_config_string(std::string(R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    group: research
    key: sk-0123456789abcdef
  - name: ops
    key: sk-0123456789abcdeg
)y") + sections,
                                              "test.yaml");
  EXPECT_TRUE(result) << (result ? "" : result.error().message());
  return result ? *result : nullptr;
}

}  // namespace sluice::limits
