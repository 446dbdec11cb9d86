#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/assert/source_location.hpp>
#include <boost/system/result.hpp>

namespace sluice::tenancy {

// Why a tenancy rule refused a change (tenancy/rules.h). admin/ turns each kind into an HTTP
// status, a code and a message; the fields below are the facts that message needs (those a kind
// does not use stay empty).
enum class RuleErrorKind : std::uint8_t {
  kInvalidName,              // `name` is not 1 to 64 of [A-Za-z0-9._-]
  kGroupNotFound,            // `group` names no key group
  kKeyNotFound,              // `key` is an id no key has
  kUnknownGroup,             // a new key names `group`, which does not exist
  kGroupExists,              // `group`
  kGroupHasKeys,             // `group` still has `key` (a name), not revoked
  kNameTaken,                // `name` is a config key's (`holder` "") or the store key `holder`'s
  kKeyRevoked,               // `key` (a name) is revoked: final
  kKeyWithoutGroup,          // the stored key `key` names `group`, which is not stored
  kExpiryInPast,             // a new key's expires_at is not after now
  kBudgetAmountRequired,     // a new budget without amount_micros
  kAliasOutOfScope,          // `key`'s `aliases` are not all in `group`'s allowed_aliases
  kScopeLeavesOutKey,        // `group`'s new allowed_aliases leave out `aliases` that `key` has
  kAllocationWithoutBudget,  // `group` has no budget but its keys hold `amount_micros`
  kAllocationExceedsBudget,  // `group`'s allocations would sum to `amount_micros` > `cap_micros`
  kAllocationOverflow,       // `group`'s allocations would sum beyond what an amount can hold
  kBelowSpent,  // `group` (or its key `key`) spent `amount_micros`, above the new `cap_micros`
};

struct RuleError {
  RuleErrorKind kind = RuleErrorKind::kInvalidName;
  // Which key of a group created with its keys the error is about; -1: not such a key.
  int item = -1;
  std::string group = {};
  std::string key = {};
  std::string name = {};
  std::string holder = {};
  std::vector<std::string> aliases = {};
  std::int64_t amount_micros = 0;
  std::int64_t cap_micros = 0;
};

template <class T>
using RuleResult = boost::system::result<T, RuleError>;

// Called by RuleResult<T>::value() on an error: a bug (callers check first).
[[noreturn]] void throw_exception_from_error(const RuleError& e, const boost::source_location& loc);

}  // namespace sluice::tenancy
