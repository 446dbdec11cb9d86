#include "pipeline/filters/cache_follower.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/answer_builder.h"
#include "ir/token_estimate.h"
#include "pipeline/call_context.h"
#include "pipeline/error_reply.h"

namespace sluice::pipeline {

namespace {

// Waits until `flight` has more than `cursor` or has ended; bounded, so a lost wake-up (none
// is expected) costs a second, never a hung request.
Awaitable<void> wait_for_more(cache::Flight& flight, std::size_t cursor, const CallContext& who) {
  auto executor = co_await boost::asio::this_coro::executor;
  auto timer = std::make_shared<boost::asio::steady_timer>(executor, std::chrono::seconds(1));
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
  Result<std::string> body = call.ingress().encode_response(*answer, clamped);
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
// flight ends.
class StreamFollower {
 public:
  StreamFollower(CallContext& call, cache::Flight& flight,
                 std::unique_ptr<protocol::StreamEncoder> encoder)
      : call_(call), ctx_(call.ctx()), flight_(flight), encoder_(std::move(encoder)) {}

  // follow_flight's answer.
  Awaitable<bool> run() {
    for (;;) {
      events_.clear();
      const cache::Flight::State state = flight_.read(cursor_, events_);
      if (state == cache::Flight::State::kFailed && !begun_) {
        co_return false;  // nothing written: this caller makes its own attempt
      }
      encode(state);
      if (!out_.empty()) {
        const bool written = co_await write();
        if (!written) {
          co_return true;  // the caller left, or a filter stopped the stream: answered
        }
      }
      if (state != cache::Flight::State::kLive || encoder_->finished()) {
        break;
      }
      if (call_.downstream().client_gone()) {
        call_.client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
        co_return true;
      }
      co_await wait_for_more(flight_, cursor_, call_);
    }
    if (ctx_.outcome != Outcome::kMidstreamError) {
      ctx_.outcome = Outcome::kCoalesced;
      name_origin(ctx_, flight_);
    }
    co_await call_.stream()->end();
    co_return true;
  }

 private:
  // The new events in the caller's protocol; after a failure, its terminal error event.
  void encode(cache::Flight::State state) {
    out_.clear();
    for (const ir::StreamEvent& e : events_) {
      encoder_->encode(e, out_);
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

  Awaitable<bool> write() {
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
    co_return co_await call_.write_own_stream(out_);
  }

  CallContext& call_;
  RequestContext& ctx_;
  cache::Flight& flight_;
  std::unique_ptr<protocol::StreamEncoder> encoder_;
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
  StreamFollower follower(call, flight, std::move(encoder));
  co_return co_await follower.run();
}

}  // namespace sluice::pipeline
