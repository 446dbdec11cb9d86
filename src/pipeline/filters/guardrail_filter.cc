#include "pipeline/filters/guardrail_filter.h"

#include <algorithm>
#include <optional>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "guardrails/body.h"
#include "guardrails/stream_guard.h"
#include "pipeline/call_context.h"
#include "pipeline/filters/pseudonym_filter.h"

namespace sluice::pipeline {

// A request's guardrail state: the header's value (what the input policies found), the output
// policies' stream guard.
struct GuardrailFilter::Call final : FilterState {
  std::string header;
  std::optional<guardrails::StreamGuard> stream;
  bool taken = false;  // check_stream_data took this write's events into the guard
  // The checkers asked beside the upstream call (mode: parallel): still asking, what they
  // refused, and what a release waiting for them waits on (cancelled when they are done).
  bool beside_pending = false;
  std::optional<Error> beside_refused;
  std::optional<boost::asio::steady_timer> beside_done;
};

namespace {

Error blocked(const guardrails::Verdict::Hit& block, std::string_view what) {
  const std::string found = block.detector == "uninspected"
                                ? "content it cannot inspect (an image, audio or a file)"
                                : "\"" + std::string(block.detector) + "\"";
  return Error(ErrorKind::kBadRequest, block.policy->block_status(),
               "The " + std::string(what) + " was blocked by guardrail policy \"" +
                   block.policy->name() + "\": it contains " + found + ".")
      .with_code("guardrail_blocked");
}

// What a verdict counted, into the request's record of finds (the access log, the metrics).
void note(RequestContext& ctx, const guardrails::Verdict& verdict, bool output) {
  for (const guardrails::Verdict::Hit& hit : verdict.hits) {
    ctx.guardrails.push_back(GuardrailFind{hit.policy->name(), hit.detector,
                                           guardrails::to_string(hit.action), output, hit.count});
  }
}

// Whether any request of the route may go through a policy of that side.
bool any_policy(const RouteRuntime& route, bool input) {
  for (const guardrails::Policies* set : route.guardrail_sets(input)) {
    if (!set->empty()) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<Filter> GuardrailFilter::make(const FilterSetup& setup) {
  if (!any_policy(setup.route, true) && !any_policy(setup.route, false)) {
    return nullptr;
  }
  return std::make_unique<GuardrailFilter>(setup.snapshot, setup.route);
}

GuardrailFilter::GuardrailFilter(const Snapshot& snapshot, const RouteRuntime& route)
    : route_(route), checks_(snapshot, route) {
  // The most cautious hold-back of the policies a stream may meet: the most characters, and a
  // time bound only when every policy sets one (the longest).
  bool every_policy_timed = true;
  for (const guardrails::Policies* set : route_.guardrail_sets(/*input=*/false)) {
    for (const auto& policy : *set) {
      hold_back_ = std::max(hold_back_, policy->hold_back_chars());
      hold_back_time_ = std::max(hold_back_time_, policy->hold_back_time());
      every_policy_timed = every_policy_timed && policy->hold_back_time().count() > 0;
    }
  }
  if (!every_policy_timed) {
    hold_back_time_ = std::chrono::milliseconds(0);
  }
}

const guardrails::Policies& GuardrailFilter::input(const CallContext& call) const {
  return route_.input_guardrails_for(call.key_group());
}

const guardrails::Policies& GuardrailFilter::output(const CallContext& call) const {
  return route_.output_guardrails_for(call.key_group());
}

FilterHooks GuardrailFilter::hooks() const {
  using Stage = GuardrailChecks::Stage;
  FilterHooks hooks;
  if (any_policy(route_, /*input=*/true)) {
    hooks.add(FilterHook::kAfterDecode).add(FilterHook::kResponseHead);
  }
  if (checks_.any(Stage::kBeforeSend)) {
    hooks.add(FilterHook::kBeforePlan);
  }
  if (checks_.any(Stage::kBesideUpstream)) {
    hooks.add(FilterHook::kAlongside).add(FilterHook::kBeforeRelease);
  }
  if (checks_.any(Stage::kAnswer)) {
    hooks.add(FilterHook::kBeforeRelease).add(FilterHook::kResponseHead);  // its finds: a header
    hooks.add(FilterHook::kStreamCheck);
  }
  if (any_policy(route_, /*input=*/false)) {
    hooks.add(FilterHook::kResponseBody).add(FilterHook::kStreamData).add(FilterHook::kEnd);
  }
  return hooks;
}

FilterStatus GuardrailFilter::after_decode(CallContext& call) {
  FilterStatus status = inspect_request(call);
  if (status.proceeds() && checks_.any(GuardrailChecks::Stage::kBesideUpstream)) {
    // Set before anything of the call can answer: a release waits for these checks.
    call.state<Call>(*this).beside_pending = true;
  }
  return status;
}

FilterStatus GuardrailFilter::inspect_request(CallContext& call) {
  const guardrails::Policies& policies = input(call);
  if (policies.empty()) {
    return FilterStatus::proceed();
  }
  guardrails::Inspector inspector(policies);
  std::optional<std::string> redacted = guardrails::inspect_body(call.request().body, inspector);
  const guardrails::Verdict& verdict = inspector.verdict();
  if (verdict.empty()) {
    return FilterStatus::proceed();
  }
  note(call.ctx(), verdict, /*output=*/false);
  call.state<Call>(*this).header = guardrails_summary(call.ctx().guardrails);
  if (const guardrails::Verdict::Hit* block = verdict.block()) {
    return FilterStatus::stop(blocked(*block, "request"));
  }
  if (redacted) {
    if (std::optional<Error> invalid = call.replace_body(std::move(*redacted))) {
      return FilterStatus::stop(std::move(*invalid));
    }
  }
  if (guardrails::Pseudonyms pseudonyms = inspector.take_pseudonyms(); !pseudonyms.empty()) {
    call.shared_state<PseudonymState>(&PseudonymState::kKey).table = std::move(pseudonyms);
  }
  return FilterStatus::proceed();
}

Awaitable<FilterStatus> GuardrailFilter::before_plan(CallContext& call) {
  const std::size_t before = call.ctx().guardrails.size();
  std::optional<Error> refused = co_await checks_.run(
      call, input(call), GuardrailChecks::Stage::kBeforeSend, call.request().body);
  if (call.ctx().guardrails.size() != before) {
    call.state<Call>(*this).header = guardrails_summary(call.ctx().guardrails);
  }
  if (refused) {
    co_return FilterStatus::stop(std::move(*refused));
  }
  co_return FilterStatus::proceed();
}

// Beside the call: the request's text as it goes upstream (redacted already; read before the
// first checker is asked, as a later filter may rewrite the body), asked of the parallel
// checkers while the upstream answers. A refusal cancels the upstream call at once; whatever it
// answered is not released.
Awaitable<void> GuardrailFilter::alongside(CallContext& call) {
  Call* state = call.find_state<Call>(*this);
  if (state == nullptr || !state->beside_pending) {
    co_return;
  }
  const std::size_t before = call.ctx().guardrails.size();
  std::optional<Error> refused = co_await checks_.run(
      call, input(call), GuardrailChecks::Stage::kBesideUpstream, call.request().body);
  if (call.ctx().guardrails.size() != before) {
    state->header = guardrails_summary(call.ctx().guardrails);
  }
  state->beside_refused = std::move(refused);
  state->beside_pending = false;
  if (state->beside_done) {
    state->beside_done->cancel();
  }
  if (state->beside_refused) {
    call.cancel().cancel();
  }
}

// Before the caller gets a byte: the parallel checkers' verdict (waited for), then a complete
// answer's text through the output policies' checkers.
Awaitable<FilterStatus> GuardrailFilter::before_release(CallContext& call,
                                                        const std::string* answer) {
  if (Call* state = call.find_state<Call>(*this)) {
    if (state->beside_pending && call.alongside_running()) {
      if (!state->beside_done) {
        state->beside_done.emplace(co_await boost::asio::this_coro::executor,
                                   boost::asio::steady_timer::time_point::max());
      }
      while (state->beside_pending) {
        boost::system::error_code ec;  // cancelled: the verdict is in
        co_await state->beside_done->async_wait(
            boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      }
    }
    if (state->beside_refused) {
      co_return FilterStatus::stop(*state->beside_refused);
    }
  }
  if (answer != nullptr && checks_.any(GuardrailChecks::Stage::kAnswer)) {
    const std::size_t before = call.ctx().guardrails.size();
    std::optional<Error> refused =
        co_await checks_.run(call, output(call), GuardrailChecks::Stage::kAnswer, *answer);
    if (call.ctx().guardrails.size() != before) {
      call.state<Call>(*this).header = guardrails_summary(call.ctx().guardrails);
    }
    if (refused) {
      co_return FilterStatus::stop(std::move(*refused));
    }
  }
  co_return FilterStatus::proceed();
}

FilterStatus GuardrailFilter::on_response_head(CallContext& call, ResponseHead& head) {
  if (const Call* state = call.find_state<Call>(*this); state && !state->header.empty()) {
    head.headers.add("x-sluice-guardrails", state->header);
  }
  return FilterStatus::proceed();
}

FilterStatus GuardrailFilter::on_response_body(CallContext& call, std::string& body) {
  const guardrails::Policies& policies = output(call);
  if (policies.empty()) {
    return FilterStatus::proceed();
  }
  guardrails::Inspector inspector(policies);
  std::optional<std::string> redacted =
      guardrails::inspect_body(body, inspector, guardrails::Side::kAnswer);
  const guardrails::Verdict& verdict = inspector.verdict();
  if (verdict.empty()) {
    return FilterStatus::proceed();
  }
  note(call.ctx(), verdict, /*output=*/true);
  if (const guardrails::Verdict::Hit* block = verdict.block()) {
    return FilterStatus::stop(blocked(*block, "answer"));
  }
  if (redacted) {
    body = std::move(*redacted);
  }
  return FilterStatus::proceed();
}

guardrails::StreamGuard& GuardrailFilter::stream_guard(CallContext& call, Call& state) const {
  if (!state.stream) {
    state.stream.emplace(output(call), hold_back_, hold_back_time_);
    if (checks_.any(GuardrailChecks::Stage::kAnswer)) {
      state.stream->gate();
    }
  }
  return *state.stream;
}

// The in-process detectors judge the events first (take), then, once a window of new text has
// come (or the stream ends), the checkers are asked about it with the hold-back's characters
// before it; on_stream_data releases what they cleared. A window is asked about once, so a
// checker sees each character about twice at most (as new text, then as context).
Awaitable<FilterStatus> GuardrailFilter::check_stream_data(CallContext& call, std::string& data,
                                                           bool ending) {
  const guardrails::Policies& policies = output(call);
  if (policies.empty()) {
    co_return FilterStatus::proceed();
  }
  Call& state = call.state<Call>(*this);
  guardrails::StreamGuard& guard = stream_guard(call, state);
  if (!guard.take(data, ending, call.clock().now())) {
    co_return FilterStatus::stop(blocked(*guard.verdict().block(), "answer"));
  }
  state.taken = true;
  const std::size_t unchecked = guard.unchecked_chars();
  if (unchecked == 0 || (!ending && unchecked < checks_.stream_window())) {
    co_return FilterStatus::proceed();
  }
  const std::string text(guard.unchecked_text(hold_back_));
  std::optional<Error> refused =
      co_await checks_.run_on_text(call, policies, GuardrailChecks::Stage::kAnswer, text);
  if (refused) {
    guard.drop();
    co_return FilterStatus::stop(std::move(*refused));
  }
  guard.cleared();
  co_return FilterStatus::proceed();
}

FilterStatus GuardrailFilter::on_stream_data(CallContext& call, std::string& data) {
  const guardrails::Policies& policies = output(call);
  if (policies.empty()) {
    return FilterStatus::proceed();
  }
  Call& state = call.state<Call>(*this);
  guardrails::StreamGuard& guard = stream_guard(call, state);
  const bool ending = call.stream_ending();
  if (state.taken) {  // judged already, the checkers asked: only what may go out now
    state.taken = false;
    guard.release(data, ending, call.clock().now());
  } else if (!guard.pass(data, ending, call.clock().now())) {
    return FilterStatus::stop(blocked(*guard.verdict().block(), "answer"));
  }
  if (std::optional<guardrails::StreamGuard::Time> due = guard.release_due()) {
    call.rerun_stream_filters_at(*due);  // released then, if no event comes first
  }
  return FilterStatus::proceed();
}

// A stream's finds are known once it is over (or stopped).
void GuardrailFilter::on_end(CallContext& call) {
  if (const Call* state = call.find_state<Call>(*this); state && state->stream) {
    note(call.ctx(), state->stream->verdict(), /*output=*/true);
  }
}

}  // namespace sluice::pipeline
