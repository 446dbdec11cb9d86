#pragma once

#include <string>
#include <string_view>

namespace sluice::tenancy {

// The random parts of a new store key, made by the caller of the rules (tenancy/rules.h stay
// pure). Throw std::runtime_error if OpenSSL's CSPRNG fails: a weak id or secret is not an
// option.

// "sk-slc-" and 40 base62 characters from OpenSSL's CSPRNG.
std::string generate_key_secret();
// The part of a secret shown in lists and logs ("sk-slc-3f9a").
std::string key_prefix(std::string_view secret);
// "key_" and 16 hex digits from the CSPRNG: a store key's id, never reused.
std::string generate_key_id();

}  // namespace sluice::tenancy
