#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "admin/tenancy_answers.h"
#include "core/function_ref.h"
#include "core/result.h"
#include "store/store.h"
#include "tenancy/rules.h"

namespace sluice::admin {

// Who asks, for the audit log, and the Idempotency-Key of the request, if any.
struct TenancyCaller {
  std::string actor = "admin";
  std::string request_id;
  std::string idempotency_key;  // "" = none
  std::string request_sha256;   // of method, path and body; with idempotency_key
};

struct TenancyAnswer {
  int status = 200;
  boost::json::value body;
};

// The one place a tenancy change is read, checked and committed (docs/tenancy.md, "Allocations
// and their rules"): load the state, apply a rule (tenancy/rules.h), check its spend caps
// against the usage ledger, and commit its edits with one audit entry each (and the answer of
// an Idempotency-Key) in one transaction at the revision read. When someone else committed
// meanwhile the commit is refused and all of it runs again on the new state, up to
// kMaxAttempts times (then 503 busy). A repeated Idempotency-Key gets the stored answer without
// running the rule; the same key with another request is 422 idempotency_key_reused.
//
// Blocking (store calls); one thread at a time, like the Store it uses.
class TenancyChanges {
 public:
  static constexpr int kMaxAttempts = 5;

  struct Options {
    // Whether the config file has a key of this name (a store key may not take it).
    std::function<bool(std::string_view)> config_key_named;
    std::function<std::int64_t()> now_ms;  // wall clock, unix ms
  };

  using Rule = FunctionRef<tenancy::RuleResult<tenancy::Change>(store::TenancyState,
                                                                const tenancy::RuleContext&)>;
  // The answer to a change; called with Secrets::kWithheld for what an Idempotency-Key stores.
  using Render = FunctionRef<boost::json::value(const tenancy::Change&, Secrets)>;

  TenancyChanges(store::Store& store, Options options);

  // `status` is the answer's on success (200, or 201 for a creation). An error carries the
  // HTTP status and code to answer with (admin/tenancy_errors.h).
  Result<TenancyAnswer> apply(const TenancyCaller& caller, int status, Rule rule, Render render);

 private:
  Result<void> check_spend_caps(const tenancy::Change& change, std::int64_t now_ms);
  store::TenancyCommit commit_of(const tenancy::Change& change, const TenancyCaller& caller,
                                 std::int64_t now_ms) const;

  store::Store& store_;
  Options options_;
};

}  // namespace sluice::admin
