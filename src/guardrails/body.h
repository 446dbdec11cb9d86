#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "guardrails/policy.h"

namespace sluice::guardrails {

// Inspects a caller's request body (any protocol, passthrough or translated: the JSON as the
// caller sent it) for the text the model will see: every string value except the members that
// name or structure things (model, role, type, ids, tool and function names, media types,
// signatures). Images, audio and files (base64 data, data: and http URLs, file ids) are not
// read: each is reported to the inspector as uninspected. Returns the body with the
// inspector's redactions, every other byte as the caller sent it, or nullopt when it stays as
// it is (or a block was found).
std::optional<std::string> inspect_body(std::string_view json, Inspector& inspector);

}  // namespace sluice::guardrails
