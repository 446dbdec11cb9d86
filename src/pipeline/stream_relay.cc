#include "pipeline/stream_relay.h"

#include "pipeline/answer_relay.h"
#include "pipeline/attempt_loop.h"
#include "pipeline/call_context.h"
#include "pipeline/upstream_request.h"

namespace sluice::pipeline {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

constexpr std::size_t kMaxSseEvent = 4 * 1024 * 1024;
// What a stream may send before its commit point (role chunk, message_start, metadata) that is
// held back so a failure can still go elsewhere. Past it the stream commits anyway.
constexpr std::size_t kMaxHeldPrelude = 64 * 1024;

Error truncated() {
  return Error(ErrorKind::kUpstreamProtocol, "upstream stream ended before its final answer")
      .with_code("upstream_stream_truncated");
}

}  // namespace

StreamRelay::StreamRelay(CallContext& call, AttemptLoop& loop, UpstreamRequest& up)
    : call_(call), loop_(loop), up_(up), events_(kMaxSseEvent) {
  // Bedrock streams in AWS's binary event stream framing; every other upstream in SSE.
  events_.set_framing(codec::UpstreamEvents::framing_of(up_.exchange().header("content-type")));
  adapter_reads_failures_ =
      up_.passthrough() && events_.framing() == codec::UpstreamEvents::Framing::kEventStream;
}

Awaitable<void> StreamRelay::run() {
  StreamTransform& transform = *up_.transform;
  for (;;) {
    co_await read_once();
    const bool stopping = ended_ || failure_ || transform.failed();
    if (state_ == State::kHolding) {
      co_await hold_or_commit(stopping);
      if (terminal()) {
        co_return;
      }
    }
    const bool last = stopping || transform.complete();
    if (last) {
      report();
    }
    // The last write goes through the filters even when empty: one holding bytes back (the
    // output guardrails) releases them then.
    if (!out_.empty() || (state_ == State::kStreaming && last &&
                          !call_.chain().at(FilterHook::kStreamData).empty())) {
      co_await write_out();
    }
    if (stopping || terminal()) {
      break;
    }
  }
  report();
  call_.set_stored_answer(std::string(transform.stored_id()), up_.adapter().id());
  co_await finish();
}

void StreamRelay::report() { up_.transform->report(call_.ctx()); }

void StreamRelay::feed_events(codec::UpstreamEvents::Status status, codec::SseEvent& event,
                              bool at_end) {
  using Status = codec::UpstreamEvents::Status;
  StreamTransform& transform = *up_.transform;
  while (status == Status::kEvent && !transform.failed()) {
    if (adapter_reads_failures_) {
      if (auto failed = up_.adapter().stream_failure(event)) {
        failure_ = std::move(failed);
        return;
      }
    }
    transform.on_event(event, at_end, out_);
    status = at_end ? events_.finish(event) : events_.next(event);
  }
  if (status == Status::kTooLarge && !failure_) {
    failure_ = Error(ErrorKind::kUpstreamProtocol, "upstream sent an event larger than " +
                                                       std::to_string(kMaxSseEvent) + " bytes")
                   .with_code("upstream_event_too_large");
  }
  if (status == Status::kMalformed && !failure_) {
    failure_ = Error(ErrorKind::kUpstreamProtocol, "upstream sent a malformed event stream (" +
                                                       std::string(events_.malformed()) + ")")
                   .with_code("upstream_stream_malformed");
  }
}

Awaitable<void> StreamRelay::read_once() {
  StreamTransform& transform = *up_.transform;
  in_.clear();
  out_.clear();
  // Meanwhile the keep-alive may run the stream-data filters for what they hold on a clock.
  CallerStream* stream = state_ == State::kStreaming ? call_.stream() : nullptr;
  if (stream != nullptr) {
    stream->relay_reading(true);
  }
  auto n = co_await up_.exchange().read_some(in_);
  if (stream != nullptr) {
    stream->relay_reading(false);
  }
  codec::SseEvent event;
  if (!n) {
    failure_ = n.error();
  } else if (*n == 0) {
    feed_events(events_.finish(event), event, /*at_end=*/true);
    if (!failure_ && !transform.failed()) {
      transform.on_end(out_);
    }
    ended_ = true;
  } else {
    events_.feed(in_);
    feed_events(events_.next(event), event, /*at_end=*/false);
  }
}

Awaitable<void> StreamRelay::hold_or_commit(bool stopping) {
  StreamTransform& transform = *up_.transform;
  held_.append(out_);
  out_.clear();
  const bool broken = failure_ || transform.failed() || (ended_ && !transform.complete());
  const bool caller_left =
      call_.downstream().client_gone() || (failure_ && failure_->kind() == ErrorKind::kClientGone);
  if (broken && !transform.committed() && !caller_left) {
    // Before the commit point: the next attempt may still answer instead.
    up_.failure = failure_ ? *failure_ : transform.failed() ? *transform.failed() : truncated();
    if (loop_.fail_over(*up_.failure, 0, nullptr)) {
      up_.exchange().abort();
      state_ = State::kFailedOver;
      co_return;
    }
  }
  if (transform.committed() || stopping || held_.size() > kMaxHeldPrelude) {
    co_await commit();
    if (state_ == State::kStreaming) {
      out_.swap(held_);
    }
  }
}

