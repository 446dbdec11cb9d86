#include "protocol/openai_responses/ingress.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/json_envelope.h"
#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "core/clock.h"
#include "protocol/openai_responses/errors.h"
#include "protocol/openai_responses/request_decoder.h"
#include "protocol/openai_responses/response.h"
#include "protocol/openai_responses/stream_encoder.h"
#include "protocol/openai_responses/stream_sniffer.h"
#include "protocol/sealed_reasoning.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;

namespace {

// IngressRequest::codec_flags of this codec.
constexpr std::uint32_t kNoStore = 1;       // "store": false
constexpr std::uint32_t kConversation = 2;  // a `conversation` (server-side state) is named
// Translated: the request's namespace or custom tools have IR names to restore in the answer.
constexpr std::uint32_t kRestoresTools = 4;

// GET /v1/responses/{id}[/...]; "/v1" is OpenAI's API root, which the adapter's base URL
// replaces with its own.
constexpr std::string_view kApiRoot = "/v1";
constexpr std::string_view kStoredPrefix = "/v1/responses/";

// `created` of a translated answer: a label for the caller, not a decision (see ChatIngress).
std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             RealClock::instance().wall_now().time_since_epoch())
      .count();
}

Error bad(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

Error invalid_type(std::string_view param, std::string_view expected) {
  return bad(
      "Invalid type for '" + std::string(param) + "': expected " + std::string(expected) + ".",
      std::string(param));
}

// `body` for a Responses upstream without the reasoning input items whose encrypted_content
// the gateway sealed (an earlier turn answered by an upstream of another protocol): OpenAI
// cannot open them and refuses the whole turn, and under store: false it cannot look the item
// up by id either, so the item goes, summary and all. nullopt when there are none (the common
// case costs one scan of the body). Written back from a DOM: a double literal Boost.JSON 1.81
// reads imprecisely (-5e90) may go upstream a last bit off; splicing the items out would not.
std::optional<std::string> without_sealed_reasoning(std::string_view body,
                                                    std::string_view upstream_model) {
  if (memmem(body.data(), body.size(), kSealedReasoningPrefix.data(),
             kSealedReasoningPrefix.size()) == nullptr) {
    return std::nullopt;
  }
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, kMaxJsonDepth);
  json::object* root = ec ? nullptr : doc.if_object();
  json::value* input = root != nullptr ? root->if_contains("input") : nullptr;
  if (input == nullptr || !input->is_array()) {
    return std::nullopt;
  }
  json::array& items = input->get_array();
  const std::size_t before = items.size();
  const auto sealed_item = [](const json::value& item) {
    const json::object* o = item.if_object();
    if (o == nullptr || string_at(*o, "type").value_or("") != "reasoning") {
      return false;
    }
    const std::optional<std::string_view> sealed = string_at(*o, "encrypted_content");
    return sealed && sealed->starts_with(kSealedReasoningPrefix);
  };
  items.erase(std::remove_if(items.begin(), items.end(), sealed_item), items.end());
  if (items.size() == before) {
    return std::nullopt;
  }
  (*root)["model"] = upstream_model;
  return json::serialize(doc);
}

}  // namespace

