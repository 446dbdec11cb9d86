#include "protocol/anthropic/upstream.h"

#include <array>

#include "protocol/anthropic/request_encoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"

namespace sluice::protocol::anthropic {

namespace {

// provider_options.anthropic (Anthropic, Claude on Bedrock InvokeModel and on Vertex).
constexpr std::array<std::string_view, 1> kMetadataKeys = {"user_id"};
constexpr std::array<ProviderOption, 4> kProviderOptions = {{
    {"top_k", ProviderOption::Type::kInteger, {}},
    {"metadata", ProviderOption::Type::kObject, kMetadataKeys},
    {"context_management", ProviderOption::Type::kObject, {}},
    {"inference_geo", ProviderOption::Type::kString, {}},
}};

}  // namespace

Result<std::string> MessagesUpstream::encode_request(const ir::Request& request,
                                                     const EncodeTarget& target) const {
  EncodeOptions options;
  options.default_max_tokens = target.options.default_max_tokens;
  options.adaptive_thinking = target.options.adaptive_thinking;
  return anthropic::encode_request(request, target.model, target.stream, options);
}

Result<ir::Response> MessagesUpstream::decode_response(std::string_view body) const {
  return anthropic::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> MessagesUpstream::make_stream_decoder() const {
  return std::make_unique<StreamDecoder>();
}

ProviderOptionsSpec MessagesUpstream::provider_options() const {
  return {.family = "anthropic", .members = kProviderOptions};
}

}  // namespace sluice::protocol::anthropic
