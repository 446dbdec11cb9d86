#include "protocol/openai_chat/openai_ingress.h"

#include "codec/sse.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/model_list.h"
#include "protocol/openai_chat/stream_monitor.h"

namespace sluice::protocol::openai_chat {

std::optional<ir::Usage> OpenAiIngress::usage_of_body(std::string_view body) const {
  return usage_from_response(body);
}

IngressCodec::BodyFacts OpenAiIngress::facts_of_body(std::string_view body) const {
  BodyFacts facts;
  facts.usage = usage_from_response(body, &facts.finish);
  return facts;
}

ErrorReply OpenAiIngress::encode_error(const Error& error) const {
  ErrorReply reply;
  reply.body = encode_error_with_status(error, reply.status);
  return reply;
}

void OpenAiIngress::append_stream_error(const Error& error, std::string& out) const {
  codec::append_data_event(out, openai_chat::encode_error(error));
}

bool OpenAiIngress::is_native_error(std::string_view body) const { return is_error_body(body); }

std::string OpenAiIngress::encode_model_list(std::span<const std::string_view> aliases) const {
  return openai_chat::encode_model_list(aliases);
}

}  // namespace sluice::protocol::openai_chat