Result<IngressRequest> ResponsesIngress::decode(std::string_view body,
                                                const codec::RequestHead& /*head*/) const {
  using Kind = codec::EnvelopeField::Kind;
  std::array<codec::EnvelopeField, 7> fields = {
      codec::EnvelopeField("model"),           codec::EnvelopeField("stream"),
      codec::EnvelopeField("store"),           codec::EnvelopeField("previous_response_id"),
      codec::EnvelopeField("input"),           codec::EnvelopeField("conversation"),
      codec::EnvelopeField("provider_options")};
  auto& [model, stream, store, previous, input, conversation, provider_options] = fields;
  std::string syntax;
  if (body.empty() || !codec::scan_envelope(body, fields, syntax, kMaxJsonDepth)) {
    return bad(body.empty() ? std::string("The request body is empty; expected a JSON object.")
                            : "We could not parse the JSON body of your request: " + syntax,
               "");
  }
  if (model.kind != Kind::kString || model.text.empty()) {
    return model.kind == Kind::kAbsent ? bad("Missing required parameter: 'model'.", "model")
                                       : invalid_type("model", "a non-empty string");
  }
  auto one_of = [](const codec::EnvelopeField& f, std::initializer_list<Kind> kinds) {
    if (f.kind == Kind::kAbsent || f.kind == Kind::kNull) {
      return true;
    }
    for (Kind k : kinds) {
      if (f.kind == k) {
        return true;
      }
    }
    return false;
  };
  if (!one_of(stream, {Kind::kBool})) {
    return invalid_type("stream", "a boolean");
  }
  if (!one_of(store, {Kind::kBool})) {
    return invalid_type("store", "a boolean");
  }
  if (!one_of(previous, {Kind::kString})) {
    return invalid_type("previous_response_id", "a string");
  }
  if (!one_of(input, {Kind::kString, Kind::kArray})) {
    return invalid_type("input", "a string or an array of input items");
  }
  IngressRequest request;
  request.body = body;
  request.model = std::move(model.text);
  request.stream = stream.kind == Kind::kBool && stream.flag;
  // response.completed always carries the usage.
  request.include_usage = true;
  request.spliceable = model.spliceable();
  request.model_begin = model.begin;
  request.model_end = model.end;
  request.provider_options = provider_options.kind != Kind::kAbsent;
  if (previous.kind == Kind::kString) {
    request.continues = std::move(previous.text);
  }
  if (store.kind == Kind::kBool && !store.flag) {
    request.codec_flags |= kNoStore;
  }
  if (conversation.kind != Kind::kAbsent && conversation.kind != Kind::kNull) {
    request.codec_flags |= kConversation;
  }
  return request;
}

Result<ir::Request> ResponsesIngress::to_ir(IngressRequest& request) const {
  if (!request.continues.empty() || (request.codec_flags & kConversation) != 0) {
    // The earlier turns live in the Responses upstream that stored them; another protocol's
    // upstream has no way to read them, and answering without them would be a different
    // conversation.
    const bool previous = !request.continues.empty();
    std::string message =
        previous ? "previous_response_id '" + request.continues +
                       "' continues a response stored "
                       "by an OpenAI Responses upstream"
                 : std::string("A conversation is stored by an OpenAI Responses upstream");
    message +=
        ", but model '" + request.model +
        "' is served by an upstream that does not speak the Responses API, so it cannot be "
        "continued there. Send the whole conversation in 'input' instead (with 'store': false), "
        "or use a model routed to a Responses upstream.";
    return Error(ErrorKind::kBadRequest, std::move(message))
        .with_code("unsupported_parameter")
        .with_param(previous ? "previous_response_id" : "conversation");
  }
  if (request.ir) {
    return std::move(*request.ir);
  }
  DecodeStats stats;
  DecodeOptions options;
  options.strict = request.strict_fields;
  auto decoded = decode_request(request.body, &stats, options);
  // Hosted tools left out count with the ignored fields (drift metric, access log, and the
  // response cache's refusal to store an answer to a request it changed).
  request.ignored_fields = stats.ignored_fields + stats.dropped_tools;
  request.dropped_tools = std::move(stats.dropped_tool_types);
  if (stats.tool_names.restores()) {
    request.codec_flags |= kRestoresTools;
  }
  return decoded;
}

std::string ResponsesIngress::passthrough_body(const IngressRequest& request,
                                               std::string_view upstream_model) const {
  if (auto rewritten = without_sealed_reasoning(request.body, upstream_model)) {
    return std::move(*rewritten);
  }
  return codec::with_model(request.body, request.spliceable, request.model_begin, request.model_end,
                           upstream_model);
}

