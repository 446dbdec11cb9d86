#include "protocol/openai_responses/upstream.h"

#include <array>

#include "protocol/openai_responses/request_encoder.h"
#include "protocol/openai_responses/response.h"
#include "protocol/openai_responses/stream_decoder.h"

namespace sluice::protocol::openai_responses {

namespace {

// provider_options.openai for Responses upstreams (the family Chat Completions shares).
constexpr std::array<ProviderOption, 4> kProviderOptions = {{
    {"top_logprobs", ProviderOption::Type::kInteger, {}},
    {"prompt_cache_key", ProviderOption::Type::kString, {}},
    {"safety_identifier", ProviderOption::Type::kString, {}},
    {"truncation", ProviderOption::Type::kString, {}},
}};

}  // namespace

Result<std::string> ResponsesUpstream::encode_request(const ir::Request& request,
                                                      const EncodeTarget& target) const {
  return openai_responses::encode_request(request, target.model, target.stream);
}

Result<ir::Response> ResponsesUpstream::decode_response(std::string_view body) const {
  return openai_responses::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> ResponsesUpstream::make_stream_decoder() const {
  return std::make_unique<StreamDecoder>();
}

ProviderOptionsSpec ResponsesUpstream::provider_options() const {
  return {.family = "openai", .members = kProviderOptions};
}

}  // namespace sluice::protocol::openai_responses
