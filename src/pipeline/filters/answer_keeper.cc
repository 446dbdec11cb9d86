#include "pipeline/filters/answer_keeper.h"

#include <chrono>

#include "pipeline/call_context.h"

namespace sluice::pipeline {

AnswerKeeper::~AnswerKeeper() {
  if (mirror_) {
    mirror_->end(false, {}, {}, std::nullopt);
  }
  if (flight_) {
    flight_->finish(false, {}, {});
    flights_->land(key_, *flight_);
  }
}

void AnswerKeeper::keep(const protocol::UpstreamCodec& codec, std::size_t max_bytes) {
  capture_.emplace(codec, max_bytes);
}

void AnswerKeeper::lead(CallContext& call, cache::Flights& flights, const cache::Key& key,
                        std::shared_ptr<cache::Flight> flight, const protocol::UpstreamCodec& codec,
                        std::size_t max_bytes, std::unique_ptr<LiveMirror> mirror) {
  flight_ = std::move(flight);
  mirror_ = std::move(mirror);
  flights_ = &flights;
  key_ = key;
  cache::Flight* shared = flight_.get();
  // A weak reference: the flight may land (and be freed) while the call goes on, a stream
  // whose answer was whole and stored before the upstream's body ended.
  // Followed here, or (the store says) by a waiter on another instance.
  std::shared_ptr<const LiveMirror::Watch> watch = mirror_ ? mirror_->watch() : nullptr;
  call.hold_caller([weak = std::weak_ptr<cache::Flight>(flight_), watch = std::move(watch)] {
    const std::shared_ptr<cache::Flight> flight = weak.lock();
    return flight != nullptr &&
           (flight->followed() ||
            (watch != nullptr && std::chrono::steady_clock::now() < watch->until));
  });
  const RequestContext* ctx = &call.ctx();  // the keeper lives in the call's state
  LiveMirror* live = mirror_.get();
  capture_.emplace(codec, max_bytes, [shared, live, ctx](std::span<const ir::StreamEvent> events) {
    const Attempt* answering = ctx->last_attempt();
    if (answering != nullptr) {
      shared->set_origin(answering->provider, answering->model, ctx->usage);
    }
    shared->publish(events);
    if (live != nullptr) {
      live->events(events, answering != nullptr ? answering->provider : std::string_view(),
                   answering != nullptr ? answering->model : std::string_view(), ctx->usage);
    }
  });
}

void AnswerKeeper::on_head(int status) {
  if (capture_ && status != 200) {
    capture_->abandon();
  }
}

void AnswerKeeper::on_body(std::string_view body) {
  if (capture_) {
    capture_->body(body);
  }
}

void AnswerKeeper::on_stream(std::string_view data) {
  if (capture_) {
    capture_->stream(data);
  }
}

std::optional<ir::Response> AnswerKeeper::answer(const CallContext& call) {
  const Attempt* answered = call.ctx().last_attempt();
  if (!capture_ || answered == nullptr || answered->status != 200 || answered->error ||
      capture_->abandoned()) {
    return std::nullopt;
  }
  std::optional<ir::Response> answer = capture_->finish();
  if (answer && call.ctx().usage) {
    answer->usage = call.ctx().usage;  // the upstream's own figures, whatever the caller saw
  }
  return answer;
}

void AnswerKeeper::land(CallContext& call, bool whole) {
  if (!flight_) {
    return;
  }
  const RequestContext& ctx = call.ctx();
  const Attempt* answered = ctx.last_attempt();
  const bool named = whole && answered != nullptr;
  if (mirror_) {
    mirror_->end(whole, named ? answered->provider : std::string_view(),
                 named ? answered->model : std::string_view(), ctx.usage);
    mirror_.reset();
  }
  flight_->finish(whole, named ? std::string(answered->provider) : "",
                  named ? std::string(answered->model) : "", ctx.usage);
  flights_->land(key_, *flight_);
  flight_.reset();
  if (call.caller_left()) {
    call.client_gone(Error(ErrorKind::kClientGone,
                           "client disconnected; the call went on for the requests sharing it"));
  }
}

}  // namespace sluice::pipeline
