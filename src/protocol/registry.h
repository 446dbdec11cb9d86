#pragma once

#include <span>
#include <string>
#include <string_view>

#include "protocol/ingress.h"
#include "protocol/upstream.h"

namespace sluice::protocol {

// Every caller protocol the gateway serves, in registration order (registry.cc). The codecs
// are process-wide constants; the pointers stay valid for the life of the process.
std::span<const IngressCodec* const> ingress_codecs();

// The codec serving `path` (IngressCodec::matches, in registration order), or null.
const IngressCodec* find_ingress(std::string_view path);

// The ingress codec of `protocol` (IngressCodec::protocol), or null: the caller side of a wire
// protocol, for code that plays an upstream of it (the mock provider).
const IngressCodec* ingress_of(ProtocolId protocol);

// The codec that answers where no codec owns the request (unknown paths, the ops endpoints,
// model listing without a protocol hint): OpenAI's, the lingua franca of LLM clients.
const IngressCodec& default_ingress();

// For requests no codec owns by path (GET /v1/models, GET /v1/models/{id}, unknown paths): the
// first codec that claims the caller as one of its clients (IngressCodec::claims_model_listing:
// Anthropic SDKs send anthropic-version), else default_ingress(). Errors to such requests come
// in that protocol's shape, so an Anthropic SDK gets an Anthropic 404.
const IngressCodec& claiming_ingress(const codec::RequestHead& head);

// Every header some registered caller protocol reads a gateway key from
// (IngressCodec::credential_sources), lower case, each once; and the same for query parameters
// (Gemini's ?key=). Built once, on first use. None of them ever reaches an upstream, whatever a
// provider's forward_headers or an adapter's passes_caller_header say: the forwarding filter
// (pipeline/upstream_relay.cc) refuses these headers and stored-object GETs drop these
// parameters (without_credentials).
std::span<const std::string_view> credential_headers();
std::span<const std::string_view> credential_query_params();
// Whether `name` (any case) is one of credential_headers().
bool is_credential_header(std::string_view name);
// `target` (a path, then '?' and a query) without the query parameters named by
// credential_query_params(), the rest in order; the query's '?' goes when nothing is left.
std::string without_credentials(std::string_view target);

// Every upstream protocol translated traffic can be written in, one codec per (protocol,
// operation), process-wide constants like the ingress codecs.
std::span<const UpstreamCodec* const> upstream_codecs();

// The upstream codec for `protocol` and `operation`, or null when none is registered.
const UpstreamCodec* find_upstream(ProtocolId protocol, Operation operation);

}  // namespace sluice::protocol
