#include "protocol/openai_chat/ingress.h"

#include <chrono>

#include "codec/sse.h"
#include "core/clock.h"
#include "protocol/openai_chat/envelope.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/model_list.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_encoder.h"
#include "protocol/openai_chat/stream_sniffer.h"

namespace sluice::protocol::openai_chat {

namespace {

// The `created` of a translated answer: Unix seconds of the real calendar clock. A label for
// the caller, not a decision, so the codec reads RealClock rather than taking a Clock (the
// IngressCodec interface has none to give).
std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             RealClock::instance().wall_now().time_since_epoch())
      .count();
}

}  // namespace

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
  DecodeStats stats;
  DecodeOptions options;
  options.strict = request.strict_fields;
  auto decoded = decode_request(request.body, &stats, options);
  request.ignored_fields = stats.ignored_fields;
  return decoded;
}

std::string ChatIngress::passthrough_body(const IngressRequest& request,
                                          std::string_view upstream_model) const {
  return encode_upstream_body(ChatRequest(request), upstream_model,
                              /*force_include_usage=*/true);
}

Result<std::string> ChatIngress::encode_response(const ir::Response& response,
                                                 bool& usage_clamped) const {
  usage_clamped = false;
  return openai_chat::encode_response(response,
                                      response.created != 0 ? response.created : unix_now());
}

std::unique_ptr<protocol::StreamEncoder> ChatIngress::make_stream_encoder(
    const IngressRequest& request) const {
  return std::make_unique<openai_chat::StreamEncoder>(request.include_usage, unix_now());
}

std::unique_ptr<protocol::StreamSniffer> ChatIngress::make_stream_sniffer(
    const IngressRequest& request) const {
  return std::make_unique<openai_chat::StreamSniffer>(/*strip_usage_chunk=*/!request.include_usage);
}

}  // namespace sluice::protocol::openai_chat
