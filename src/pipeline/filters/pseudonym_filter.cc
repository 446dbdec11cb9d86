#include "pipeline/filters/pseudonym_filter.h"

#include "guardrails/body.h"
#include "pipeline/call_context.h"

namespace sluice::pipeline {

const char PseudonymState::kKey = 0;

namespace {

bool pseudonymises(const guardrails::Policies& policies) {
  for (const auto& policy : policies) {
    for (const guardrails::Policy::Rule& rule : policy->rules()) {
      if (rule.action == guardrails::Action::kPseudonymise) return true;
    }
  }
  return false;
}

}  // namespace

std::unique_ptr<Filter> PseudonymFilter::make(const FilterSetup& setup) {
  for (const guardrails::Policies* set : setup.route.guardrail_sets(/*input=*/true)) {
    if (pseudonymises(*set)) return std::make_unique<PseudonymFilter>();
  }
  return nullptr;
}

FilterStatus PseudonymFilter::on_response_body(CallContext& call, std::string& body) {
  const auto* state = call.find_shared_state<PseudonymState>(&PseudonymState::kKey);
  if (state == nullptr) {
    return FilterStatus::proceed();
  }
  if (std::optional<std::string> restored = guardrails::restore_body(body, state->table)) {
    body = std::move(*restored);
  }
  return FilterStatus::proceed();
}

FilterStatus PseudonymFilter::on_stream_data(CallContext& call, std::string& data) {
  auto* state = call.find_shared_state<PseudonymState>(&PseudonymState::kKey);
  if (state == nullptr) {
    return FilterStatus::proceed();
  }
  if (!state->stream) {
    state->stream.emplace(state->table);
  }
  state->stream->pass(data, call.stream_ending());
  return FilterStatus::proceed();
}

}  // namespace sluice::pipeline
