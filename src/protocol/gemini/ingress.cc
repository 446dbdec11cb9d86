#include "protocol/gemini/ingress.h"

#include <array>

#include "codec/json_envelope.h"
#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "codec/percent.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/errors.h"
#include "protocol/gemini/request_decoder.h"
#include "protocol/gemini/response.h"
#include "protocol/gemini/stream_encoder.h"
#include "protocol/gemini/stream_sniffer.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 2> kPrefixes = {"/v1beta/models/", "/v1/models/"};
constexpr std::string_view kGenerate = ":generateContent";
constexpr std::string_view kStream = ":streamGenerateContent";

// The raw value of query parameter `name`, or nullopt.
Error bad(std::string message, std::string param = {}) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

}  // namespace

std::optional<GenerateTarget> parse_generate_path(std::string_view path) {
  for (std::string_view prefix : kPrefixes) {
    if (!path.starts_with(prefix)) {
      continue;
    }
    std::string_view rest = path.substr(prefix.size());
    GenerateTarget target;
    if (rest.ends_with(kStream)) {
      target.stream = true;
      rest.remove_suffix(kStream.size());
    } else if (rest.ends_with(kGenerate)) {
      rest.remove_suffix(kGenerate.size());
    } else {
      return std::nullopt;
    }
    if (rest.empty()) {
      return std::nullopt;
    }
    target.model = rest;
    return target;
  }
  return std::nullopt;
}

bool GeminiIngress::matches(std::string_view path) const {
  return parse_generate_path(path).has_value();
}

std::span<const CredentialSource> GeminiIngress::credential_sources() const {
  // The Google Gen AI SDKs send x-goog-api-key; Google's REST examples also pass ?key=.
  static constexpr CredentialSource kSources[] = {
      {CredentialSource::Kind::kHeader, "x-goog-api-key"},
      {CredentialSource::Kind::kQuery, "key"},
      {CredentialSource::Kind::kBearer, "authorization"},
      {CredentialSource::Kind::kHeader, "x-api-key"},
      {CredentialSource::Kind::kHeader, "api-key"},
  };
  return kSources;
}

Result<IngressRequest> GeminiIngress::decode(std::string_view body,
                                             const codec::RequestHead& head) const {
  const auto target = parse_generate_path(head.path());
  if (!target) {
    return Error(ErrorKind::kNotFound, "no such Gemini method: " + std::string(head.path()));
  }
  IngressRequest request;
  request.model = codec::percent_decode(target->model);
  request.stream = target->stream;
  if (request.stream && query_param(head.query(), "alt").value_or("") != "sse") {
    return bad(
        "this gateway streams Gemini responses only as server-sent events: call "
        "streamGenerateContent with ?alt=sse (the Google Gen AI SDKs do)",
        "alt");
  }
  // Gemini's JSON takes either spelling of a field name.
  std::array<codec::EnvelopeField, 3> fields = {codec::EnvelopeField("contents"),
                                                codec::EnvelopeField("provider_options"),
                                                codec::EnvelopeField("providerOptions")};
  std::string syntax;
  if (body.empty() || !codec::scan_envelope(body, fields, syntax, kMaxJsonDepth)) {
    return bad("Invalid JSON payload received. " +
               (body.empty() ? std::string("The request body is empty.") : syntax));
  }
  const codec::EnvelopeField& contents = fields[0];
  if (contents.kind != codec::EnvelopeField::Kind::kArray || contents.elements == 0) {
    return bad("* GenerateContentRequest.contents: contents is not specified", "contents");
  }
  request.body = body;
  request.include_usage = true;  // every Gemini chunk carries usageMetadata
  request.provider_options = fields[1].kind != codec::EnvelopeField::Kind::kAbsent ||
                             fields[2].kind != codec::EnvelopeField::Kind::kAbsent;
  return request;
}

Result<ir::Request> GeminiIngress::to_ir(IngressRequest& request) const {
  if (request.ir) {
    return std::move(*request.ir);
  }
  DecodeStats stats;
  DecodeOptions options;
  options.strict = request.strict_fields;
  auto decoded = decode_request(request.body, &stats, options);
  request.ignored_fields = stats.ignored_fields;
  if (decoded) {
    decoded->model = request.model;
    decoded->stream = request.stream;
  }
  return decoded;
}

std::string GeminiIngress::passthrough_body(const IngressRequest& request,
                                            std::string_view /*upstream_model*/) const {
  return std::string(request.body);  // the model is in the URL, which the adapter writes
}

Result<std::string> GeminiIngress::encode_response(const ir::Response& response,
                                                   bool& usage_clamped) const {
  return gemini::encode_response(response, &usage_clamped);
}

std::unique_ptr<protocol::StreamEncoder> GeminiIngress::make_stream_encoder(
    const IngressRequest&) const {
  return std::make_unique<StreamEncoder>();
}

std::unique_ptr<protocol::StreamSniffer> GeminiIngress::make_stream_sniffer(
    const IngressRequest&) const {
  return std::make_unique<StreamSniffer>();
}

std::optional<ir::Usage> GeminiIngress::usage_of_body(std::string_view body) const {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, kMaxJsonDepth);
  if (ec || !doc.is_object()) {
    return std::nullopt;
  }
  const json::value* u = wire::member(doc.get_object(), "usageMetadata");
  if (u == nullptr) {
    return std::nullopt;
  }
  auto usage = wire::ir_usage(*u);
  return usage ? std::optional<ir::Usage>(*usage) : std::nullopt;
}

ErrorReply GeminiIngress::encode_error(const Error& error) const {
  ErrorReply reply;
  reply.status = error_status(error);
  reply.body = gemini::encode_error(error);
  return reply;
}

void GeminiIngress::append_stream_error(const Error& error, std::string& out) const {
  gemini::append_stream_error(error, out);
}

bool GeminiIngress::is_native_error(std::string_view body) const {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  if (ec || !doc.is_object() || doc.get_object().contains("type")) {
    return false;  // Anthropic's error has a top-level "type"
  }
  const json::value* e = doc.get_object().if_contains("error");
  if (e == nullptr || !e->is_object()) {
    return false;
  }
  const json::value* code = e->get_object().if_contains("code");
  const json::value* status = e->get_object().if_contains("status");
  return code != nullptr && code->is_number() && status != nullptr && status->is_string();
}

bool GeminiIngress::claims_model_listing(const codec::RequestHead& head) const {
  return head.path() == "/v1beta/models";
}

std::string GeminiIngress::encode_model_list(std::span<const std::string_view> aliases) const {
  // ListModelsResponse: {"models":[Model]}; one page holds every alias the key may use.
  std::string body;
  codec::JsonWriter w(body);
  w.raw(R"({"models":[)");
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    w.raw(i == 0 ? "" : ",").raw(R"({"name":)").string("models/" + std::string(aliases[i]));
    w.raw(R"(,"displayName":)").string(aliases[i]);
    w.raw(R"(,"supportedGenerationMethods":["generateContent","streamGenerateContent"]})");
  }
  w.raw("]}");
  return body;
}

}  // namespace sluice::protocol::gemini
