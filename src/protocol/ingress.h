#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "codec/json_members.h"
#include "codec/request_head.h"
#include "core/error.h"
#include "core/result.h"
#include "ir/request.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/protocol_id.h"
#include "protocol/stream.h"

namespace sluice::protocol {

// A caller's request after its codec has decoded and validated it: what the pipeline needs to
// route, meter and forward it. Passthrough stays zero-copy: `body` views the caller's bytes and
// the upstream body is produced by splicing; the IR request exists only when a codec decodes it
// eagerly (callers that are always translated) or when to_ir() is asked for it.
struct IngressRequest {
  std::string_view body;  // the caller's bytes; the body outlives the request
  std::string model;      // the model (alias) the caller asked for
  bool stream = false;
  // The caller asked for usage inside the stream (OpenAI stream_options.include_usage); when it
  // did not, the gateway may still ask the upstream and drop the extra event on the way back.
  bool include_usage = false;
  // Top-level request fields the codec ignored because the IR cannot carry them (schema drift).
  // Counted by to_ir, so only translated requests pay for it.
  std::uint32_t ignored_fields = 0;
  // Tools the codec left out of a translated request because no upstream of another protocol
  // can run them (OpenAI Responses' hosted tools: "web_search,file_search"), comma-separated;
  // the caller is told in `x-sluice-dropped-tools`. Filled by to_ir.
  std::string dropped_tools;
  // Set by the pipeline before to_ir (config server.strict_fields): to_ir then rejects, with a
  // kBadRequest naming the field in this protocol's words, any field it would ignore.
  // Passthrough never reads it: every field reaches an upstream of the caller's protocol.
  bool strict_fields = false;
  // Where the top-level model value sits in `body` (quotes included), for splicing; valid when
  // `spliceable`. `object_open` is the offset of the top-level '{'.
  std::size_t model_begin = 0;
  std::size_t model_end = 0;
  std::size_t object_open = 0;
  bool spliceable = false;
  std::uint32_t codec_flags = 0;  // private to the codec that decoded the request
  // The body has a top-level provider_options member (any JSON type): the caller's bag of
  // provider-specific parameters (pipeline/provider_options.h), which the pipeline checks,
  // merges into the upstream body and keeps out of it. Set by decode.
  bool provider_options = false;
  std::optional<ir::Request> ir;
  // The gateway's estimate of the prompt's tokens (about 4 bytes of request body per token),
  // for protocols that must state input usage before the upstream has reported it (Anthropic's
  // message_start). Filled by the pipeline before a stream encoder is made.
  std::uint64_t estimated_input_tokens = 0;
  // The id of an answer stored upstream that this request continues (OpenAI Responses
  // previous_response_id), "" when none. Only an upstream of this protocol holds that state;
  // pipeline/affinity.h knows which provider created it.
  std::string continues;
};

// A GET of an object an upstream stored under an id for the caller (an OpenAI Responses answer,
// GET /v1/responses/{id}). Views into the request target.
struct StoredObjectRef {
  std::string_view id;
  // What the upstream is asked for: the target below the protocol's API root, query included
  // ("/responses/resp_1?include=..."); the adapter puts its base path in front.
  std::string_view resource;
};

// Where a caller presents its gateway key: a header or a query parameter of its request.
struct CredentialSource {
  enum class Kind : std::uint8_t {
    kBearer,  // a header holding "Bearer <key>"; any other scheme there is no gateway key
    kHeader,  // a header holding the key itself
    kQuery,   // a query parameter holding the key (URL-safe: read as it is, not decoded)
  };
  Kind kind = Kind::kHeader;
  std::string_view name;  // lower case
};

// The value of query parameter `name` in `query` (the target after '?'; not percent-decoded),
// "" when it has no value, nullopt when it is absent.
std::optional<std::string_view> query_param(std::string_view query, std::string_view name);

// An error answer in a protocol's own shape.
struct ErrorReply {
  int status = 500;
  std::string body;
  std::string_view content_type = "application/json";
};

// One caller protocol: how its requests are read and how answers, streams and errors are
// written in its shape. One instance per protocol, registered in protocol/registry.cc;
// stateless and shared by every worker (all methods are const and thread-safe). Per-request
// state lives in the stream encoders and sniffers it makes.
//
// Adding a protocol: implement this in protocol/<name>/, add one line to registry.cc
// (protocol/README.md has the checklist).
class IngressCodec {
 public:
  virtual ~IngressCodec() = default;

