#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "cache/capture.h"
#include "cache/flight.h"
#include "cache/key.h"
#include "ir/response.h"
#include "pipeline/filters/live_mirror.h"
#include "protocol/upstream.h"

namespace sluice::pipeline {

class CallContext;

// The side of a call whose answer is kept (a cache miss, the first call under an
// Idempotency-Key): what its caller is sent, read back into IR (cache/capture.h) and, when it
// leads a shared call, fed live to the followers (cache/flight.h). Lives in a filter's
// per-request state; the filter forwards its response hooks here. One worker.
class AnswerKeeper {
 public:
  AnswerKeeper() = default;
  AnswerKeeper(const AnswerKeeper&) = delete;
  AnswerKeeper& operator=(const AnswerKeeper&) = delete;
  // A flight still led when the call is torn down without its end is finished as failed, so
  // no follower waits for it.
  ~AnswerKeeper();

  // Reads the answer back, with no one following.
  void keep(const protocol::UpstreamCodec& codec, std::size_t max_bytes);
  // Leads `flight` (the one under `key` in `flights`): the caller is held while followers wait
  // (CallContext::hold_caller), and what it is sent is published to them; with `mirror` (the
  // call holds the instances' claim on its key), to waiters on other instances too.
  void lead(CallContext& call, cache::Flights& flights, const cache::Key& key,
            std::shared_ptr<cache::Flight> flight, const protocol::UpstreamCodec& codec,
            std::size_t max_bytes, std::unique_ptr<LiveMirror> mirror = nullptr);
  bool keeping() const { return capture_.has_value(); }
  // The kept stream has reached its terminator (cache/capture.h AnswerCapture::complete).
  bool complete() const { return capture_ && capture_->complete(); }

  // The response hooks.
  void on_head(int status);
  void on_body(std::string_view body);
  void on_stream(std::string_view data);

  // The call is over: its whole answer (an attempt answered 200 and the caller, or for a
  // leader whose caller left its followers, got all of it within the size bound), or nullopt.
  std::optional<ir::Response> answer(const CallContext& call);
  // Then, once the answer is stored: the flight ends (done when `whole`, failed otherwise) and
  // leaves the air; a leader whose own caller left is recorded as gone. Storing first means a
  // request arriving in between finds the answer or the call, never neither.
  void land(CallContext& call, bool whole);

 private:
  std::optional<cache::AnswerCapture> capture_;
  std::shared_ptr<cache::Flight> flight_;
  std::unique_ptr<LiveMirror> mirror_;
  cache::Flights* flights_ = nullptr;
  cache::Key key_{};
};

}  // namespace sluice::pipeline
