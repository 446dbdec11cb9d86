#include "providers/registry.h"

#include <array>

#include "protocol/registry.h"
#include "providers/anthropic/anthropic_adapter.h"
#include "providers/azure_openai/azure_adapter.h"
#include "providers/bedrock/bedrock_adapter.h"
#include "providers/gemini/gemini_adapter.h"
#include "providers/mock/mock_adapter.h"
#include "providers/openai/openai_adapter.h"
#include "providers/vertex/vertex_adapter.h"

namespace sluice::providers {

namespace {

using Factory = Result<std::unique_ptr<ProviderAdapter>> (*)(const config::Provider&);

struct Entry {
  const config::AdapterSchema& schema;
  Factory make;
};

// One line per adapter kind.
const std::array kAdapters = {
    Entry{OpenAiAdapter::kSchema, &OpenAiAdapter::make},
    Entry{MockAdapter::kSchema, &MockAdapter::make},
    Entry{AnthropicAdapter::kSchema, &AnthropicAdapter::make},
    Entry{AzureOpenAiAdapter::kSchema, &AzureOpenAiAdapter::make},
    Entry{GeminiAdapter::kSchema, &GeminiAdapter::make},
    Entry{BedrockAdapter::kSchema, &BedrockAdapter::make},
    Entry{VertexAdapter::kSchema, &VertexAdapter::make},
};

const std::array<config::AdapterSchema, kAdapters.size()> kSchemas = [] {
  std::array<config::AdapterSchema, kAdapters.size()> out{};
  for (std::size_t i = 0; i < kAdapters.size(); ++i) {
    out[i] = kAdapters[i].schema;
  }
  return out;
}();

}  // namespace

std::span<const config::AdapterSchema> adapter_schemas() { return kSchemas; }

Result<std::unique_ptr<ProviderAdapter>> make_adapter(const config::Provider& provider) {
  for (const Entry& e : kAdapters) {
    if (e.schema.name != provider.adapter) {
      continue;
    }
    // Config checks forward_headers against the framing headers it knows; the credential headers
    // are the caller protocols' (protocol/registry.h), visible from here. A prefix may cover one
    // (x-goog-* covers x-goog-api-key): the forwarding filter drops it; a name that is one
    // exactly can only be a mistake.
    for (const std::string& pattern : provider.forward_headers) {
      if (protocol::is_credential_header(pattern)) {
        return Error(ErrorKind::kBadRequest,
                     provider.source + ": provider " + provider.id + ": forward_headers: \"" +
                         pattern +
                         "\" is a header callers present their gateway key in, which is never "
                         "forwarded");
      }
    }
    auto adapter = e.make(provider);
    if (!adapter) {
      return adapter;
    }
    // Translated traffic needs the codec of every protocol the adapter names: a missing
    // registration is the gateway's bug, caught at start-up rather than on a request.
    for (protocol::Operation op : {protocol::Operation::kChat, protocol::Operation::kEmbeddings}) {
      const protocol::ProtocolId wire = (*adapter)->wire_protocol(op);
      if (!wire.empty() && (*adapter)->upstream_codec(op) == nullptr) {
        return Error(ErrorKind::kInternal, "adapter " + provider.adapter + " speaks " +
                                               std::string(wire) +
                                               ", which has no registered upstream codec");
      }
    }
    return adapter;
  }
  return Error(ErrorKind::kBadRequest, provider.source + ": provider " + provider.id +
                                           ": unknown adapter " + provider.adapter);
}

Result<std::shared_ptr<const config::Config>> load_config_file(const std::string& path,
                                                               config::LoadOptions options) {
  options.adapters = adapter_schemas();
  return config::load_from_file(path, options);
}

Result<std::shared_ptr<const config::Config>> load_config_string(const std::string& yaml,
                                                                 const std::string& source_name,
                                                                 config::LoadOptions options) {
  options.adapters = adapter_schemas();
  return config::load_from_string(yaml, source_name, options);
}

}  // namespace sluice::providers
