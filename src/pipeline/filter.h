#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "pipeline/downstream.h"

namespace sluice::pipeline {

class CallContext;
class UpstreamRequest;

// What a filter hook decides, as Envoy's filter statuses do: the chain goes on, or the call
// ends here.
class FilterStatus {
 public:
  enum class Action : std::uint8_t {
    kContinue,  // the next filter runs, then the call goes on
    kStop,      // the call ends with error(), answered in the caller's protocol
    kAnswered,  // the filter wrote the caller's answer itself (a local answer, a cache hit)
  };

  static FilterStatus proceed() { return FilterStatus(Action::kContinue, std::nullopt); }
  static FilterStatus stop(Error error) { return FilterStatus(Action::kStop, std::move(error)); }
  static FilterStatus answered() { return FilterStatus(Action::kAnswered, std::nullopt); }

  Action action() const { return action_; }
  bool proceeds() const { return action_ == Action::kContinue; }
  // kStop only.
  const Error& error() const { return *error_; }

 private:
  FilterStatus(Action action, std::optional<Error> error)
      : action_(action), error_(std::move(error)) {}

  Action action_;
  std::optional<Error> error_;
};

// The hooks of a model call, in the order they run. A filter names the ones it takes part in
// (Filter::hooks); the chain calls it for those only.
enum class FilterHook : std::uint8_t {
  kAfterDecode,    // request decoded and routed, nothing charged or planned yet
  kBeforePlan,     // before the route's policy tree is ordered into attempts
  kBeforeAttempt,  // each attempt: its target and mode known, nothing framed yet
  kResponseHead,   // the head of the answer about to be written
  kResponseBody,   // a complete (non-stream) answer about to be written
  kStreamData,     // stream bytes about to be written
  kEnd,            // the call is over, whatever its outcome
  // Out of line with the rest:
  kAlongside,      // runs beside the call, from after decode until the call is over
  kBeforeRelease,  // once, before the first byte of an answer or error goes to the caller
  kStreamCheck,    // stream bytes about to go through kStreamData, awaited (an outside judge)
};
inline constexpr std::size_t kFilterHookCount = 10;

// A set of FilterHook values.
class FilterHooks {
 public:
  constexpr FilterHooks() = default;
  constexpr FilterHooks(std::initializer_list<FilterHook> hooks) {
    for (FilterHook h : hooks) {
      bits_ |= bit(h);
    }
  }
  constexpr bool has(FilterHook hook) const { return (bits_ & bit(hook)) != 0; }
  constexpr FilterHooks& add(FilterHook hook) {
    bits_ |= bit(hook);
    return *this;
  }

 private:
  static constexpr std::uint16_t bit(FilterHook h) {
    return static_cast<std::uint16_t>(1u << static_cast<unsigned>(h));
  }
  std::uint16_t bits_ = 0;
};

// One concern of the model call (a budget check, the output cap, Responses affinity, ...) as a
// set of hooks over the call (Envoy's HTTP filters, Pingora's phases). Filters are built per
// (worker, config version, route) by the chain (filter_chain.h) and only when their config asks
// for them, so a feature that is not configured costs nothing. A filter object serves every
// request of its route on its worker, one after another or interleaved at co_await points:
// per-request state lives in the call (CallContext::state), never in members.
//
// Request-side hooks may refuse the call (kStop: the error is answered in the caller's protocol,
// or ends the stream with the protocol's error event once a stream has begun) or answer it
// themselves (kAnswered: the filter wrote the response through CallContext::downstream()).
// Response-side hooks see what the caller is about to get, in the caller's protocol, and may
// change it or stop it; on_end cannot. All hooks run on the request's worker.
class Filter {
 public:
  virtual ~Filter() = default;

  // For logs and the chain's description ("budget", "max_output_tokens").
  virtual std::string_view name() const = 0;
  virtual FilterHooks hooks() const = 0;

  // The request is decoded and its route known (CallContext::route). A filter may rewrite the
  // caller's body here (CallContext::replace_body): what follows, the plan included, sees the
  // rewritten request.
  virtual FilterStatus after_decode(CallContext& call);
  // Before the plan: admission (rate limits, budgets), pinning the target
  // (CallContext::pin_target), a cached answer.
  virtual Awaitable<FilterStatus> before_plan(CallContext& call);
  // Before each attempt, its target and mode known (UpstreamRequest), nothing framed yet: a
  // filter may still change the request for it (CallContext::replace_body). kStop fails this
  // attempt without sending it: the plan moves on when the error is retryable (a provider's
  // capacity), the call ends with it otherwise. kAnswered ends the call (the gateway answers
  // instead of this upstream: count_tokens towards a provider that does not count).
  virtual Awaitable<FilterStatus> before_attempt(CallContext& call, UpstreamRequest& attempt);

  // The head of the answer about to be written: a success, or an upstream error relayed as the
  // provider sent it. kStop answers the error instead (before any byte reached the caller).
  virtual FilterStatus on_response_head(CallContext& call, ResponseHead& head);
  // A complete answer's body in the caller's protocol, about to be written. kStop answers the
  // error instead.
  virtual FilterStatus on_response_body(CallContext& call, std::string& body);
  // Stream bytes about to be written to the caller (whole events, in the caller's protocol). A
  // filter may change them or hold some back (keeping them in its state and adding them to a
  // later call's `data`); kStop ends the stream with the protocol's error event.
  virtual FilterStatus on_stream_data(CallContext& call, std::string& data);
  // The call is over: answered, refused, failed or abandoned by the caller; the context holds
  // the outcome, usage and charge. The end-of-request observers run after it.
  virtual void on_end(CallContext& call);

  // Beside the call: started after the after_decode hooks let it through, run concurrently
  // with everything after (before_plan, the attempts, the answer), and awaited before the call
  // ends. Work whose result the call needs only before it answers (a guardrail check made
  // while the upstream generates): it may end the upstream call (CallContext::cancel) and
  // leaves its verdict for before_release.
  virtual Awaitable<void> alongside(CallContext& call);
  // Once per call, before the first byte of whatever the caller is sent: an answer (`answer`:
  // a complete one's body in the caller's protocol, before the response hooks see it; null for
  // a stream's head), a relayed upstream error or the gateway's own error (`answer` null).
  // kStop answers that error instead (its head not yet sent). The caller waits meanwhile.
  virtual Awaitable<FilterStatus> before_release(CallContext& call, const std::string* answer);
  // Stream bytes on their way to the stream-data hooks (whole events, in the caller's
  // protocol), for work that must be awaited before they may go out: an external checker asked
  // about the streamed text. The stream waits meanwhile (the upstream is not read). A filter
  // may keep the bytes (its own on_stream_data releases them later); kStop ends the stream with
  // the protocol's error event. `ending`: the stream's last write. Only chains with such a
  // filter pay for the coroutine.
  virtual Awaitable<FilterStatus> check_stream_data(CallContext& call, std::string& data,
                                                    bool ending);
};

// What a filter keeps for one request (CallContext::state creates it on first use).
class FilterState {
 public:
  virtual ~FilterState() = default;
};

}  // namespace sluice::pipeline
