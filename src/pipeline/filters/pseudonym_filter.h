#pragma once

#include <memory>
#include <optional>

#include "guardrails/pseudonyms.h"
#include "guardrails/stream_restore.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

// What a request's input guardrails pseudonymised (GuardrailFilter writes it, the
// PseudonymFilter reads it back), under CallContext::shared_state(&PseudonymState::kKey).
struct PseudonymState final : FilterState {
  static const char kKey;
  guardrails::Pseudonyms table;
  std::optional<guardrails::StreamRestorer> stream;
};

// Puts a request's pseudonymised values back in the answer its caller receives
// (docs/guardrails.md#pseudonymise), last in the chain of routes whose input policies
// pseudonymise: the output guardrails, the idempotency record, the answer cache and the
// single-flight fan-out all see the placeholders the provider wrote, never the values. A cached
// or shared answer is then restored for each caller with that caller's own values, so no answer
// carries one caller's data to another.
class PseudonymFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);

  std::string_view name() const override { return "pseudonyms"; }
  FilterHooks hooks() const override {
    return {FilterHook::kResponseBody, FilterHook::kStreamData};
  }
  FilterStatus on_response_body(CallContext& call, std::string& body) override;
  FilterStatus on_stream_data(CallContext& call, std::string& data) override;
};

}  // namespace sluice::pipeline