  // Wire format of this protocol's bodies and streams.
  virtual ProtocolId protocol() const = 0;
  virtual Operation operation() const = 0;
  // Short name for logs and metrics ("openai", "anthropic").
  virtual std::string_view api_name() const = 0;
  // The endpoint this codec serves: exact path and method.
  virtual std::string_view path() const = 0;
  virtual std::string_view method() const { return "POST"; }
  // Whether this codec serves `path` (the request target without its query). The default is
  // an exact match with path(); protocols whose paths carry a parameter (Gemini's
  // /v1beta/models/{model}:generateContent) override it. registry.cc find_ingress asks every
  // codec in registration order, so a pattern must not claim another codec's exact path.
  virtual bool matches(std::string_view path) const { return this->path() == path; }

  // Stored objects: a GET `target` (path and query) that fetches an object an upstream of this
  // protocol stored for the caller, or nullopt. The pipeline relays such a GET verbatim to the
  // provider that created the object (pipeline/affinity.h remembers which one).
  virtual std::optional<StoredObjectRef> match_stored_object(std::string_view /*target*/) const {
    return std::nullopt;
  }
  // The id under which the upstream stored a complete answer relayed verbatim (`body`), so a
  // later GET can find its provider; "" when nothing was stored (the protocol stores nothing, or
  // the request asked not to store). StreamSniffer::stored_id() is the same for streams.
  virtual std::string stored_id_of_body(const IngressRequest& /*request*/,
                                        std::string_view /*body*/) const {
    return {};
  }

  // Where this protocol's callers present a gateway key, in the order credential() reads them.
  // The default: `Authorization: Bearer <key>`, then `x-api-key`, then `api-key` (the headers
  // the OpenAI, Anthropic and Azure SDKs send). Every header and query parameter any registered
  // codec names here is never sent to an upstream, whatever the caller's protocol
  // (registry.h is_credential_header, without_credentials): a codec that reads a new one
  // cannot forget to protect it.
  virtual std::span<const CredentialSource> credential_sources() const;
  // The gateway key the caller presented, "" when none: the first of credential_sources()
  // present with a value. A kBearer header with another scheme ends the search (it is not a
  // gateway key, and then nothing else is read as one). Reads no other header or parameter.
  std::string_view credential(const codec::RequestHead& head) const;

  // Decodes and validates the caller's body. Errors are kBadRequest with the offending field in
  // param(), worded the way this protocol's own API words them.
  virtual Result<IngressRequest> decode(std::string_view body,
                                        const codec::RequestHead& head) const = 0;
  // The IR request, for translation to an upstream of another protocol. May move the IR out of
  // `request` when decode() built it. Fails (kBadRequest) for content the IR cannot carry, and
  // with `request.strict_fields` for any field it would otherwise ignore; sets
  // `request.ignored_fields`.
  virtual Result<ir::Request> to_ir(IngressRequest& request) const = 0;
  // The body for an upstream of this same protocol: the caller's bytes with the model replaced
  // by `upstream_model`, plus what the gateway always asks for (usage in streams).
  virtual std::string passthrough_body(const IngressRequest& request,
                                       std::string_view upstream_model) const = 0;

  // Where this protocol's requests state the most output the model may produce, the first being
  // the one to write when a request states none (OpenAI Chat: max_tokens, then
  // max_completion_tokens; Gemini: generationConfig.maxOutputTokens). Empty for requests that
  // produce no output (embeddings, count_tokens). The route's max_output_tokens cap reads and
  // rewrites these members in the caller's body (pipeline/filters/output_cap_filter.h).
  virtual std::span<const codec::MemberPath> output_limit_fields() const { return {}; }

