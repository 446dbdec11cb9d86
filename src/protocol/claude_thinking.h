#pragma once

#include <cstdint>
#include <string_view>

#include "codec/json_writer.h"
#include "core/result.h"
#include "ir/request.h"

namespace sluice::protocol {

// Claude's extended thinking as both Anthropic's Messages API and Claude models on Bedrock
// (Converse's additionalModelRequestFields) take it: {"type":"enabled","budget_tokens":N} or
// {"type":"adaptive"}, with budget_tokens >= 1024 and below max_tokens (which counts the
// thinking). Shared by the request encoders of anthropic/ and bedrock_converse/. Pure
// functions.

// Anthropic's minimum budget: "Must be >= 1024 and less than max_tokens".
inline constexpr std::uint32_t kMinThinkingBudget = 1024;

// Thinking budgets for an OpenAI-style reasoning effort without an explicit budget. The floor
// is Anthropic's minimum budget (1024); the steps double or so per level, and xhigh stays at
// the 32k above which Anthropic recommends batch processing.
struct EffortBudgets {
  std::uint32_t minimal = 1024;
  std::uint32_t low = 2048;
  std::uint32_t medium = 8192;
  std::uint32_t high = 16384;
  std::uint32_t xhigh = 32768;
};

// Whether `r` asks for reasoning: enabled, and effort not "none".
bool thinking_requested(const ir::Reasoning& r);

// The budget of an effort (minimal, low, medium, high, xhigh), or null for another effort.
const std::uint32_t* effort_budget(const EffortBudgets& budgets, std::string_view effort);

// The error (param "reasoning_effort") for an effort that is none of those.
Error unknown_effort(std::string_view effort);

// A budget for requested reasoning (thinking_requested): `budget` 0 means adaptive.
struct ThinkingBudget {
  std::uint32_t budget = 0;
  bool from_effort = false;  // derived from an effort, not given explicitly
};

// The budget for `r` (thinking_requested): an explicit budget raised to kMinThinkingBudget;
// else an effort's from `budgets` (raised likewise; unknown_effort for any other effort); else
// 0 (adaptive).
Result<ThinkingBudget> thinking_budget(const ir::Reasoning& r, const EffortBudgets& budgets);

// Fits `t` under `max_tokens`, the caller's max_tokens when `caller_max_tokens`: a budget from
// an effort is first lowered to max_tokens - 1 when the caller gave max_tokens (their output
// bound holds), never below kMinThinkingBudget; a budget that still does not fit raises
// max_tokens to budget + max_tokens, so the answer keeps the room that was asked for. Then
// check_max_tokens.
Result<void> fit_thinking_budget(ThinkingBudget& t, bool caller_max_tokens,
                                 std::uint64_t& max_tokens);

// The error (param "max_tokens") when `max_tokens` exceeds 2^32 - 1 (budget: for the message).
Result<void> check_max_tokens(std::uint32_t budget, std::uint64_t max_tokens);

// Writes the thinking object: {"type":"enabled","budget_tokens":budget}, or {"type":"adaptive"}
// for budget 0.
void write_thinking(codec::JsonWriter& w, std::uint32_t budget);

}  // namespace sluice::protocol