Result<std::string> ResponsesIngress::encode_response(const ir::Response& response,
                                                      bool& usage_clamped) const {
  usage_clamped = false;  // every IR usage is expressible
  return openai_responses::encode_response(response,
                                           response.created != 0 ? response.created : unix_now());
}

Result<std::string> ResponsesIngress::encode_response_for(const IngressRequest& request,
                                                          const ir::Response& response,
                                                          bool& usage_clamped) const {
  if ((request.codec_flags & kRestoresTools) == 0) {
    return encode_response(response, usage_clamped);
  }
  usage_clamped = false;
  const ToolNames names = decode_tool_names(request.body);
  return openai_responses::encode_response(
      response, response.created != 0 ? response.created : unix_now(), &names);
}

std::unique_ptr<protocol::StreamEncoder> ResponsesIngress::make_stream_encoder(
    const IngressRequest& request) const {
  // The mapping is the request's own: read again from its tools (only when to_ir found
  // something to restore, so other requests pay nothing).
  return std::make_unique<StreamEncoder>(unix_now(), (request.codec_flags & kRestoresTools) != 0
                                                         ? decode_tool_names(request.body)
                                                         : ToolNames());
}

std::unique_ptr<protocol::StreamSniffer> ResponsesIngress::make_stream_sniffer(
    const IngressRequest& request) const {
  return std::make_unique<StreamSniffer>((request.codec_flags & kNoStore) == 0);
}

std::optional<ir::Usage> ResponsesIngress::usage_of_body(std::string_view body) const {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, kMaxJsonDepth);
  const json::object* o = ec ? nullptr : doc.if_object();
  const json::value* usage = o != nullptr ? o->if_contains("usage") : nullptr;
  if (usage == nullptr || usage->is_null()) {
    return std::nullopt;
  }
  auto read = read_usage(*usage);
  return read ? std::optional<ir::Usage>(*read) : std::nullopt;
}

std::optional<StoredObjectRef> ResponsesIngress::match_stored_object(
    std::string_view target) const {
  const std::string_view path = target.substr(0, target.find('?'));
  if (!path.starts_with(kStoredPrefix)) {
    return std::nullopt;
  }
  std::string_view id = path.substr(kStoredPrefix.size());
  id = id.substr(0, id.find('/'));
  // Response ids start with resp_ (OpenAI, Azure, vLLM); other names below /v1/responses/ are
  // endpoints of their own (input_tokens, compact) that the gateway does not serve.
  if (!id.starts_with("resp_") || id.size() == 5) {
    return std::nullopt;
  }
  return StoredObjectRef{.id = id, .resource = target.substr(kApiRoot.size())};
}

std::string ResponsesIngress::stored_id_of_body(const IngressRequest& request,
                                                std::string_view body) const {
  if ((request.codec_flags & kNoStore) != 0) {
    return {};
  }
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, kMaxJsonDepth);
  const json::object* o = ec ? nullptr : doc.if_object();
  return std::string(o != nullptr ? string_at(*o, "id").value_or("") : "");
}

ErrorReply ResponsesIngress::encode_error(const Error& error) const {
  ErrorReply reply;
  reply.status = error_status(error);
  reply.body = openai_responses::encode_error(error);
  return reply;
}

void ResponsesIngress::append_stream_error(const Error& error, std::string& out) const {
  append_error_event(out, error, -1);
}

bool ResponsesIngress::is_native_error(std::string_view body) const { return is_error_body(body); }

std::string ResponsesIngress::encode_model_list(std::span<const std::string_view> aliases) const {
  // OpenAI's list shape; ChatIngress answers GET /v1/models in practice (this codec claims no
  // listing), this keeps the interface complete.
  std::string body;
  codec::JsonWriter w(body);
  w.raw(R"({"object":"list","data":[)");
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    w.raw(i == 0 ? R"({"id":)" : R"(,{"id":)").string(aliases[i]);
    w.raw(R"(,"object":"model","created":0,"owned_by":"sluice"})");
  }
  w.raw("]}");
  return body;
}

}  // namespace sluice::protocol::openai_responses
