#include "ir/request.h"

namespace sluice::ir {

std::string_view effort_for_budget(std::uint32_t budget) {
  // Only the three values every OpenAI reasoning model accepts: "minimal" and "xhigh" exist
  // for some models and are rejected by others, and a budget is a request for thought, so
  // the smallest budget Anthropic allows (1024) still buys "low".
  if (budget <= 2048) {
    return "low";
  }
  return budget <= 8192 ? "medium" : "high";
}

}  // namespace sluice::ir
