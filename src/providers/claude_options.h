#pragma once

#include <cstdint>
#include <string>

#include "config/adapter_schema.h"
#include "config/providers.h"
#include "protocol/upstream.h"

// The options of every adapter that serves Claude in the Messages protocol (anthropic, vertex
// with publisher anthropic, bedrock with api invoke): how the Anthropic codec writes translated
// requests for it.
namespace sluice::providers {

// default_max_tokens: the max_tokens a translated request gets when its caller set none (the
// Messages API requires one).
inline constexpr config::AdapterOption kDefaultMaxTokensOption = {
    .name = "default_max_tokens",
    .type = config::AdapterOption::Type::kUnsigned,
    .min = 1,
    .max = 1'000'000,
    .choices = {}};
// adaptive_thinking: a reasoning effort becomes thinking {"type":"adaptive"} rather than a
// token budget.
inline constexpr config::AdapterOption kAdaptiveThinkingOption = {
    .name = "adaptive_thinking",
    .type = config::AdapterOption::Type::kBool,
    .min = 0,
    .max = 0,
    .choices = {}};

// Both, as the provider set them, into `options`.
inline void read_claude_options(const config::Provider& p, protocol::UpstreamOptions& options) {
  if (const std::string* adaptive = p.option(kAdaptiveThinkingOption.name)) {
    options.adaptive_thinking = *adaptive == "true";
  }
  if (const std::string* max = p.option(kDefaultMaxTokensOption.name)) {
    options.default_max_tokens = static_cast<std::uint32_t>(std::stoul(*max));  // validated
  }
}

}  // namespace sluice::providers
