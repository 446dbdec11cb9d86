#include "pipeline/provider_options.h"

#include <span>
#include <vector>

#include "codec/json_compact.h"
#include "codec/json_read.h"
#include "protocol/registry.h"

namespace sluice::pipeline {
namespace json = boost::json;

namespace {

using Type = protocol::ProviderOption::Type;

std::string_view type_name(Type type) {
  switch (type) {
    case Type::kObject:
      return "an object";
    case Type::kArray:
      return "an array";
    case Type::kString:
      return "a string";
    case Type::kInteger:
      return "an integer";
    case Type::kNumber:
      return "a number";
    case Type::kBool:
      return "a boolean";
  }
  return "a value";
}

bool has_type(const json::value& v, Type type) {
  switch (type) {
    case Type::kObject:
      return v.is_object();
    case Type::kArray:
      return v.is_array();
    case Type::kString:
      return v.is_string();
    case Type::kInteger:
      return v.is_int64() || v.is_uint64();
    case Type::kNumber:
      return v.is_number();
    case Type::kBool:
      return v.is_bool();
  }
  return false;
}

// The chat upstream codecs that take a bag family (protocol/upstream.h provider_options), in
// registry order.
std::vector<const protocol::UpstreamCodec*> option_codecs() {
  std::vector<const protocol::UpstreamCodec*> out;
  for (const protocol::UpstreamCodec* c : protocol::upstream_codecs()) {
    if (c->operation() == protocol::Operation::kChat && !c->provider_options().family.empty()) {
      out.push_back(c);
    }
  }
  return out;
}

const std::vector<const protocol::UpstreamCodec*>& codecs_with_options() {
  static const std::vector<const protocol::UpstreamCodec*> kCodecs = option_codecs();
  return kCodecs;
}

std::string family_names() {
  std::string out;
  for (const protocol::UpstreamCodec* c : codecs_with_options()) {
    const std::string_view family = c->provider_options().family;
    if (out.find(std::string(family)) == std::string::npos) {
      out.append(out.empty() ? "" : ", ").append(family);
    }
  }
  return out;
}

// The member `name` of `family` as some protocol of that family takes it; null when none does.
const protocol::ProviderOption* member_of(std::string_view family, std::string_view name) {
  for (const protocol::UpstreamCodec* c : codecs_with_options()) {
    const protocol::ProviderOptionsSpec spec = c->provider_options();
    if (spec.family != family) {
      continue;
    }
    for (const protocol::ProviderOption& m : spec.members) {
      if (m.name == name) {
        return &m;
      }
    }
  }
  return nullptr;
}

bool is_family(std::string_view name) {
  for (const protocol::UpstreamCodec* c : codecs_with_options()) {
    if (c->provider_options().family == name) {
      return true;
    }
  }
  return false;
}

std::string member_names(std::string_view family) {
  std::string out;
  for (const protocol::UpstreamCodec* c : codecs_with_options()) {
    const protocol::ProviderOptionsSpec spec = c->provider_options();
    for (const protocol::ProviderOption& m : spec.members) {
      if (spec.family == family && out.find(std::string(m.name)) == std::string::npos) {
        out.append(out.empty() ? "" : ", ").append(m.name);
      }
    }
  }
  return out;
}

std::string_view view(json::string_view s) { return {s.data(), s.size()}; }

Error bad(std::string param, std::string message) {
  return Error(ErrorKind::kBadRequest, param + ": " + std::move(message))
      .with_code("invalid_provider_options")
      .with_param(std::move(param));
}

Result<void> check_family(std::string_view family, const json::value& entries) {
  const std::string at = "provider_options." + std::string(family);
  if (!entries.is_object()) {
    return bad(at, "must be an object");
  }
  for (const json::key_value_pair& kv : entries.get_object()) {
    const std::string param = at + "." + std::string(view(kv.key()));
    const protocol::ProviderOption* m = member_of(family, view(kv.key()));
    if (m == nullptr) {
      return bad(param, "is not a provider option Sluice passes (" + std::string(family) +
                            " takes: " + member_names(family) + ")");
    }
    if (!has_type(kv.value(), m->type)) {
      return bad(param, "must be " + std::string(type_name(m->type)));
    }
    if (m->keys.empty()) {
      continue;
    }
    for (const json::key_value_pair& inner : kv.value().get_object()) {
      bool allowed = false;
      std::string keys;
      for (std::string_view k : m->keys) {
        allowed = allowed || k == view(inner.key());
        keys.append(keys.empty() ? "" : ", ").append(k);
      }
      if (!allowed) {
        return bad(param + "." + std::string(view(inner.key())),
                   "is not a provider option Sluice passes (" + std::string(m->name) +
                       " takes: " + keys + ")");
      }
    }
  }
  return {};
}

}  // namespace

Result<ProviderOptions> ProviderOptions::read(std::string_view caller_body) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(caller_body, ec);
  ProviderOptions out;
  const json::object* root = ec ? nullptr : doc.if_object();
  if (root == nullptr) {
    return out;  // the caller's protocol decoder reports what is wrong with the body
  }
  const json::value* bag = root->if_contains("provider_options");
  if (bag == nullptr) {
    bag = root->if_contains("providerOptions");
  }
  if (bag == nullptr || bag->is_null()) {
    return out;
  }
  if (!bag->is_object()) {
    return bad("provider_options",
               "must be an object keyed by provider family (" + family_names() + ")");
  }
  for (const json::key_value_pair& kv : bag->get_object()) {
    if (!is_family(view(kv.key()))) {
      return bad("provider_options." + std::string(view(kv.key())),
                 "is not a provider family (" + family_names() + ")");
    }
    if (auto ok = check_family(view(kv.key()), kv.value()); !ok) {
      return ok.error();
    }
  }
  out.bag_ = bag->get_object();
  return out;
}

std::string ProviderOptions::text() const {
  std::string out;
  codec::append_compact_json(out, json::value(bag_));
  return out;
}

std::string ProviderOptions::apply(std::string_view body, protocol::ProtocolId wire,
                                   std::uint32_t& ignored) const {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec);
  json::object* root = ec ? nullptr : doc.if_object();
  if (root == nullptr) {
    return std::string(body);
  }
  root->erase("provider_options");  // a passed-through caller body carries the bag itself
  root->erase("providerOptions");
  const protocol::UpstreamCodec* codec = protocol::find_upstream(wire, protocol::Operation::kChat);
  const protocol::ProviderOptionsSpec spec =
      codec != nullptr ? codec->provider_options() : protocol::ProviderOptionsSpec{};
  const json::value* entries = spec.family.empty() ? nullptr : bag_.if_contains(spec.family);
  if (entries != nullptr) {
    for (const json::key_value_pair& kv : entries->get_object()) {
      bool takes = false;
      for (const protocol::ProviderOption& m : spec.members) {
        takes = takes || m.name == view(kv.key());
      }
      if (!takes) {  // the family's, not this protocol's (seed towards Responses)
        ++ignored;
        continue;
      }
      json::value& slot = (*root)[kv.key()];
      if (slot.is_object() && kv.value().is_object()) {
        for (const json::key_value_pair& inner : kv.value().get_object()) {
          slot.get_object()[inner.key()] = inner.value();
        }
      } else {
        slot = kv.value();
      }
    }
  }
  std::string out;
  out.reserve(body.size() + 64);
  codec::append_compact_json(out, doc);
  return out;
}

}  // namespace sluice::pipeline
