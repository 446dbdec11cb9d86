#include "pipeline/internal_call.h"

#include <exception>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "codec/http_tokens.h"
#include "pipeline/pipeline.h"
#include "spdlog/spdlog.h"

namespace sluice::pipeline {

void InternalCalls::cut_all() {
  // Copy: cancelling may finish calls, which unregister themselves.
  std::vector<std::shared_ptr<InternalCall>> all;
  for (InternalCall* call : live_) {
    all.push_back(call->shared_from_this());
  }
  for (const auto& call : all) {
    call->cancel();
  }
}

InternalCall::InternalCall(InternalCalls& calls, InternalRequest request,
                           boost::asio::any_io_executor executor)
    : calls_(calls), request_(std::move(request)), executor_(std::move(executor)) {
  registered_ = calls_.live_.insert(calls_.live_.end(), this);
  calls_.in_flight_.fetch_add(1, std::memory_order_acq_rel);
}

InternalCall::~InternalCall() {
  if (!done_) {
    finish();  // never started (start() failed before run)
  }
}

std::shared_ptr<InternalCall> InternalCall::start(const Pipeline& pipeline,
                                                  const RequestContext& on_behalf_of,
                                                  InternalRequest request,
                                                  boost::asio::any_io_executor executor) {
  InternalCalls* calls = pipeline.internal_calls();
  if (calls == nullptr || calls->in_flight() >= calls->limit() ||
      on_behalf_of.snapshot == nullptr) {
    return nullptr;
  }
  auto self = std::make_shared<InternalCall>(*calls, std::move(request), executor);
  RequestContext& ctx = self->ctx_;
  pipeline.begin(ctx);
  // The caller's snapshot, not the newest: the key below points into it (or into its key set).
  ctx.snapshot = on_behalf_of.snapshot;
  ctx.key = on_behalf_of.key;
  ctx.key_set = on_behalf_of.key_set;
  ctx.store_key = on_behalf_of.store_key;
  ctx.feature = on_behalf_of.feature;
  ctx.internal = self->request_.purpose;
  ctx.request_id = on_behalf_of.request_id;
  ctx.request_id += '.';
  ctx.request_id += self->request_.purpose;
  // In the caller's trace, under the caller's span: the upstream call is traced as the
  // caller's; the gateway records no span of its own for it.
  ctx.trace.trace = on_behalf_of.trace.trace;
  ctx.trace.parent = on_behalf_of.trace.span;
  ctx.trace.sampled = on_behalf_of.trace.sampled;
  ctx.trace.tracestate = on_behalf_of.trace.tracestate;
  pipeline.on_request_line(ctx, "POST", self->request_.target);
  if (ctx.endpoint != Endpoint::kModelCall) {
    spdlog::warn("internal {} call to {} is not a model call", self->request_.purpose,
                 self->request_.target);
    return nullptr;
  }
  ctx.bytes_in = self->request_.body.size();
  boost::asio::co_spawn(executor, run(pipeline, self), [](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::error("internal call failed: {}", ex.what());
      }
    }
  });
  return self;
}

Awaitable<void> InternalCall::run(const Pipeline& pipeline, std::shared_ptr<InternalCall> self) {
  try {
    co_await pipeline.serve(self->ctx_, *self, self->request_.body, *self);
  } catch (const std::exception& e) {
    spdlog::error("internal {} call: {}", self->request_.purpose, e.what());
  }
  pipeline.end(self->ctx_);
  self->finish();
}

void InternalCall::finish() {
  if (done_) {
    return;
  }
  done_ = true;
  calls_.live_.erase(registered_);
  calls_.in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  if (auto wake = std::move(on_done_)) {
    wake();
  }
}

Awaitable<std::optional<InternalAnswer>> InternalCall::answer_within(
    std::chrono::milliseconds timeout) {
  if (!done_) {
    auto timer = std::make_shared<boost::asio::steady_timer>(executor_, timeout);
    on_done_ = [timer] { timer->cancel(); };  // finish() runs on this worker
    boost::system::error_code ec;
    co_await timer->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    on_done_ = nullptr;
  }
  if (!done_) {
    cancel();
    co_return std::nullopt;
  }
  co_return answer_;
}

void InternalCall::cancel() {
  if (gone_ || done_) {
    return;
  }
  gone_ = true;
  if (on_gone_) {
    // As a socket's watch does: later, on this worker, never inside the caller's own step.
    boost::asio::post(executor_, [self = shared_from_this()] {
      if (auto on_gone = std::move(self->on_gone_)) {
        on_gone();
      }
    });
  }
}

ResponseHead& InternalCall::new_head() {
  head_.clear();
  return head_;
}

Awaitable<bool> InternalCall::send(RequestContext& ctx, const ResponseHead& head,
                                   std::string_view body) {
  ctx.status = head.status;
  ctx.bytes_out += body.size();
  answer_.status = head.status;
  answer_.complete = !gone_;
  if (body.size() <= request_.max_answer_bytes) {
    answer_.body.assign(body);
  }
  co_return !gone_;
}

Awaitable<bool> InternalCall::begin_stream(RequestContext& ctx, const ResponseHead& head) {
  ctx.status = head.status;
  answer_.status = head.status;
  co_return !gone_;
}

Awaitable<bool> InternalCall::write(RequestContext& ctx, std::string_view bytes) {
  ctx.bytes_out += bytes.size();
  co_return !gone_;
}

Awaitable<bool> InternalCall::end_stream(RequestContext&) {
  answer_.complete = !gone_;
  co_return !gone_;
}

void InternalCall::watch_disconnect(std::function<void()> on_gone) {
  on_gone_ = std::move(on_gone);
  if (gone_) {
    gone_ = false;  // cancel() posts the call
    cancel();
  }
}

std::string_view InternalCall::header(std::string_view name) const {
  for (const auto& [n, v] : request_.headers) {
    if (codec::equals_lower(n, name)) {
      return v;
    }
  }
  return {};
}

bool InternalCall::has_header(std::string_view name) const {
  for (const auto& [n, v] : request_.headers) {
    if (codec::equals_lower(n, name)) {
      return true;
    }
  }
  return false;
}

void InternalCall::for_each_header(
    FunctionRef<void(std::string_view name, std::string_view value)> visit) const {
  for (const auto& [n, v] : request_.headers) {
    visit(n, v);
  }
}

}  // namespace sluice::pipeline
