#pragma once

#include "core/error.h"
#include "tenancy/rule_error.h"

namespace sluice::admin {

// How the tenancy routes answer a refusal: an Error with the HTTP status, the code of
// docs/tenancy.md and a message from the error's facts. 400 a malformed value, 404 an unknown
// object, 409 a change that conflicts with what is stored, 422 a reference or scope that is not
// allowed, 500 a store that breaks the rules (edited by hand).
Error rule_refusal(const tenancy::RuleError& error);

// A store call that failed: 503 store_unavailable when the store is unreachable or busy, else
// 500 store_error.
Error store_failure(const Error& error);

}  // namespace sluice::admin
