#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "core/result.h"
#include "protocol/protocol_id.h"

namespace sluice::pipeline {

// A caller's `provider_options` (docs/protocols.md, "Provider options"): provider-specific
// parameters the IR has no place for, carried through translation to whichever upstream the
// route picks. The bag is a top-level member of the caller's body (any caller protocol; Gemini
// callers may spell it providerOptions), an object keyed by the family of upstream protocol
// each entry is for. The families and their members are the upstream codecs'
// (protocol::UpstreamCodec::provider_options: openai, anthropic, gemini, bedrock).
//
// The whole bag is checked before any upstream is tried, whichever one the route would pick:
// an unknown family, a member no protocol of its family takes, or a value of the wrong JSON
// type is a 400 naming it (code invalid_provider_options, param
// "provider_options.<family>.<member>"). An upstream gets only its own protocol's entries:
// each member set in its body (an object member the codec also writes, such as
// generationConfig or additionalModelRequestFields, merged key by key, the caller's keys
// winning); the rest of the bag never leaves the gateway. A member of the family the
// upstream's protocol lacks (seed towards Responses) is left out and counted as ignored.
class ProviderOptions {
 public:
  // The bag in `caller_body`, checked. An absent bag is an empty one.
  static Result<ProviderOptions> read(std::string_view caller_body);

  bool empty() const { return bag_.empty(); }
  // The bag as compact JSON, keys as the caller sent them: what the answer cache keys on.
  std::string text() const;

  // `body` (an upstream request of protocol `wire`, a JSON object) without the caller's
  // provider_options member and with this bag's entries for `wire` applied; `ignored` counts
  // entries of the family `wire` cannot take. A body that is not a JSON object is returned as
  // it is.
  std::string apply(std::string_view body, protocol::ProtocolId wire, std::uint32_t& ignored) const;

 private:
  boost::json::object bag_;
};

}  // namespace sluice::pipeline
