#include "store/tenancy.h"

#include <array>
#include <utility>

namespace sluice::store {
namespace {

template <class Enum, std::size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum e) {
  for (const auto& [value, name] : names) {
    if (value == e) {
      return name;
    }
  }
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::pair<Enum, std::string_view>, N>& names,
                               std::string_view text) {
  for (const auto& [value, name] : names) {
    if (name == text) {
      return value;
    }
  }
  return std::nullopt;
}

constexpr std::array<std::pair<BudgetPeriod, std::string_view>, 2> kPeriods = {{
    {BudgetPeriod::kMonthly, "monthly"},
    {BudgetPeriod::kCumulative, "cumulative"},
}};
constexpr std::array<std::pair<BudgetMode, std::string_view>, 2> kModes = {{
    {BudgetMode::kHard, "hard"},
    {BudgetMode::kAdvisory, "advisory"},
}};
constexpr std::array<std::pair<KeyStatus, std::string_view>, 3> kStatuses = {{
    {KeyStatus::kActive, "active"},
    {KeyStatus::kDisabled, "disabled"},
    {KeyStatus::kRevoked, "revoked"},
}};

}  // namespace

std::string_view to_string(BudgetPeriod p) { return name_of(kPeriods, p); }
std::string_view to_string(BudgetMode m) { return name_of(kModes, m); }
std::string_view to_string(KeyStatus s) { return name_of(kStatuses, s); }

std::optional<BudgetPeriod> parse_budget_period(std::string_view text) {
  return parse_name(kPeriods, text);
}
std::optional<BudgetMode> parse_budget_mode(std::string_view text) {
  return parse_name(kModes, text);
}
std::optional<KeyStatus> parse_key_status(std::string_view text) {
  return parse_name(kStatuses, text);
}

}  // namespace sluice::store
