#include "protocol/openai_chat/chat_ingress.h"

#include "protocol/openai_chat/chat_request.h"
#include "protocol/openai_chat/ir_request.h"
#include "protocol/openai_chat/stream_monitor.h"

namespace sluice::protocol::openai_chat {

Result<IngressRequest> ChatIngress::decode(std::string_view body,
                                           const codec::RequestHead& /*head*/) const {
  auto decoded = decode_chat_request(body);
  if (!decoded) {
    return std::move(decoded).error();
  }
  return IngressRequest(std::move(*decoded));
}

Result<ir::Request> ChatIngress::to_ir(IngressRequest& request) const {
  if (request.ir) {
    return std::move(*request.ir);
  }
  return decode_request(request.body);
}

std::string ChatIngress::passthrough_body(const IngressRequest& request,
                                          std::string_view upstream_model) const {
  return encode_upstream_body(ChatRequest(request), upstream_model,
                              /*force_include_usage=*/true);
}

Result<std::string> ChatIngress::encode_response(const ir::Response& /*response*/,
                                                 bool& /*usage_clamped*/) const {
  return Error(ErrorKind::kInternal,
               "answering an OpenAI chat caller from an upstream of another protocol is not "
               "supported yet")
      .with_code("translation_unsupported");
}

std::unique_ptr<StreamEncoder> ChatIngress::make_stream_encoder(const IngressRequest&) const {
  return nullptr;
}

std::unique_ptr<StreamSniffer> ChatIngress::make_stream_sniffer(
    const IngressRequest& request) const {
  return std::make_unique<StreamMonitor>(/*strip_usage_chunk=*/!request.include_usage);
}

}  // namespace sluice::protocol::openai_chat
