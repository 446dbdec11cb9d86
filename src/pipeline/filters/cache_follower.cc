#include "pipeline/filters/cache_follower.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/answer_builder.h"
#include "ir/token_estimate.h"
#include "pipeline/call_context.h"
#include "pipeline/caller_stream.h"
#include "pipeline/error_reply.h"

namespace sluice::pipeline {

namespace {

// Waits until `flight` has more than `cursor` or has ended, or for `at_most` (at most a
// second, so a lost wake-up, none is expected, costs a second, never a hung request).
Awaitable<void> wait_for_more(cache::Flight& flight, std::size_t cursor, const CallContext& who,
                              std::chrono::milliseconds at_most = std::chrono::seconds(1)) {
  auto executor = co_await boost::asio::this_coro::executor;
  auto timer = std::make_shared<boost::asio::steady_timer>(
      executor, std::clamp(at_most, std::chrono::milliseconds(1),
                           std::chrono::milliseconds(std::chrono::seconds(1))));
  const bool waiting = flight.wait(cursor, &who, [executor, timer] {
    boost::asio::post(executor, [timer] { timer->cancel(); });  // on the follower's worker
  });
  if (waiting) {
    boost::system::error_code ec;
    co_await timer->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  }
}

// A follower's record names the target that produced the answer and counts what it saved.
// The origin is copied out of the flight under its lock and held by the request: the leader
// may still be finishing its call on another worker.
void name_origin(RequestContext& ctx, const cache::Flight& flight) {
  std::shared_ptr<const cache::Flight::Origin> origin = flight.origin();
  if (origin == nullptr) {
    return;
  }
  ctx.cached_provider = origin->provider;
  ctx.cached_model = origin->model;
  ctx.saved(origin->usage);
  ctx.cached_owner = std::move(origin);
}

Awaitable<bool> follow_plain(CallContext& call, cache::Flight& flight) {
  RequestContext& ctx = call.ctx();
  cache::AnswerBuilder builder;
  std::vector<ir::StreamEvent> events;
  std::size_t cursor = 0;
  for (;;) {
    events.clear();
    const cache::Flight::State state = flight.read(cursor, events);
    for (const ir::StreamEvent& e : events) {
      builder.add(e);
    }
    if (state == cache::Flight::State::kFailed) {
      co_return false;
    }
    if (state == cache::Flight::State::kDone) {
      break;
    }
    if (call.downstream().client_gone()) {
      call.client_gone(
          Error(ErrorKind::kClientGone, "client disconnected waiting for a shared call"));
      co_return true;
    }
    co_await wait_for_more(flight, cursor, call);
  }
  std::optional<ir::Response> answer = builder.take();
  if (!answer) {
    co_return false;
  }
  bool clamped = false;
  Result<std::string> body = call.ingress().encode_response_for(call.request(), *answer, clamped);
  if (!body) {
    co_return false;
  }
  ctx.cache = "coalesced";
  ctx.outcome = Outcome::kCoalesced;
  ctx.finish_reason = std::string(ir::to_string(answer->finish));
  name_origin(ctx, flight);
  ResponseHead& head = call.downstream().new_head();
  add_standard_fields(ctx, head);
  co_await call.send_answer(head, std::move(*body));
  co_return true;
}

// A streaming follower: its caller's stream, begun at the first events, fed until the
// flight ends. While the shared call has nothing new (a model thinking before its first token,
// or between two), the follower keeps its caller's stream alive itself, as the attempt loop's
// keep-alive would: a comment once nothing went out for the route's heartbeat (the head first,
// early, when none went out: docs/cache.md says what that commits).
class StreamFollower {
 public:
  StreamFollower(CallContext& call, cache::Flight& flight,
                 std::unique_ptr<protocol::StreamEncoder> encoder, CallerStream& stream)
      : call_(call),
        ctx_(call.ctx()),
        flight_(flight),
        encoder_(std::move(encoder)),
        stream_(stream) {}

