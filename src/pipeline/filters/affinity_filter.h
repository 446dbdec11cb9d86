#pragma once

#include <memory>

#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

class ResponseAffinity;

// Responses affinity: an answer an upstream stored (OpenAI Responses, `store`) lives only at
// that provider, so
//   after decode     a continuation (previous_response_id) is pinned to the target of the
//                    provider that stored what it continues, for the same gateway key; when the
//                    route has no target there but has targets of the caller's protocol, it is
//                    refused (400 previous_response_not_found) rather than sent where the state
//                    is not; unknown ids go to the plan (the upstream answers for itself)
//   at the end       an answer relayed verbatim that the upstream stored is remembered with
//                    its provider and owner (pipeline/affinity.h), for GETs and continuations
// In the chain when the process keeps an affinity store.
class AffinityFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  explicit AffinityFilter(ResponseAffinity& store) : store_(store) {}

  std::string_view name() const override { return "responses_affinity"; }
  // After decode, not before the plan: no I/O, and a continuation the route cannot serve is
  // refused before admission charges it.
  FilterHooks hooks() const override { return {FilterHook::kAfterDecode, FilterHook::kEnd}; }
  FilterStatus after_decode(CallContext& call) override;
  void on_end(CallContext& call) override;

 private:
  ResponseAffinity& store_;
};

}  // namespace sluice::pipeline
