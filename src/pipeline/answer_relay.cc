#include "pipeline/answer_relay.h"

#include "codec/upstream_events.h"
#include "pipeline/attempt_loop.h"
#include "pipeline/call_context.h"
#include "pipeline/error_reply.h"
#include "pipeline/stream_relay.h"
#include "pipeline/upstream_relay.h"
#include "pipeline/upstream_request.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

namespace {

constexpr std::size_t kMaxErrorBody = 1024 * 1024;

bool caller_left(const Error& error, CallContext& call) {
  return error.kind() == ErrorKind::kClientGone || call.downstream().client_gone();
}

}  // namespace

ResponseHead& success_head(CallContext& call, UpstreamRequest& up) {
  ResponseHead& head = call.downstream().new_head();
  head.status = up.exchange().status();  // the exact 2xx the upstream gave
  add_standard_fields(call.ctx(), head);
  relay_upstream_headers(up.adapter(), up.exchange(), head, /*include_retry_headers=*/true);
  return head;
}

Awaitable<void> AnswerRelay::success() {
  providers::Exchange& exchange = up_.exchange();
  if (call_.request().stream && codec::UpstreamEvents::is_stream(exchange.header("content-type"))) {
    if (std::optional<Error> refused = up_.make_transform()) {
      co_await call_.fail(*refused, Outcome::kUpstreamError);
      co_return;
    }
    StreamRelay relay(call_, loop_, up_);
    co_await relay.run();
    co_return;
  }
  co_await complete_body();
}

Awaitable<void> AnswerRelay::complete_body() {
  providers::Exchange& exchange = up_.exchange();
  auto read = co_await exchange.read_all(call_.config().server.max_upstream_response_bytes);
  if (!read) {
    if (caller_left(read.error(), call_)) {
      call_.client_gone(read.error());
      co_return;
    }
    up_.failure = read.error();
    if (!loop_.fail_over(read.error(), 0, nullptr)) {
      co_await call_.fail(read.error(), Outcome::kUpstreamError);
    }
    co_return;
  }
  auto answer = up_.answer(std::move(*read));
  if (!answer) {
    up_.failure = answer.error();
    if (loop_.fail_over(answer.error(), 0, nullptr)) {
      call_.ctx().usage.reset();
      call_.ctx().finish_reason.clear();
      co_return;
    }
    co_await call_.fail(answer.error(), Outcome::kUpstreamError);
    co_return;
  }
  ResponseHead& head = success_head(call_, up_);
  if (const std::string_view type = exchange.header("content-type");
      up_.passthrough() && !type.empty()) {
    head.content_type = type;
  }
  co_await call_.send_answer(head, std::move(*answer));
}

Awaitable<void> AnswerRelay::failure() {
  providers::Exchange& exchange = up_.exchange();
  const providers::ProviderAdapter& adapter = up_.adapter();
  const int status = exchange.status();
  auto read = co_await exchange.read_all(kMaxErrorBody);
  std::string body = read ? std::move(*read) : std::string();
  scrub_secrets(body, adapter.secrets());  // before its words reach any message
  Error error = adapter.classify_failure(status, exchange, body);
  up_.failure = error;
  if (!read && caller_left(read.error(), call_)) {
    call_.client_gone(read.error());
    co_return;
  }
  if (status == 429) {
    // The provider asked for room: other requests prefer other targets until the time it
    // asked for (1 s when it did not say), at most the route's retry_after_max.
    const auto asked = asked_wait(error, &exchange).value_or(std::chrono::milliseconds(1000));
    const auto cap = call_.config().routing.retry.retry_after_max;
    up_.target().health->back_off_until(call_.clock().now() + std::min(asked, cap));
  }
  if (loop_.fail_over(error, status, &exchange)) {
    co_return;
  }
  bool plain = true;
  if (call_.stream() != nullptr) {
    plain = co_await call_.plain_answer();
  }
  if (up_.passthrough() && plain && error.code() != "upstream_auth_failed" &&
      call_.ingress().is_native_error(body)) {
    // Same protocol both sides: the provider's error object is already what the caller's SDK
    // parses; relay it with the provider's status (minus any secret it echoed).
    call_.ctx().outcome = Outcome::kUpstreamError;
    call_.ctx().error = error;
    ResponseHead& head = call_.downstream().new_head();
    head.status = status;
    head.content_type = "application/json";
    add_standard_fields(call_.ctx(), head);
    relay_upstream_headers(adapter, exchange, head, /*include_retry_headers=*/true);
    if (exchange.header("x-should-retry").empty()) {
      head.headers.add("x-should-retry", should_retry(error));
    }
    co_await call_.send_upstream_error(head, body);
    co_return;
  }
  co_await call_.fail(error, Outcome::kUpstreamError, &up_);
}

}  // namespace sluice::pipeline