  // follow_flight's answer.
  Awaitable<bool> run() {
    for (;;) {
      events_.clear();
      const cache::Flight::State state = flight_.read(cursor_, events_);
      if (state == cache::Flight::State::kFailed && !begun_) {
        // No event written (at most keep-alive comments): this caller makes its own attempt,
        // on the stream it opened.
        co_return false;
      }
      if (events_.empty() && state == cache::Flight::State::kLive && beat_due()) {
        ctx_.cache = "coalesced";  // what an early head says
        if (!co_await stream_.beat()) {
          call_.client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
          co_return true;
        }
      }
      encode(state);
      // The last write goes through the filters even when empty (one may hold bytes back).
      const bool ending = state != cache::Flight::State::kLive || encoder_->finished();
      if (!out_.empty() || (ending && begun_)) {
        const bool written = co_await write(ending);
        if (!written) {
          co_return true;  // the caller left, or a filter stopped the stream: answered
        }
      }
      if (ending) {
        break;
      }
      if (call_.downstream().client_gone()) {
        call_.client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
        co_return true;
      }
      co_await wait_for_more(flight_, cursor_, call_, until_beat());
    }
    if (ctx_.outcome != Outcome::kMidstreamError) {
      ctx_.outcome = Outcome::kCoalesced;
      name_origin(ctx_, flight_);
    }
    co_await call_.stream()->end();
    co_return true;
  }

 private:
  bool beat_due() const { return call_.clock().now() >= stream_.next_beat(); }
  std::chrono::milliseconds until_beat() const {
    const auto due = stream_.next_beat();
    if (due == Clock::Monotonic::time_point::max()) {
      return std::chrono::seconds(1);
    }
    return std::chrono::ceil<std::chrono::milliseconds>(due - call_.clock().now());
  }

  // The new events in the caller's protocol; after a failure, its terminal error event.
  void encode(cache::Flight::State state) {
    out_.clear();
    for (const ir::StreamEvent& e : events_) {
      encoder_->encode(e, out_);
      if (e.kind == ir::StreamEventKind::kError) {
        // The shared call broke and said so (its stream ended early): this caller's stream
        // ends with that error, which is not a coalesced answer.
        ctx_.outcome = Outcome::kMidstreamError;
        ctx_.error = e.error;
      }
    }
    if (state == cache::Flight::State::kFailed && !encoder_->finished()) {
      ir::StreamEvent broken;
      broken.kind = ir::StreamEventKind::kError;
      broken.error = Error(ErrorKind::kUpstreamProtocol, "the shared upstream call failed")
                         .with_code("upstream_stream_truncated");
      encoder_->encode(broken, out_);
      ctx_.outcome = Outcome::kMidstreamError;
      ctx_.error = broken.error;
    }
  }

  Awaitable<bool> write(bool ending) {
    if (!begun_) {
      ctx_.cache = "coalesced";
      ResponseHead& head = call_.downstream().new_head();
      add_standard_fields(ctx_, head);
      head.content_type = "text/event-stream";
      head.headers.add("Cache-Control", "no-store");
      head.headers.add("X-Accel-Buffering", "no");
      begun_ = co_await call_.begin_own_stream(head);
      if (!begun_) {
        co_return false;
      }
      ctx_.first_token =
          std::chrono::duration_cast<std::chrono::microseconds>(call_.clock().now() - ctx_.started);
    }
    co_return co_await call_.write_own_stream(out_, ending);
  }

  CallContext& call_;
  RequestContext& ctx_;
  cache::Flight& flight_;
  std::unique_ptr<protocol::StreamEncoder> encoder_;
  CallerStream& stream_;
  std::vector<ir::StreamEvent> events_;
  std::string out_;
  std::size_t cursor_ = 0;
  bool begun_ = false;
};

}  // namespace

Awaitable<bool> follow_flight(CallContext& call, cache::Flight& flight) {
  if (!call.request().stream) {
    co_return co_await follow_plain(call, flight);
  }
  protocol::IngressRequest& request = call.mutable_request();
  if (auto ir = call.ir()) {
    request.estimated_input_tokens = ir::estimate_input_tokens(**ir);
  }
  std::unique_ptr<protocol::StreamEncoder> encoder = call.ingress().make_stream_encoder(request);
  if (!encoder) {
    co_return false;
  }
  const config::Route& route = *call.route().config;
  CallerStream& stream = call.open_stream(route.heartbeat.value_or(call.config().server.heartbeat));
  StreamFollower follower(call, flight, std::move(encoder), stream);
  co_return co_await follower.run();
}

}  // namespace sluice::pipeline
