#include "protocol/gemini/upstream.h"

#include "protocol/gemini/request_encoder.h"
#include "protocol/gemini/response.h"
#include "protocol/gemini/stream_decoder.h"

namespace sluice::protocol::gemini {

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

}  // namespace sluice::protocol::gemini
