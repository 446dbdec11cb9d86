#include "protocol/openai_chat/upstream.h"

#include <array>

#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"

namespace sluice::protocol::openai_chat {

namespace {

// provider_options.openai for Chat Completions upstreams: parameters the IR has no place for.
constexpr std::array<ProviderOption, 10> kProviderOptions = {{
    {"seed", ProviderOption::Type::kInteger, {}},
    {"logit_bias", ProviderOption::Type::kObject, {}},
    {"logprobs", ProviderOption::Type::kBool, {}},
    {"top_logprobs", ProviderOption::Type::kInteger, {}},
    {"presence_penalty", ProviderOption::Type::kNumber, {}},
    {"frequency_penalty", ProviderOption::Type::kNumber, {}},
    {"prediction", ProviderOption::Type::kObject, {}},
    {"verbosity", ProviderOption::Type::kString, {}},
    {"prompt_cache_key", ProviderOption::Type::kString, {}},
    {"safety_identifier", ProviderOption::Type::kString, {}},
}};

}  // namespace

Result<std::string> ChatUpstream::encode_request(const ir::Request& request,
                                                 const EncodeTarget& target) const {
  EncodeOptions options;
  options.use_max_completion_tokens = target.options.max_completion_tokens;
  return openai_chat::encode_request(request, target.model, target.stream, options);
}

Result<ir::Response> ChatUpstream::decode_response(std::string_view body) const {
  return openai_chat::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> ChatUpstream::make_stream_decoder() const {
  return std::make_unique<StreamDecoder>();
}

ProviderOptionsSpec ChatUpstream::provider_options() const {
  return {.family = "openai", .members = kProviderOptions};
}

}  // namespace sluice::protocol::openai_chat
