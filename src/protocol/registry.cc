#include "protocol/registry.h"

#include <array>

#include "protocol/anthropic/ingress.h"
#include "protocol/anthropic/upstream.h"
#include "protocol/gemini/ingress.h"
#include "protocol/gemini/upstream.h"
#include "protocol/openai_chat/embeddings_ingress.h"
#include "protocol/openai_chat/embeddings_upstream.h"
#include "protocol/openai_chat/ingress.h"
#include "protocol/openai_chat/upstream.h"
#include "protocol/openai_responses/ingress.h"
#include "protocol/openai_responses/upstream.h"

namespace sluice::protocol {

namespace {

template <class Codec>
const Codec kInstance{};

// One line per caller protocol. The first one is the default.
constexpr std::array kIngress = {
    static_cast<const IngressCodec*>(&kInstance<openai_chat::ChatIngress>),
    static_cast<const IngressCodec*>(&kInstance<openai_chat::EmbeddingsIngress>),
    static_cast<const IngressCodec*>(&kInstance<anthropic::MessagesIngress>),
    static_cast<const IngressCodec*>(&kInstance<anthropic::CountTokensIngress>),
    static_cast<const IngressCodec*>(&kInstance<openai_responses::ResponsesIngress>),
    static_cast<const IngressCodec*>(&kInstance<gemini::GeminiIngress>),
};

// One line per upstream protocol.
constexpr std::array kUpstream = {
    static_cast<const UpstreamCodec*>(&kInstance<openai_chat::ChatUpstream>),
    static_cast<const UpstreamCodec*>(&kInstance<openai_chat::EmbeddingsUpstream>),
    static_cast<const UpstreamCodec*>(&kInstance<anthropic::MessagesUpstream>),
    static_cast<const UpstreamCodec*>(&kInstance<openai_responses::ResponsesUpstream>),
    static_cast<const UpstreamCodec*>(&kInstance<gemini::GeminiUpstream>),
};

}  // namespace

std::span<const IngressCodec* const> ingress_codecs() { return kIngress; }

const IngressCodec* find_ingress(std::string_view path) {
  for (const IngressCodec* codec : kIngress) {
    if (codec->matches(path)) {
      return codec;
    }
  }
  return nullptr;
}

const IngressCodec* ingress_of(ProtocolId protocol) {
  for (const IngressCodec* codec : kIngress) {
    if (codec->protocol() == protocol) {
      return codec;
    }
  }
  return nullptr;
}

const IngressCodec& default_ingress() { return *kIngress.front(); }

const IngressCodec& claiming_ingress(const codec::RequestHead& head) {
  for (const IngressCodec* codec : kIngress) {
    if (codec->claims_model_listing(head)) {
      return *codec;
    }
  }
  return default_ingress();
}

std::span<const UpstreamCodec* const> upstream_codecs() { return kUpstream; }

const UpstreamCodec* find_upstream(ProtocolId protocol, Operation operation) {
  for (const UpstreamCodec* codec : kUpstream) {
    if (codec->protocol() == protocol && codec->operation() == operation) {
      return codec;
    }
  }
  return nullptr;
}

}  // namespace sluice::protocol
