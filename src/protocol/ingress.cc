#include "protocol/ingress.h"

#include "codec/json_writer.h"

namespace sluice::protocol {

namespace {

bool iequals_prefix(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) {
    return false;
  }
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
    if (c != prefix[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string_view> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    }
  }
  return std::nullopt;
}

std::span<const CredentialSource> IngressCodec::credential_sources() const {
  static constexpr CredentialSource kSources[] = {
      {CredentialSource::Kind::kBearer, "authorization"},
      {CredentialSource::Kind::kHeader, "x-api-key"},
      {CredentialSource::Kind::kHeader, "api-key"},
  };
  return kSources;
}

std::string_view IngressCodec::credential(const codec::RequestHead& head) const {
  for (const CredentialSource& source : credential_sources()) {
    if (source.kind == CredentialSource::Kind::kQuery) {
      if (auto key = query_param(head.query(), source.name); key && !key->empty()) {
        return *key;
      }
      continue;
    }
    std::string_view v = head.header(source.name);
    if (v.empty()) {
      continue;
    }
    if (source.kind == CredentialSource::Kind::kHeader) {
      return v;
    }
    if (v.size() > 7 && iequals_prefix(v, "bearer ")) {
      v.remove_prefix(7);
      while (!v.empty() && v.front() == ' ') {
        v.remove_prefix(1);
      }
      return v;
    }
    return {};  // another scheme: not a gateway key, and never read elsewhere
  }
  return {};
}

std::string IngressCodec::encode_model(std::string_view alias) const {
  std::string body;
  codec::JsonWriter w(body);
  w.ch('{').key("id").string(alias).ch(',').key("object").string("model").ch(',');
  w.key("created").number(static_cast<std::int64_t>(0)).ch(',').key("owned_by").string("sluice");
  w.ch('}');
  return body;
}

}  // namespace sluice::protocol
