#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "store/tenancy.h"

namespace sluice::admin {

// The JSON the tenancy routes answer with (docs/tenancy.md, "Admin API"); the audit log stores
// the same objects as `before` / `after`. No rendering shows a key's hash; only
// key_with_secret shows a secret.

// Whether an answer shows the new secrets it was made with (the caller's answer) or withholds
// them: null, with a note. What an Idempotency-Key stores and replays is always withheld.
enum class Secrets : std::uint8_t { kShown, kWithheld };

// With allocated_micros, the sum of the allocations of its keys in `state`.
boost::json::object group_json(const store::KeyGroup& group, const store::TenancyState& state);
boost::json::object key_json(const store::ApiKey& key);
// key_json and "secret": the new secret of a key just created or rotated, or null with
// "secret_note" when withheld.
boost::json::object key_with_secret(const store::ApiKey& key, std::string_view secret,
                                    Secrets secrets);
// {"entries":[{"id","at","actor","action","object_type","object_id","before","after",
// "request_id"}, ...]}
boost::json::object audit_json(const std::vector<store::AuditEntry>& entries);

}  // namespace sluice::admin
