#include "pipeline/filters/registry.h"

#include "pipeline/filters/affinity_filter.h"
#include "pipeline/filters/budget_filter.h"
#include "pipeline/filters/cache_filter.h"
#include "pipeline/filters/guardrail_filter.h"
#include "pipeline/filters/idempotency_filter.h"
#include "pipeline/filters/local_answer_filter.h"
#include "pipeline/filters/output_cap_filter.h"
#include "pipeline/filters/provider_capacity_filter.h"
#include "pipeline/filters/pseudonym_filter.h"
#include "pipeline/filters/rate_limit_filter.h"

namespace sluice::pipeline {

namespace {

// Chain order. After decode: the input guardrails first (a blocked prompt is charged, limited,
// cached and sent nowhere; a redacted one is all later filters see), then the output cap rewrites
// the request before anything reads its limit, then budgets refuse before anything is charged, and
// Responses affinity pins the target (or refuses a continuation the route cannot serve). Before the
// plan: rate limits, then a retry under an Idempotency-Key (its own answer, before any shared one),
// then the answer cache (a hit counts as a request but takes no tokens, and nothing after it runs;
// on the way back it reads the answer after every filter before it). Before each attempt: a local
// answer instead of a translated count_tokens, then the provider's capacity for the attempts that
// do go out. Last, on the way back only: pseudonymised values put back in the caller's answer,
// after everything that stores or shares an answer has seen it with its placeholders.
constexpr FilterRegistration kFilters[] = {
    {"guardrails", &GuardrailFilter::make},
    {"max_output_tokens", &OutputCapFilter::make},
    {"budget", &BudgetFilter::make},
    {"responses_affinity", &AffinityFilter::make},
    {"rate_limits", &RateLimitFilter::make},
    {"idempotency", &IdempotencyFilter::make},
    {"cache", &CacheFilter::make},
    {"local_answer", &LocalAnswerFilter::make},
    {"provider_capacity", &ProviderCapacityFilter::make},
    {"pseudonyms", &PseudonymFilter::make},
};

}  // namespace

std::span<const FilterRegistration> filter_registry() { return kFilters; }

}  // namespace sluice::pipeline
