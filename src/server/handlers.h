#pragma once

#include <optional>

#include "core/error.h"
#include "http/net.h"
#include "server/request_context.h"
#include "server/session.h"

namespace sluice::server {

// Checks that need only the request head: endpoint exists, method allowed, caller
// authenticated, declared body size within limits. Runs before the body is read, so a bad
// request costs no body transfer (and 100-continue is never sent for it). Fills ctx.key and
// ctx.snapshot.
std::optional<Error> check_before_body(Session& session, RequestContext& ctx,
                                       const RequestHeader& head);

// The protocol whose error shape answers a request for `target` (Anthropic for
// /v1/messages, OpenAI otherwise); usable as soon as the request line is parsed.
Dialect dialect_for_target(std::string_view target);

// Serves one complete request (head and body read). Writes exactly one response.
http::Awaitable<void> dispatch(Session& session, RequestContext& ctx, Request& req);

}  // namespace sluice::server
