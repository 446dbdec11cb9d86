#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/any_io_executor.hpp>

#include "codec/http_head.h"
#include "codec/sse.h"
#include "config/config.h"
#include "core/result.h"
#include "ir/usage.h"
#include "protocol/ingress.h"
#include "protocol/upstream.h"
#include "providers/base_url.h"
#include "providers/endpoint.h"
#include "providers/exchange.h"

namespace sluice::providers {

using Header = std::pair<std::string_view, std::string_view>;

// One upstream request as the pipeline asks an adapter to frame it.
struct RequestSpec {
  protocol::Operation operation = protocol::Operation::kChat;
  // The wire protocol of the body: the caller's when the adapter speaks it (passthrough),
  // wire_protocol(operation) for translated traffic. An adapter that speaks several protocols for
  // one operation picks the endpoint by it (OpenAI: /chat/completions or /responses).
  protocol::ProtocolId protocol;
  // A stored-object GET (IngressCodec::match_stored_object; write_retrieval_head): the resource
  // below the protocol's API root, query included ("/responses/resp_1"). Empty for model calls.
  std::string_view resource;
  std::string_view model;  // the model name the upstream knows
  bool stream = false;
  std::string_view request_id;
  std::uint64_t content_length = 0;
  // Caller headers this provider's forward_headers allow, already rid of framing and
  // credential headers (pipeline/upstream_relay.h add_forwarded_headers).
  std::span<const Header> forwarded;
};

// An in-process reply's input (adapters without a network endpoint).
struct InProcessRequest {
  protocol::Operation operation = protocol::Operation::kChat;
  bool stream = false;
  std::string_view body;
};

// One kind of upstream (openai, azure_openai, anthropic, gemini, mock): which wire protocols it
// speaks, how a request is framed, authenticated (and signed), how its failures are classified,
// which of its response headers reach the caller, and its options. Translation is not its job:
// the bodies of a protocol are written and read by that protocol's registered
// protocol::UpstreamCodec (upstream_codec), shared by every adapter that speaks it, with this
// provider's options (encode_target). One instance per configured provider, built with the
// snapshot (registry.h) and shared read-only by every worker: every method is const and
// thread-safe.
//
// Adding an adapter: implement this in providers/<name>/, add one line to registry.cc
// (README.md has the checklist).
class ProviderAdapter {
 public:
  virtual ~ProviderAdapter() = default;

  const config::Provider& config() const { return *config_; }
  const std::string& id() const { return config_->id; }

  // The wire protocol this upstream speaks for `operation`, or "" when it cannot serve it. When
  // it speaks several, the one translated traffic uses.
  virtual protocol::ProtocolId wire_protocol(protocol::Operation operation) const = 0;
  // Whether this upstream speaks `protocol` for `operation`: a caller of that protocol is then
  // passed through (its bytes relayed verbatim) rather than translated. An adapter may speak
  // several wire protocols for one operation (OpenAI: Chat Completions and Responses).
  virtual bool speaks(protocol::ProtocolId protocol, protocol::Operation operation) const {
    return wire_protocol(operation) == protocol;
  }

  // Where to connect, or null for adapters that answer in-process. Connection pools share
  // ownership of the endpoint (they outlive a reloaded snapshot while calls finish).
  const Endpoint* endpoint() const { return endpoint_.get(); }
  const std::shared_ptr<const Endpoint>& endpoint_ptr() const { return endpoint_; }
  // In-process adapters only: the exchange for `request`, on `executor`. `cancel` stops it.
  virtual Awaitable<Result<std::unique_ptr<Exchange>>> call_in_process(
      boost::asio::any_io_executor executor, const InProcessRequest& request,
      Cancellation& cancel) const;

  // The body as this upstream wants it, after the protocol's codec wrote it (translation) or
  // the caller's bytes got the upstream model spliced in (passthrough), before
  // write_request_head: Claude on Vertex AI and on Bedrock's InvokeModel takes no `model` (the
  // URL names it) and an `anthropic_version` member. Once per attempt; unchanged by default.
  virtual void finish_body(protocol::ProtocolId /*protocol*/, bool /*stream*/,
                           std::string& /*body*/) const {}

  // The complete HTTP/1.1 request head for `spec`: request line, Host, authentication, the
  // provider's configured headers, Content-Type / Accept / Content-Length, the request id and
  // the forwarded caller headers. Room for request signing (SigV4) here: the body is final when
  // this is called.
  virtual void write_request_head(const RequestSpec& spec, std::string_view body,
                                  codec::HeadWriter& head) const = 0;

  // A GET of an object this upstream stored for a caller (spec.protocol, spec.resource; a
  // Responses answer by id), relayed verbatim: the request line, Host, authentication and the
  // fields of write_request_head minus the body's. False when this adapter cannot serve it
  // (it does not speak spec.protocol); the default.
  virtual bool write_retrieval_head(const RequestSpec& /*spec*/,
                                    codec::HeadWriter& /*head*/) const {
    return false;
  }

