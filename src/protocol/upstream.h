#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"
#include "ir/response.h"
#include "protocol/protocol_id.h"
#include "protocol/stream.h"

namespace sluice::protocol {

// Provider options that change how a translated request is written for its upstream. The
// adapter reads them from its provider's config (providers/<name>/ documents each); a codec
// reads those of its own protocol and ignores the rest, so every upstream codec takes the same
// EncodeTarget whatever provider is behind it.
struct UpstreamOptions {
  // openai_chat: the output limit goes in `max_completion_tokens` instead of `max_tokens`
  // (OpenAI's reasoning models refuse max_tokens; most compatible servers know only max_tokens).
  bool max_completion_tokens = false;
  // anthropic_messages: `max_tokens` for requests that carry none (Anthropic requires it; OpenAI
  // and Gemini callers may omit it). At least 1.
  std::uint32_t default_max_tokens = 4096;
  // anthropic_messages: reasoning as {"type":"adaptive"} thinking plus output_config.effort,
  // never budget_tokens (models that refuse budgets).
  bool adaptive_thinking = false;
};

// One member a caller may set through its provider_options bag (pipeline/provider_options.h)
// in this protocol's request bodies, and the JSON type it must have.
struct ProviderOption {
  enum class Type : std::uint8_t { kObject, kArray, kString, kInteger, kNumber, kBool };
  std::string_view name;
  Type type = Type::kObject;
  // kObject: the keys a caller may set inside it; empty = any.
  std::span<const std::string_view> keys = {};
};

// What of a caller's provider_options bag this protocol's upstreams take: the entries under
// `family` (several protocols may share one: OpenAI's Chat Completions and Responses), the
// members listed. An empty family: none.
struct ProviderOptionsSpec {
  std::string_view family;
  std::span<const ProviderOption> members;
};

// Where a translated request goes: what its codec needs beyond the IR.
struct EncodeTarget {
  // The model name the upstream knows. Protocols that carry it in the URL (Gemini) leave it out
  // of the body; the adapter writes it there.
  std::string_view model;
  // Whether the upstream is asked to stream; wins over ir::Request::stream.
  bool stream = false;
  UpstreamOptions options;
};

// The upstream side of one wire protocol, for translated traffic (the caller speaks another
// protocol): the IR request as that protocol's body, and that protocol's answers as IR. One
// instance per protocol, registered beside the ingress codecs in protocol/registry.cc and found
// by (protocol, operation) (registry.h find_upstream); stateless and shared by every worker (all
// methods are const and thread-safe, and never do I/O). Per-request state lives in the stream
// decoders it makes. Authentication, paths, signing and failure classification are the
// adapter's (providers/adapter.h), which several providers share a codec through (openai,
// azure_openai, mock all speak openai_chat).
class UpstreamCodec {
 public:
  virtual ~UpstreamCodec() = default;

  virtual ProtocolId protocol() const = 0;
  virtual Operation operation() const = 0;

  // The upstream body for `request`. Fails (kBadRequest, worded for the caller, param() naming
  // the field) for what this protocol cannot take; what it can leave out by a documented rule it
  // leaves out (the folder's request_encoder.h lists both).
  virtual Result<std::string> encode_request(const ir::Request& request,
                                             const EncodeTarget& target) const = 0;
  // A complete (non-stream) answer of this protocol as IR: kUpstreamProtocol for a body that is
  // not one, the upstream's own error (kUpstreamStatus) for an error body.
  virtual Result<ir::Response> decode_response(std::string_view body) const = 0;
  // A per-request stream decoder (upstream events -> IR events); null when this protocol has no
  // streams.
  virtual std::unique_ptr<StreamDecoder> make_stream_decoder() const = 0;
  // The provider options this protocol's upstreams take (the bag's family and its members);
  // none by default. Chosen for what translation cannot carry, and never what would change
  // the price metering charges, keep prompts at the provider, or reach state another tenant
  // created under the gateway's own key.
  virtual ProviderOptionsSpec provider_options() const { return {}; }
};

}  // namespace sluice::protocol
