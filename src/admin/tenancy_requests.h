#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "tenancy/rules.h"

namespace sluice::admin {

// The bodies of the tenancy routes (docs/tenancy.md, "Admin API") read into the fields the
// rules take (tenancy/rules.h): JSON (400 invalid_json), types, ranges, time zones and unknown
// fields are checked here (400 invalid_request naming the field); everything that depends on
// the stored state is the rules'.

// POST /admin/v1/groups: a group, optionally with "keys" (key objects without "group").
struct GroupRequest {
  std::string name;
  tenancy::GroupFields fields;
  bool with_keys = false;  // "keys" was given (the answer lists them, even when empty)
  std::vector<tenancy::KeyFields> keys;
};
Result<GroupRequest> read_group_create(std::string_view body);
// PATCH /admin/v1/groups/{name}: the fields given; a group cannot be renamed.
Result<tenancy::GroupFields> read_group_update(std::string_view body);

// POST /admin/v1/keys: a key and the name of its group.
struct KeyRequest {
  std::string group;
  tenancy::KeyFields fields;
};
Result<KeyRequest> read_key_create(std::string_view body);
// PATCH /admin/v1/keys/{id}: the fields given; a key cannot move to another group.
Result<tenancy::KeyFields> read_key_update(std::string_view body);

}  // namespace sluice::admin
