#include "protocol/anthropic/ingress.h"

#include <array>

#include <boost/json/serialize.hpp>

#include "codec/json_envelope.h"
#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "ir/token_estimate.h"
#include "protocol/anthropic/errors.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/response.h"
#include "protocol/anthropic/stream_encoder.h"
#include "protocol/anthropic/stream_sniffer.h"

namespace sluice::protocol::anthropic {
namespace json = boost::json;

namespace {

// The envelope only: model, stream, max_tokens and a non-empty messages array, checked in one
// SAX pass. The full decode into the IR (every block type, with the API's own error messages)
// runs in to_ir(), only when the upstream speaks another protocol: an Anthropic upstream gets
// the caller's bytes as they are, including blocks and fields the IR cannot carry (documents,
// server tools, context_management, betas). count_tokens bodies have no max_tokens and no
// stream.
Result<IngressRequest> decode_envelope(std::string_view body, bool count_tokens) {
  using Kind = codec::EnvelopeField::Kind;
  std::array<codec::EnvelopeField, 5> fields = {
      codec::EnvelopeField("model"), codec::EnvelopeField("stream"),
      codec::EnvelopeField("max_tokens"), codec::EnvelopeField("messages"),
      codec::EnvelopeField("provider_options")};
  auto& [model, stream, max_tokens, messages, provider_options] = fields;
  std::string syntax;
  if (body.empty() || !codec::scan_envelope(body, fields, syntax, kMaxJsonDepth)) {
    return Error(ErrorKind::kBadRequest,
                 body.empty() ? std::string("request body is empty; expected a JSON object")
                              : "request body is not valid JSON: " + syntax);
  }
  auto bad = [](std::string_view path, std::string_view problem) {
    return Error(ErrorKind::kBadRequest, std::string(path) + ": " + std::string(problem))
        .with_param(std::string(path));
  };
  if (model.kind == Kind::kAbsent) {
    return bad("model", "Field required");
  }
  if (model.kind != Kind::kString || model.text.empty()) {
    return bad("model", "Input should be a non-empty string");
  }
  if (!count_tokens) {
    if (max_tokens.kind == Kind::kAbsent) {
      return bad("max_tokens", "Field required");
    }
    if (max_tokens.kind != Kind::kInteger || max_tokens.integer < 1) {
      return bad("max_tokens", "Input should be an integer greater than or equal to 1");
    }
  }
  if (messages.kind == Kind::kAbsent) {
    return bad("messages", "Field required");
  }
  if (messages.kind != Kind::kArray || messages.elements == 0) {
    return bad("messages", "Input should be a non-empty list");
  }
  if (!count_tokens && stream.kind != Kind::kAbsent && stream.kind != Kind::kBool &&
      stream.kind != Kind::kNull) {
    return bad("stream", "Input should be a valid boolean");
  }
  IngressRequest request;
  request.body = body;
  request.model = std::move(model.text);
  request.stream = !count_tokens && stream.kind == Kind::kBool && stream.flag;
  // Anthropic streams always carry usage (message_start and message_delta).
  request.include_usage = true;
  request.spliceable = model.spliceable();
  request.model_begin = model.begin;
  request.model_end = model.end;
  request.provider_options = provider_options.kind != Kind::kAbsent;
  return request;
}

}  // namespace

Result<IngressRequest> MessagesIngress::decode(std::string_view body,
                                               const codec::RequestHead& /*head*/) const {
  return decode_envelope(body, /*count_tokens=*/false);
}

Result<ir::Request> MessagesIngress::to_ir(IngressRequest& request) const {
  if (request.ir) {
    return std::move(*request.ir);
  }
  DecodeStats stats;
  DecodeOptions options;
  options.strict = request.strict_fields;
  auto decoded = decode_request(request.body, options, &stats);
  request.ignored_fields = stats.ignored_fields;
  return decoded;
}

std::string MessagesIngress::passthrough_body(const IngressRequest& request,
                                              std::string_view upstream_model) const {
  return codec::with_model(request.body, request.spliceable, request.model_begin, request.model_end,
                           upstream_model);
}

Result<std::string> MessagesIngress::encode_response(const ir::Response& response,
                                                     bool& usage_clamped) const {
  return anthropic::encode_response(response, &usage_clamped);
}

std::unique_ptr<protocol::StreamEncoder> MessagesIngress::make_stream_encoder(
    const IngressRequest& request) const {
  return std::make_unique<StreamEncoder>(request.estimated_input_tokens);
}

std::unique_ptr<protocol::StreamSniffer> MessagesIngress::make_stream_sniffer(
    const IngressRequest&) const {
  return std::make_unique<StreamSniffer>();
}

std::optional<ir::Usage> MessagesIngress::usage_of_body(std::string_view body) const {
  return facts_of_body(body).usage;
}

IngressCodec::BodyFacts MessagesIngress::facts_of_body(std::string_view body) const {
  BodyFacts facts;
  if (auto decoded = decode_response(body)) {
    facts.usage = decoded->usage;
    facts.finish = decoded->finish;
  }
  return facts;
}

ErrorReply MessagesIngress::encode_error(const Error& error) const {
  ErrorReply reply;
  reply.status = error_status(error);
  reply.body = anthropic::encode_error(error);
  return reply;
}

void MessagesIngress::append_stream_error(const Error& error, std::string& out) const {
  out.append("event: error\ndata: ");
  append_error_json(out, error_type(error), error.message());
  out.append("\n\n");
}

bool MessagesIngress::is_native_error(std::string_view body) const {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  if (ec || !doc.is_object()) {
    return false;
  }
  const json::object& o = doc.get_object();
  const json::value* type = o.if_contains("type");
  const json::value* e = o.if_contains("error");
  return type != nullptr && type->is_string() && type->get_string() == "error" && e != nullptr &&
         e->is_object() && e->get_object().contains("type");
}

bool MessagesIngress::claims_model_listing(const codec::RequestHead& head) const {
  return head.has_header("anthropic-version");
}

std::string MessagesIngress::encode_model_list(std::span<const std::string_view> aliases) const {
  // Anthropic's list shape (GET /v1/models with anthropic-version, what its SDKs send):
  // {"data":[{"type":"model","id","display_name","created_at"}],"has_more","first_id",
  // "last_id"}; one page holds every alias the key may use.
  std::string body;
  codec::JsonWriter w(body);
  w.ch('{').key("data").ch('[');
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    w.raw(i == 0 ? "" : ",").raw(encode_model(aliases[i]));
  }
  w.ch(']').ch(',').key("has_more").boolean(false).ch(',').key("first_id");
  aliases.empty() ? w.null() : w.string(aliases.front());
  w.ch(',').key("last_id");
  aliases.empty() ? w.null() : w.string(aliases.back());
  w.ch('}');
  return body;
}

