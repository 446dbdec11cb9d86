#include "protocol/openai_chat/upstream.h"

#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"

namespace sluice::protocol::openai_chat {

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

}  // namespace sluice::protocol::openai_chat
