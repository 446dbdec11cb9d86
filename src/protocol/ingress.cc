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

std::string_view IngressCodec::credential(const codec::RequestHead& head) const {
  if (std::string_view v = head.header("authorization"); !v.empty()) {
    if (v.size() > 7 && iequals_prefix(v, "bearer ")) {
      v.remove_prefix(7);
      while (!v.empty() && v.front() == ' ') {
        v.remove_prefix(1);
      }
      return v;
    }
    return {};  // another scheme: not a gateway key, and never read elsewhere
  }
  for (std::string_view name : {"x-api-key", "api-key"}) {
    if (std::string_view v = head.header(name); !v.empty()) {
      return v;
    }
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
