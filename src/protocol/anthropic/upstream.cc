#include "protocol/anthropic/upstream.h"

#include "protocol/anthropic/request_encoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_decoder.h"

namespace sluice::protocol::anthropic {

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

}  // namespace sluice::protocol::anthropic
