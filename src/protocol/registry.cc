#include "protocol/registry.h"

#include <algorithm>
#include <array>
#include <vector>

#include "protocol/anthropic/ingress.h"
#include "protocol/anthropic/upstream.h"
#include "protocol/bedrock_converse/upstream.h"
#include "protocol/bedrock_embeddings/upstream.h"
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
    static_cast<const UpstreamCodec*>(&kInstance<bedrock_converse::ConverseUpstream>),
    static_cast<const UpstreamCodec*>(&kInstance<bedrock_embeddings::EmbeddingsUpstream>),
};

bool iequals(std::string_view a, std::string_view lower) {
  return a.size() == lower.size() &&
         std::equal(a.begin(), a.end(), lower.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? static_cast<char>(x - 'A' + 'a') : x) == y;
         });
}

// The credential sources of every ingress codec, by kind.
struct CredentialNames {
  std::vector<std::string_view> headers;
  std::vector<std::string_view> query_params;
};

const CredentialNames& credential_names() {
  static const CredentialNames kNames = [] {
    CredentialNames names;
    for (const IngressCodec* codec : kIngress) {
      for (const CredentialSource& source : codec->credential_sources()) {
        auto& list =
            source.kind == CredentialSource::Kind::kQuery ? names.query_params : names.headers;
        if (std::find(list.begin(), list.end(), source.name) == list.end()) {
          list.push_back(source.name);
        }
      }
    }
    return names;
  }();
  return kNames;
}

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

std::span<const std::string_view> credential_headers() { return credential_names().headers; }

std::span<const std::string_view> credential_query_params() {
  return credential_names().query_params;
}

bool is_credential_header(std::string_view name) {
  for (std::string_view credential : credential_names().headers) {
    if (iequals(name, credential)) {
      return true;
    }
  }
  return false;
}

std::string without_credentials(std::string_view target) {
  const std::size_t q = target.find('?');
  std::string out(target.substr(0, q));
  if (q == std::string_view::npos) {
    return out;
  }
  const std::span<const std::string_view> refused = credential_query_params();
  std::string_view query = target.substr(q + 1);
  char separator = '?';
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::string_view name = pair.substr(0, pair.find('='));
    if (std::find(refused.begin(), refused.end(), name) == refused.end()) {
      out.append(1, separator).append(pair);
      separator = '&';
    }
  }
  return out;
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
