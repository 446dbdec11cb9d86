#pragma once

#include <memory>

#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

// Requests that ask about a prompt rather than for an answer (Anthropic count_tokens): an
// upstream of the caller's protocol answers in passthrough; for an attempt that would be
// translated there is no request to translate to, so the gateway answers itself
// (IngressCodec::local_answer: an estimate, marked by a response header) and no upstream is
// called. In the chain for caller protocols that have local answers.
class LocalAnswerFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);

  std::string_view name() const override { return "local_answer"; }
  FilterHooks hooks() const override { return {FilterHook::kBeforeAttempt}; }
  Awaitable<FilterStatus> before_attempt(CallContext& call, UpstreamRequest& attempt) override;
};

}  // namespace sluice::pipeline
