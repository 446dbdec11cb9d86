#pragma once

#include <memory>

#include "config/config.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

// A route's ceiling on the output a request may ask for (`max_output_tokens`), in whatever
// field the caller's protocol uses (IngressCodec::output_limit_fields: max_tokens,
// max_completion_tokens, max_output_tokens, generationConfig.maxOutputTokens):
//   cap     a request asking for more, or for no limit, is sent with the limit: the caller's
//           body is rewritten in place (every other byte as it was), so a passthrough upstream
//           and a translation (through the IR) both see it; a limit added where the request had
//           none takes the name the attempt's upstream reads (ProviderAdapter::
//           output_limit_field: OpenAI's max_completion_tokens, a compatible server's
//           max_tokens)
//   refuse  such a request gets a 400 in the caller's protocol naming the field and the limit
// Either way the request's output limit (CallContext::output_limit) is what admission reserves
// tokens for. In the chain of routes with a cap, for protocols whose requests produce output.
class OutputCapFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  explicit OutputCapFilter(config::OutputCap cap) : cap_(cap) {}

  std::string_view name() const override { return "max_output_tokens"; }
  FilterHooks hooks() const override {
    return {FilterHook::kAfterDecode, FilterHook::kBeforeAttempt};
  }
  FilterStatus after_decode(CallContext& call) override;
  Awaitable<FilterStatus> before_attempt(CallContext& call, UpstreamRequest& attempt) override;

 private:
  const config::OutputCap cap_;
};

}  // namespace sluice::pipeline