Awaitable<void> StreamRelay::commit() {
  if (call_.must_release()) {
    std::optional<Error> stopped = co_await call_.release(nullptr);
    if (stopped) {
      call_.cancel().cancel();
      state_ = State::kStopped;
      co_await call_.fail(*stopped, Outcome::kUpstreamError);
      co_return;
    }
  }
  CallerStream& stream = *call_.stream();
  ResponseHead& head = success_head(call_, up_);
  head.content_type = "text/event-stream";
  head.headers.add("Cache-Control", "no-store");
  head.headers.add("X-Accel-Buffering", "no");
  for (Filter* filter : call_.chain().at(FilterHook::kResponseHead)) {
    const FilterStatus status = filter->on_response_head(call_, head);
    if (!status.proceeds()) {
      call_.cancel().cancel();
      state_ = State::kStopped;
      if (status.action() == FilterStatus::Action::kStop) {
        co_await call_.fail(status.error(), Outcome::kUpstreamError);
      }
      co_return;
    }
  }
  // co_await is kept out of if-conditions: GCC 12 miscompiles some of those.
  const bool head_sent = co_await stream.begin(head);
  if (!head_sent) {
    call_.cancel().cancel();
    call_.client_gone(Error(ErrorKind::kClientGone, "client disconnected before the stream began"));
    state_ = State::kCallerGone;
    co_return;
  }
  state_ = State::kStreaming;
}

Awaitable<void> StreamRelay::write_out() {
  RequestContext& ctx = call_.ctx();
  if (ctx.first_token.count() < 0) {
    ctx.first_token = duration_cast<microseconds>(call_.clock().now() - ctx.started);
  }
  std::optional<Error> stopped;
  const StreamTransform& transform = *up_.transform;
  const bool last = ended_ || failure_.has_value() || transform.failed() || transform.complete();
  bool go_on = true;
  if (call_.checks_stream()) {
    go_on = co_await call_.check_stream_data(out_, stopped, last);
  }
  if (go_on) {
    go_on = call_.filter_stream_data(out_, stopped, last);
  }
  const bool sent = co_await call_.stream()->write(out_);
  if (!go_on) {
    // A filter ended the stream; its error event went out with the write.
    call_.cancel().cancel();
    ctx.outcome = Outcome::kMidstreamError;
    ctx.error = stopped;
    state_ = State::kStopped;
    if (sent) {
      co_await call_.stream()->end();
    }
    co_return;
  }
  if (!sent) {
    if (state_ != State::kAnswered) {
      state_ = State::kCallerGone;
    }
    call_.cancel().cancel();
    co_return;
  }
  if (transform.complete() && !transform.failed()) {
    state_ = State::kAnswered;
  }
}

Awaitable<void> StreamRelay::finish() {
  if (state_ == State::kStopped) {
    co_return;
  }
  if (state_ == State::kAnswered) {
    co_await end_answered();
    co_return;
  }
  co_await end_unanswered();
}

// The caller has the whole answer, its terminator included ([DONE], message_stop,
// response.completed): what happens after it (the caller hangs up at once, as the OpenAI SDK
// does after [DONE]; the upstream stalls or resets before its body's end) does not make the
// answer incomplete.
Awaitable<void> StreamRelay::end_answered() {
  RequestContext& ctx = call_.ctx();
  ctx.outcome = ctx.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  if (call_.downstream().client_gone() ||
      (failure_ && failure_->kind() == ErrorKind::kClientGone)) {
    if (!ended_) {
      call_.cancel().cancel();  // the upstream's unread end: its connection is closed, not pooled
    }
    co_return;
  }
  if (failure_) {
    // The upstream broke after its final answer: nothing to add to a finished stream, and the
    // attempt keeps the error (the connection is not reused).
    call_.cancel().cancel();
    up_.failure = failure_;
  }
  co_await call_.stream()->end();
}

// The terminal error event and the stream's end after a failure, or the end of a stream whose
// final write reached the caller only partly.
Awaitable<void> StreamRelay::end_unanswered() {
  RequestContext& ctx = call_.ctx();
  StreamTransform& transform = *up_.transform;
  if (state_ == State::kCallerGone || call_.downstream().client_gone() ||
      (failure_ && failure_->kind() == ErrorKind::kClientGone)) {
    call_.client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
    co_return;
  }
  if (transform.failed()) {
    // The terminal error event went out with the last write.
    call_.cancel().cancel();
    ctx.outcome = Outcome::kMidstreamError;
    ctx.error = transform.failed();
    co_await call_.stream()->end();
    co_return;
  }
  if (!failure_ && !transform.complete()) {
    failure_ = truncated();
  }
  if (!failure_) {
    ctx.outcome = ctx.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
    co_await call_.stream()->end();
    co_return;
  }
  call_.cancel().cancel();
  ctx.outcome = Outcome::kMidstreamError;
  ctx.error = failure_;
  std::string event;
  transform.on_failure(*failure_, event);
  const bool sent = co_await call_.stream()->write(event);
  if (sent) {
    co_await call_.stream()->end();
  }
}

}  // namespace sluice::pipeline