std::string MessagesIngress::encode_model(std::string_view alias) const {
  // GET /v1/models/{model_id}: a ModelInfo object.
  std::string body;
  codec::JsonWriter w(body);
  w.ch('{').key("type").string("model").ch(',').key("id").string(alias).ch(',');
  w.key("display_name").string(alias).ch(',');
  w.key("created_at").string("1970-01-01T00:00:00Z").ch('}');
  return body;
}

Result<IngressRequest> CountTokensIngress::decode(std::string_view body,
                                                  const codec::RequestHead& /*head*/) const {
  return decode_envelope(body, /*count_tokens=*/true);
}

Result<ir::Request> CountTokensIngress::to_ir(IngressRequest& request) const {
  DecodeStats stats;
  DecodeOptions options;
  options.count_tokens = true;
  auto decoded = decode_request(request.body, options, &stats);
  request.ignored_fields = stats.ignored_fields;
  return decoded;
}

std::optional<Result<IngressCodec::LocalAnswer>> CountTokensIngress::local_answer(
    IngressRequest& request) const {
  auto ir = to_ir(request);  // validates the whole body, as Anthropic would
  if (!ir) {
    return Result<LocalAnswer>(std::move(ir).error());
  }
  LocalAnswer answer;
  answer.body = R"({"input_tokens":)" + std::to_string(ir::estimate_input_tokens(*ir)) + "}";
  answer.header = "x-sluice-token-count";
  answer.value = "estimate";
  return Result<LocalAnswer>(std::move(answer));
}

Result<std::string> CountTokensIngress::encode_response(const ir::Response& /*response*/,
                                                        bool& /*usage_clamped*/) const {
  return Error(ErrorKind::kInternal, "count_tokens has no translated answers");
}

std::unique_ptr<protocol::StreamEncoder> CountTokensIngress::make_stream_encoder(
    const IngressRequest& /*request*/) const {
  return nullptr;
}

std::unique_ptr<protocol::StreamSniffer> CountTokensIngress::make_stream_sniffer(
    const IngressRequest& /*request*/) const {
  return nullptr;
}

}  // namespace sluice::protocol::anthropic
