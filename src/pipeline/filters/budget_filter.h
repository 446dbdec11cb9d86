#pragma once

#include <memory>

#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

// Hard budgets of keys from the store (tenancy/budget.h): a request whose key's account is
// spent is refused (429 insufficient_quota, in the caller's protocol) before anything is
// charged or planned; a finished call adds its cost to every account of its key at once (an
// atomic add each; the ledger confirms it later). In the chain when store keys are served.
class BudgetFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);

  std::string_view name() const override { return "budget"; }
  FilterHooks hooks() const override { return {FilterHook::kAfterDecode, FilterHook::kEnd}; }
  FilterStatus after_decode(CallContext& call) override;
  void on_end(CallContext& call) override;
};

}  // namespace sluice::pipeline
