#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"

namespace sluice::pipeline {

// The value of `x-should-retry` for an error the gateway answers itself: the header the OpenAI
// and Anthropic SDKs obey before their own heuristics. "false" for what the caller must fix
// (400, 401, 403, 404, 405, 413, 431), for a provider refusing the gateway's credentials and
// for an exhausted budget (429 insufficient_quota);
// "true" for load shedding (429, 503) and transient upstream failures (timeouts, unreachable,
// 408, 429, 5xx from the provider).
std::string_view should_retry(const Error& error);

// The fields every response carries: x-request-id, Server, and once an upstream was tried the
// provider, model and attempt count.
void add_standard_fields(const RequestContext& ctx, ResponseHead& head);
// The gateway's own x-ratelimit-{limit,remaining,reset}-{requests,tokens} (OpenAI's names and
// formats) for the tightest bucket of each dimension admission charged; none without limits.
// Part of add_standard_fields.
void add_rate_limit_fields(const RequestContext& ctx, ResponseHead& head);

// `error` as a response in the caller's protocol (ctx.ingress, or the default protocol):
// fills `head` (status, standard fields, x-should-retry, Retry-After) and returns the body.
std::string error_response(const RequestContext& ctx, const Error& error, ResponseHead& head);

// 404 model_not_found for an alias that has no route or that the caller's key may not use (the
// two are not told apart, so a key cannot probe for aliases it may not use).
Error model_not_found(std::string_view alias);

}  // namespace sluice::pipeline
