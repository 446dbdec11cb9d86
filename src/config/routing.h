#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `routing:` (the retry and circuit-breaker defaults, the retry budgets' window). Throws
// ConfigError.
RoutingSettings load_routing(const YamlField& field);
// A `retry:` block over `base` (fields not given keep base's values): `routing.retry` over the
// built-in defaults, a route's over `routing.retry`.
RetrySettings load_retry(const YamlField& field, RetrySettings base);

}  // namespace sluice::config
