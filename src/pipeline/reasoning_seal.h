#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ir/request.h"
#include "ir/response.h"
#include "ir/stream_event.h"
#include "protocol/protocol_id.h"
#include "protocol/sealed_reasoning.h"

namespace sluice::pipeline {

// An upstream's reasoning state handed to a caller of another protocol, sealed by the gateway.
//
// A translated answer carries the upstream's signed reasoning (Anthropic thinking signatures
// and redacted thinking, Gemini thought signatures, Bedrock reasoning signatures) in the
// caller's protocol, so that the next turn can send it back and the model continues its own
// reasoning. An OpenAI Responses caller keeps it in `encrypted_content`, which OpenAI's clients
// treat as opaque (Codex sends `store: false` with `include: ["reasoning.encrypted_content"]`
// and replays it every turn). Sealing it there does three things a raw signature cannot:
//   - the caller cannot forge or alter it (AES-256-GCM; a value that does not open is dropped,
//     never sent upstream);
//   - it names the upstream protocol that signed it, so a turn that fails over to another kind
//     of upstream leaves out reasoning that upstream would reject (a Gemini signature sent to
//     Anthropic is a 400 for the whole turn);
//   - an OpenAI upstream's own encrypted_content (unsealed) is told apart from ours and never
//     sent to an upstream that cannot read it, nor ours to OpenAI.
//
// The key comes from `server.reasoning_seal_key` (every instance of a fleet needs the same one);
// without it, a random key made once per process, so seals last as long as the process.
// Anthropic documents its thinking signatures as valid on its API, Bedrock and Vertex alike:
// every upstream speaking the Messages protocol is one origin.
class ReasoningSeal {
 public:
  // The key derived from `secret` (SHA-256); "" means the process's random key.
  explicit ReasoningSeal(std::string_view secret);

  // `signature` sealed with the protocol whose model produced it ("" when unknown: opens for any
  // upstream). Starts with kPrefix; "" when sealing failed (the caller then gets no reasoning
  // state rather than an unsealed one).
  std::string seal(std::string_view origin, std::string_view signature) const;

  struct Opened {
    std::string origin;
    std::string signature;
  };
  // The sealed value's content; nullopt when `value` is not one of this key's seals (another
  // key's, altered, forged, or not sealed at all).
  std::optional<Opened> open(std::string_view value) const;

  static constexpr std::string_view kPrefix = protocol::kSealedReasoningPrefix;
  static bool is_sealed(std::string_view value) { return value.starts_with(kPrefix); }

 private:
  std::array<std::uint8_t, 32> key_{};
  bool usable_ = false;  // false when no key could be made: nothing is sealed or opened
};

// The IR's reasoning parts carry their origin in `ContentPart::name` (unused by reasoning
// parts otherwise) once opened: the protocol that signed `signature`, "" when unknown.

// Opens every sealed signature of `request` in place (signature restored, origin in `name`).
// A sealed value that does not open is dropped (the part's signature cleared, a redacted part
// removed), and so is any unsealed value when `only_sealed` (the caller's protocol gets only
// sealed values from the gateway: an unsealed one belongs to an upstream of its own protocol).
// Returns how many were dropped.
std::size_t open_reasoning(ir::Request& request, const ReasoningSeal& seal, bool only_sealed);

// Whether `request` has reasoning from an origin other than `upstream` (origins "" match all).
bool has_foreign_reasoning(const ir::Request& request, protocol::ProtocolId upstream);
// `request` without that reasoning (parts removed, or their signature only when they have text).
ir::Request without_foreign_reasoning(const ir::Request& request, protocol::ProtocolId upstream);

// Seals the signatures of an answer `origin` produced, for a caller whose protocol seals them.
void seal_reasoning(ir::Response& response, const ReasoningSeal& seal, protocol::ProtocolId origin);
// The same for one stream event (kReasoningSignature, kRedactedReasoning; others unchanged).
void seal_reasoning(ir::StreamEvent& event, const ReasoningSeal& seal, protocol::ProtocolId origin);

}  // namespace sluice::pipeline