  // Endpoints that ask about a prompt rather than for an answer (Anthropic
  // /v1/messages/count_tokens). An upstream that speaks this protocol answers in passthrough; for
  // any other there is no request to translate to, so the gateway answers itself: the body, and a
  // response header saying what kind of answer it is (`x-sluice-token-count: estimate`). nullopt
  // (the default) for model calls, which are translated instead.
  struct LocalAnswer {
    std::string body;
    std::string_view header;  // static strings
    std::string_view value;
  };
  virtual std::optional<Result<LocalAnswer>> local_answer(IngressRequest& /*request*/) const {
    return std::nullopt;
  }
  // Whether local_answer() can answer this protocol's requests (the pipeline's local-answer
  // filter is in the chain only for protocols that have one).
  virtual bool answers_locally() const { return false; }

  // A complete translated answer in this protocol. `usage_clamped` is set when the usage could
  // not be expressed exactly and was clamped (see StreamEncoder::usage_clamped).
  virtual Result<std::string> encode_response(const ir::Response& response,
                                              bool& usage_clamped) const = 0;
  // The same for the answer to `request`, which a codec may need to tell it in the caller's
  // own words (OpenAI Responses: namespaced and custom tools, flattened for the upstream, named
  // back as the caller declared them). The pipeline calls this one.
  virtual Result<std::string> encode_response_for(const IngressRequest& /*request*/,
                                                  const ir::Response& response,
                                                  bool& usage_clamped) const {
    return encode_response(response, usage_clamped);
  }
  // Whether translated answers hand this protocol's callers the upstream's reasoning state
  // sealed (pipeline/reasoning_seal.h) rather than as the upstream signed it, and every
  // unsealed value a caller sends back is the reasoning of an upstream of this protocol
  // itself, never sent to another. OpenAI Responses: encrypted_content is opaque to its clients.
  // Protocols whose signatures callers may check or produce themselves keep them raw.
  virtual bool seals_reasoning() const { return false; }
  // Per-request stream encoder (translation) and sniffer (passthrough); null when this
  // protocol has no streams.
  virtual std::unique_ptr<StreamEncoder> make_stream_encoder(
      const IngressRequest& request) const = 0;
  virtual std::unique_ptr<StreamSniffer> make_stream_sniffer(
      const IngressRequest& request) const = 0;
  // Usage of a complete (non-stream) answer relayed verbatim, when it carries one.
  virtual std::optional<ir::Usage> usage_of_body(std::string_view body) const = 0;
  // What the access log records of a complete answer relayed verbatim: its usage and finish
  // reason (kUnset when unknown), as a stream's StreamSniffer reports them, so that a truncated
  // answer is logged as truncated. The default knows only the usage; a codec that reads the
  // finish reason in the same parse overrides it.
  struct BodyFacts {
    std::optional<ir::Usage> usage;
    ir::FinishReason finish = ir::FinishReason::kUnset;
  };
  virtual BodyFacts facts_of_body(std::string_view body) const {
    BodyFacts facts;
    facts.usage = usage_of_body(body);
    return facts;
  }

  // An error in this protocol's shape, with the HTTP status to answer with.
  virtual ErrorReply encode_error(const Error& error) const = 0;
  // The terminal error event of a stream in this protocol.
  virtual void append_stream_error(const Error& error, std::string& out) const = 0;
  // Whether an upstream error body of this protocol is already in the caller's shape (then it
  // is relayed as it is in passthrough; otherwise it is re-encoded from the classified Error).
  virtual bool is_native_error(std::string_view body) const = 0;

  // GET /v1/models is shared by several protocols; the first codec whose claim is true answers
  // in its list shape (the default codec otherwise). The same claim picks the error shape for
  // paths no codec owns (registry.h claiming_ingress).
  virtual bool claims_model_listing(const codec::RequestHead& head) const { return false; }
  virtual std::string encode_model_list(std::span<const std::string_view> aliases) const = 0;
  // GET /v1/models/{alias}: one model object. The default is OpenAI's shape
  // ({"id","object":"model","created","owned_by"}), which OpenAI-compatible APIs share.
  virtual std::string encode_model(std::string_view alias) const;
};

}  // namespace sluice::protocol
