#include "protocol/openai_responses/upstream.h"

#include "protocol/openai_responses/request_encoder.h"
#include "protocol/openai_responses/response.h"
#include "protocol/openai_responses/stream_decoder.h"

namespace sluice::protocol::openai_responses {

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

}  // namespace sluice::protocol::openai_responses
