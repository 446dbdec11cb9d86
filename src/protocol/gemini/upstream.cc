#include "protocol/gemini/upstream.h"

#include <array>

#include "protocol/gemini/request_encoder.h"
#include "protocol/gemini/response.h"
#include "protocol/gemini/stream_decoder.h"

namespace sluice::protocol::gemini {

namespace {

// provider_options.gemini (Gemini, Gemini on Vertex). generationConfig is merged into the one
// the encoder writes; candidateCount and the audio members stay out (one text candidate).
constexpr std::array<std::string_view, 8> kGenerationConfigKeys = {
    "seed",     "presencePenalty", "frequencyPenalty",
    "topK",     "mediaResolution", "responseLogprobs",
    "logprobs", "thinkingConfig"};
constexpr std::array<ProviderOption, 3> kProviderOptions = {{
    {"safetySettings", ProviderOption::Type::kArray, {}},
    {"labels", ProviderOption::Type::kObject, {}},
    {"generationConfig", ProviderOption::Type::kObject, kGenerationConfigKeys},
}};

}  // namespace

Result<std::string> GeminiUpstream::encode_request(const ir::Request& request,
                                                   const EncodeTarget& /*target*/) const {
  return gemini::encode_request(request);
}

Result<ir::Response> GeminiUpstream::decode_response(std::string_view body) const {
  return gemini::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> GeminiUpstream::make_stream_decoder() const {
  return std::make_unique<StreamDecoder>();
}

ProviderOptionsSpec GeminiUpstream::provider_options() const {
  return {.family = "gemini", .members = kProviderOptions};
}

}  // namespace sluice::protocol::gemini
