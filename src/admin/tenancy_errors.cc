#include "admin/tenancy_errors.h"

#include <fmt/format.h>

#include "store/usage_report.h"

namespace sluice::admin {

namespace {

using tenancy::RuleErrorKind;

Error answer(int status, std::string code, std::string message) {
  const ErrorKind kind = status == 404   ? ErrorKind::kNotFound
                         : status == 500 ? ErrorKind::kInternal
                                         : ErrorKind::kBadRequest;
  return Error(kind, status, std::move(message)).with_code(std::move(code));
}

std::string money(std::int64_t micros) { return store::format_micros(micros); }

std::string listed(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

Error rule_refusal(const tenancy::RuleError& e) {
  // A key created with its group is answered as the field it came in ("keys[1].name").
  const std::string where = e.item >= 0 ? fmt::format("keys[{}].", e.item) : std::string();
  switch (e.kind) {
    case RuleErrorKind::kInvalidName:
      return answer(400, "invalid_request",
                    fmt::format("{}name: {}1 to 64 of A-Z a-z 0-9 . _ -", where,
                                e.name.empty() ? "required, " : ""));
    case RuleErrorKind::kGroupNotFound:
      return answer(404, "not_found", fmt::format("no key group {}", e.group));
    case RuleErrorKind::kKeyNotFound:
      return answer(404, "not_found", fmt::format("no key {}", e.key));
    case RuleErrorKind::kUnknownGroup:
      return answer(422, "unknown_group", fmt::format("no key group {}", e.group));
    case RuleErrorKind::kGroupExists:
      return answer(409, "group_exists", fmt::format("key group {} exists already", e.group));
    case RuleErrorKind::kGroupHasKeys:
      return answer(
          409, "group_has_keys",
          fmt::format("key group {} still has keys that are not revoked ({})", e.group, e.key));
    case RuleErrorKind::kNameTaken:
      return e.holder.empty()
                 ? answer(409, "name_taken",
                          fmt::format("{}name: {} is the name of a key in the config file", where,
                                      e.name))
                 : answer(409, "name_taken",
                          fmt::format("{}name: a key named {} exists already ({}, key group {})",
                                      where, e.name, e.holder, e.group));
    case RuleErrorKind::kKeyRevoked:
      return answer(409, "key_revoked", fmt::format("key {} is revoked; that is final", e.key));
    case RuleErrorKind::kKeyWithoutGroup:
      return answer(500, "store_error",
                    fmt::format("key {} names key group {}, which is not stored", e.key, e.group));
    case RuleErrorKind::kExpiryInPast:
      return answer(400, "invalid_request", fmt::format("{}expires_at: in the past", where));
    case RuleErrorKind::kBudgetAmountRequired:
      return answer(400, "invalid_request",
                    "budget.amount_micros: required (integer micro-units, > 0)");
    case RuleErrorKind::kAliasOutOfScope:
      return answer(422, "alias_out_of_scope",
                    fmt::format("{}allowed_aliases: {} not allowed to key group {}", where,
                                listed(e.aliases), e.group));
    case RuleErrorKind::kScopeLeavesOutKey:
      return answer(422, "alias_out_of_scope",
                    fmt::format("key {} allows {}, which the new allowed_aliases of key group {} "
                                "leave out",
                                e.key, listed(e.aliases), e.group));
    case RuleErrorKind::kAllocationWithoutBudget:
      return answer(422, "allocation_without_budget",
                    fmt::format("key group {} has no budget: its keys cannot hold allocations "
                                "(they hold {})",
                                e.group, money(e.amount_micros)));
    case RuleErrorKind::kAllocationExceedsBudget:
      return answer(409, "allocation_exceeds_budget",
                    fmt::format("the allocations of key group {} would sum to {}, above its "
                                "budget of {}",
                                e.group, money(e.amount_micros), money(e.cap_micros)));
    case RuleErrorKind::kAllocationOverflow:
      return answer(422, "amount_out_of_range",
                    fmt::format("the allocations of key group {} would sum to more than {}, the "
                                "largest amount",
                                e.group, money(std::numeric_limits<std::int64_t>::max())));
    case RuleErrorKind::kBelowSpent:
      return e.key.empty()
                 ? answer(409, "below_consumed",
                          fmt::format("key group {} has spent {} in this period: its budget "
                                      "cannot be set to {}",
                                      e.group, money(e.amount_micros), money(e.cap_micros)))
                 : answer(409, "below_consumed",
                          fmt::format("key {} has spent {} in this period: its allocation cannot "
                                      "be set to {}",
                                      e.key, money(e.amount_micros), money(e.cap_micros)));
  }
  return answer(500, "error", "unknown tenancy rule error");
}

Error store_failure(const Error& e) {
  return e.kind() == ErrorKind::kUnavailable
             ? Error(ErrorKind::kUnavailable, 503, e.message()).with_code("store_unavailable")
             : Error(ErrorKind::kInternal, 500, e.message()).with_code("store_error");
}

}  // namespace sluice::admin
