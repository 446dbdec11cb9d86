#include "protocol/bedrock_converse/upstream.h"

#include <array>

#include "protocol/bedrock_converse/request_encoder.h"
#include "protocol/bedrock_converse/response.h"
#include "protocol/bedrock_converse/stream_decoder.h"

namespace sluice::protocol::bedrock_converse {

namespace {

// provider_options.bedrock: Converse members the IR has no place for.
constexpr std::array<ProviderOption, 3> kProviderOptions = {{
    {"additionalModelRequestFields", ProviderOption::Type::kObject, {}},
    {"guardrailConfig", ProviderOption::Type::kObject, {}},
    {"requestMetadata", ProviderOption::Type::kObject, {}},
}};

}  // namespace

Result<std::string> ConverseUpstream::encode_request(const ir::Request& request,
                                                     const EncodeTarget& target) const {
  return bedrock_converse::encode_request(request, target.model);
}

Result<ir::Response> ConverseUpstream::decode_response(std::string_view body) const {
  return bedrock_converse::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> ConverseUpstream::make_stream_decoder() const {
  return std::make_unique<StreamDecoder>();
}

ProviderOptionsSpec ConverseUpstream::provider_options() const {
  return {.family = "bedrock", .members = kProviderOptions};
}

}  // namespace sluice::protocol::bedrock_converse