  // Translation (the caller speaks another protocol): the codec of wire_protocol(operation)
  // (protocol/registry.h find_upstream), which writes the IR request as this upstream's body and
  // reads its answers and streams back. Null only when this upstream cannot serve `operation`
  // (the snapshot refuses routes that would need it); make_adapter refuses an adapter whose
  // protocol has no registered codec. A process-wide constant: never owned by the caller.
  const protocol::UpstreamCodec* upstream_codec(protocol::Operation operation) const;
  // What upstream_codec() is told about a translated request: `model` (the name the upstream
  // knows), `stream`, and this provider's options (upstream_options_). Views `model`.
  protocol::EncodeTarget encode_target(std::string_view model, bool stream) const {
    return {.model = model, .stream = stream, .options = upstream_options_};
  }

  // An upstream answer with a non-2xx status, as an Error: kind kUpstreamStatus; the message
  // and code the upstream gave; retry_after from its headers. A provider's 401 or 403 means
  // the gateway's own credentials were refused: that is never the caller's 401/403 but a 502
  // (code upstream_auth_failed) whose message says so, while the attempt keeps the upstream
  // status.
  virtual Error classify_failure(int status, const Exchange& response, std::string_view body) const;

  // A passed-through stream's event that is this upstream's own failure report rather than an
  // event of the caller's protocol (an AWS event stream exception inside Bedrock's
  // InvokeModelWithResponseStream): the Error the relay ends the stream with, in the caller's
  // protocol. Asked only of event-stream framed passthrough; nullopt by default.
  virtual std::optional<Error> stream_failure(const codec::SseEvent& /*event*/) const {
    return std::nullopt;
  }

  // The usage a translated answer's headers state, for answers whose body states none (Bedrock
  // reports Cohere embeddings' token count only in X-Amzn-Bedrock-Input-Token-Count). Asked
  // only then; nullopt by default.
  virtual std::optional<ir::Usage> usage_from_headers(const Exchange& /*response*/) const {
    return std::nullopt;
  }

  // Response headers relayed to the caller on success and failure alike (rate-limit state).
  virtual bool relays_response_header(std::string_view name) const;

  // Caller headers this adapter passes to its upstream whatever forward_headers says, because
  // the provider's protocol defines them for callers (Anthropic's anthropic-beta). Credentials
  // and framing headers are never passed (config::never_forwarded,
  // protocol::is_credential_header), whatever this returns.
  virtual bool passes_caller_header(std::string_view name) const { return false; }
  // Whether any caller header can reach the upstream (forward_headers or passes_caller_header);
  // when not, the pipeline skips looking.
  bool forwards_caller_headers() const {
    return passes_caller_headers_ || !config_->forward_headers.empty();
  }

  // The member this upstream reads a request's output limit from in `protocol`'s bodies, where
  // the protocol has several names for it (IngressCodec::output_limit_fields: OpenAI Chat's
  // max_tokens and max_completion_tokens); "" = the protocol's first. Read when the route's
  // max_output_tokens cap adds the limit to a request passed through.
  virtual std::string_view output_limit_field(protocol::ProtocolId /*protocol*/) const {
    return {};
  }

  // Secrets of this provider that must never reach a caller (its API key). Upstream error bodies
  // are scrubbed of them before they are relayed.
  virtual std::span<const std::string> secrets() const { return {}; }

 protected:
  explicit ProviderAdapter(const config::Provider& config) : config_(&config) {}

  // Writes the fields every JSON-over-HTTP provider request carries after its request line:
  // Host, User-Agent, `fixed` (authentication and configured headers), Content-Type, Accept
  // (SSE for streams), x-request-id, the forwarded caller headers, Content-Length, and the
  // blank line. A retrieval (spec.resource set) has no body: no Content-Type, no Content-Length.
  void write_common_fields(const RequestSpec& spec, std::string_view host,
                           std::span<const std::pair<std::string, std::string>> fixed,
                           codec::HeadWriter& head) const;

  // Network adapters: parses base_url (or `default_base_url` when none is configured) into
  // `url` and builds endpoint_. Errors name the provider's source location.
  std::optional<Error> connect_to(std::string_view default_base_url, BaseUrl& url);

  std::shared_ptr<const Endpoint> endpoint_;    // set by network adapters
  bool passes_caller_headers_ = false;          // set by adapters overriding passes_caller_header
  protocol::UpstreamOptions upstream_options_;  // set by make() from the provider's options

 private:
  const config::Provider* config_;  // owned by the snapshot's Config, which outlives adapters
};

// The wait an upstream answer asks for: `retry-after-ms`, else `Retry-After` in seconds (an
// HTTP date is not honoured), at most a day; nullopt when it gave neither.
std::optional<std::chrono::milliseconds> asked_retry_after(const Exchange& response);

// Case-insensitive ASCII comparison helpers for header names.
bool iequals(std::string_view a, std::string_view b);
bool istarts_with(std::string_view text, std::string_view prefix);

}  // namespace sluice::providers
