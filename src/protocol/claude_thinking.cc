#include "protocol/claude_thinking.h"

#include <algorithm>
#include <limits>
#include <string>

namespace sluice::protocol {

bool thinking_requested(const ir::Reasoning& r) { return r.enabled && r.effort != "none"; }

const std::uint32_t* effort_budget(const EffortBudgets& budgets, std::string_view effort) {
  if (effort == "minimal") {
    return &budgets.minimal;
  }
  if (effort == "low") {
    return &budgets.low;
  }
  if (effort == "medium") {
    return &budgets.medium;
  }
  if (effort == "high") {
    return &budgets.high;
  }
  if (effort == "xhigh") {
    return &budgets.xhigh;
  }
  return nullptr;
}

Error unknown_effort(std::string_view effort) {
  return Error(ErrorKind::kBadRequest,
               "reasoning_effort '" + std::string(effort) +
                   "' is not supported for this model's provider; use none, minimal, low, "
                   "medium, high or xhigh")
      .with_param("reasoning_effort");
}

Result<ThinkingBudget> thinking_budget(const ir::Reasoning& r, const EffortBudgets& budgets) {
  ThinkingBudget t;
  if (r.budget_tokens) {
    t.budget = std::max(*r.budget_tokens, kMinThinkingBudget);
  } else if (!r.effort.empty()) {
    const std::uint32_t* b = effort_budget(budgets, r.effort);
    if (b == nullptr) {
      return unknown_effort(r.effort);
    }
    t.budget = std::max(*b, kMinThinkingBudget);
    t.from_effort = true;
  }
  return t;
}

Result<void> fit_thinking_budget(ThinkingBudget& t, bool caller_max_tokens,
                                 std::uint64_t& max_tokens) {
  if (t.from_effort && caller_max_tokens && t.budget >= max_tokens) {
    t.budget =
        static_cast<std::uint32_t>(std::max<std::uint64_t>(max_tokens - 1, kMinThinkingBudget));
  }
  if (t.budget >= max_tokens) {
    max_tokens += t.budget;
  }
  return check_max_tokens(t.budget, max_tokens);
}

Result<void> check_max_tokens(std::uint32_t budget, std::uint64_t max_tokens) {
  if (max_tokens > std::numeric_limits<std::uint32_t>::max()) {
    return Error(ErrorKind::kBadRequest,
                 "the reasoning budget (" + std::to_string(budget) +
                     ") and max_tokens together exceed what this model's provider accepts")
        .with_param("max_tokens");
  }
  return {};
}

void write_thinking(codec::JsonWriter& w, std::uint32_t budget) {
  if (budget > 0) {
    w.raw(R"({"type":"enabled","budget_tokens":)")
        .number(static_cast<std::uint64_t>(budget))
        .ch('}');
    return;
  }
  w.raw(R"({"type":"adaptive"})");
}

}  // namespace sluice::protocol
