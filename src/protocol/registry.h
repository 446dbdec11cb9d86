#pragma once

#include <span>
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

// Every upstream protocol translated traffic can be written in, one codec per (protocol,
// operation), process-wide constants like the ingress codecs.
std::span<const UpstreamCodec* const> upstream_codecs();

// The upstream codec for `protocol` and `operation`, or null when none is registered.
const UpstreamCodec* find_upstream(ProtocolId protocol, Operation operation);

}  // namespace sluice::protocol
