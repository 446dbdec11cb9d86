#include "request_handler.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "anthropic_responder.h"
#include "bedrock_embed.h"
#include "bedrock_invoke.h"
#include "bedrock_responder.h"
#include "chat_responder.h"
#include "codec/percent.h"
#include "embeddings_responder.h"
#include "error_bodies.h"
#include "fixture.h"
#include "gemini_responder.h"
#include "responses_responder.h"
#include "trailing_response.h"

namespace sluice::mock {
namespace {

enum class Endpoint : std::uint8_t {
  kChat,
  kEmbeddings,
  kModels,
  kAnthropicMessages,
  kAnthropicCountTokens,
  kGeminiGenerate,
  kGeminiStream,
  kBedrockConverse,
  kBedrockConverseStream,
  kBedrockInvoke,           // …/model/{modelId}/invoke (Claude's Messages body)
  kBedrockInvokeStream,     // …/invoke-with-response-stream
  kVertexRawPredict,        // Claude on Vertex AI: …/publishers/anthropic/models/{m}:rawPredict
  kVertexStreamRawPredict,  // …:streamRawPredict
  kResponses,
  kStoredResponse,
  kUnknown,
};

// What the mock needs to know about an endpoint besides how to answer it.
struct EndpointInfo {
  std::string_view method;
  // Whose error shape its errors (validation, x-mock-status, bad fault headers) take.
  Dialect dialect;
  // The per-path counter in /_mock/stats; null for unknown paths.
  std::atomic<std::uint64_t> Stats::*counter;
};

EndpointInfo info_of(Endpoint e) {
  switch (e) {
    case Endpoint::kChat:
      return {"POST", Dialect::kOpenAI, &Stats::chat_requests};
    case Endpoint::kEmbeddings:
      return {"POST", Dialect::kOpenAI, &Stats::embedding_requests};
    case Endpoint::kModels:
      return {"GET", Dialect::kOpenAI, &Stats::model_requests};
    case Endpoint::kAnthropicMessages:
    case Endpoint::kAnthropicCountTokens:
      return {"POST", Dialect::kAnthropic, &Stats::anthropic_requests};
    case Endpoint::kGeminiGenerate:
    case Endpoint::kGeminiStream:
      return {"POST", Dialect::kGemini, &Stats::gemini_requests};
    case Endpoint::kBedrockConverse:
    case Endpoint::kBedrockConverseStream:
    case Endpoint::kBedrockInvoke:
    case Endpoint::kBedrockInvokeStream:
      return {"POST", Dialect::kBedrock, &Stats::bedrock_requests};
    case Endpoint::kVertexRawPredict:
    case Endpoint::kVertexStreamRawPredict:
      return {"POST", Dialect::kAnthropic, &Stats::anthropic_requests};
    case Endpoint::kResponses:
      return {"POST", Dialect::kOpenAI, &Stats::responses_requests};
    case Endpoint::kStoredResponse:
      return {"GET", Dialect::kOpenAI, &Stats::responses_requests};
    case Endpoint::kUnknown:
      break;
  }
  return {{}, Dialect::kOpenAI, nullptr};
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// An endpoint and what its path names besides it.
struct Route {
  Endpoint endpoint = Endpoint::kUnknown;
  // The Gemini model ("gemini-2.0-flash" in …/models/gemini-2.0-flash:generateContent),
  // the Bedrock model id as sent (percent-encoded) in …/model/{modelId}/converse, or the id
  // in …/responses/{id}.
  std::string_view arg;
};

// The last segment of `path` when the segments before it end with `parent` ("/models").
std::optional<std::string_view> segment_under(std::string_view path, std::string_view parent) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || !ends_with(path.substr(0, slash), parent)) {
    return std::nullopt;
  }
  return path.substr(slash + 1);
}

// …/model/{modelId}/converse and …/converse-stream (Bedrock Runtime).
Route bedrock_route(std::string_view path) {
  static constexpr std::pair<std::string_view, Endpoint> kOperations[] = {
      {"/converse", Endpoint::kBedrockConverse},
      {"/converse-stream", Endpoint::kBedrockConverseStream},
      {"/invoke", Endpoint::kBedrockInvoke},
      {"/invoke-with-response-stream", Endpoint::kBedrockInvokeStream},
  };
  for (const auto& [operation, endpoint] : kOperations) {
    if (!ends_with(path, operation)) {
      continue;
    }
    if (auto id = segment_under(path.substr(0, path.size() - operation.size()), "/model")) {
      return {endpoint, *id};
    }
  }
  return {};
}

// …/models/{model}:{method} (Gemini API and Vertex AI paths alike), …/responses/{id},
// …/model/{modelId}/{operation}.
Route parameterised_route(std::string_view path) {
  if (auto id = segment_under(path, "/responses")) {
    return {Endpoint::kStoredResponse, *id};
  }
  if (Route bedrock = bedrock_route(path); bedrock.endpoint != Endpoint::kUnknown) {
    return bedrock;
  }
  auto found = segment_under(path, "/models");
  if (!found) {
    return {};
  }
  std::string_view segment = *found;
  std::size_t colon = segment.rfind(':');
  if (colon == 0 || colon == std::string_view::npos) {
    return {};
  }
  std::string_view method = segment.substr(colon + 1);
  if (method == "generateContent") {
    return {Endpoint::kGeminiGenerate, segment.substr(0, colon)};
  }
  if (method == "streamGenerateContent") {
    return {Endpoint::kGeminiStream, segment.substr(0, colon)};
  }
  if (method == "rawPredict") {
    return {Endpoint::kVertexRawPredict, segment.substr(0, colon)};
  }
  if (method == "streamRawPredict") {
    return {Endpoint::kVertexStreamRawPredict, segment.substr(0, colon)};
  }
  return {};
}

// Any prefix is accepted (/v1/chat/completions, /openai/v1/chat/completions, ...) so that
// tests can exercise base_url handling.
Route route_of(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  static constexpr std::pair<std::string_view, Endpoint> kSuffixes[] = {
      {"/chat/completions", Endpoint::kChat},
      {"/embeddings", Endpoint::kEmbeddings},
      {"/messages/count_tokens", Endpoint::kAnthropicCountTokens},
      {"/messages", Endpoint::kAnthropicMessages},
      {"/responses", Endpoint::kResponses},
      {"/models", Endpoint::kModels},
  };
  for (const auto& [suffix, endpoint] : kSuffixes) {
    if (ends_with(path, suffix)) {
      return {endpoint, {}};
    }
  }
  return parameterised_route(path);
}

Reply error_reply(Dialect dialect, const Error& error) {
  Reply r;
  r.status = error.http_status();
  r.body = error_body(dialect, error);
  r.extra_headers = error_head_fields(dialect, error);
  return r;
}

// Bedrock answers every request with an x-amzn-RequestId (a UUID); the mock's is made from
// the request number.
std::string bedrock_request_id_field(std::uint64_t number) {
  char id[40];
  std::snprintf(id, sizeof id, "00000000-0000-4000-8000-%012llu",
                static_cast<unsigned long long>(number % 1000000000000ull));
  return std::string("x-amzn-RequestId: ") + id + "\r\n";
}

Error method_not_allowed(const MockRequest& request) {
  return Error(ErrorKind::kMethodNotAllowed, "Method " + std::string(request.method) +
                                                 " is not allowed for " +
                                                 std::string(path_of(request.target)) + ".");
}

// A normal answer sent with `status` (200, or the 2xx of x-mock-status). A 204 or 205 must
// not carry content (RFC 9110 sections 15.3.5 and 15.3.6), so it goes out without a body.
Reply with_success_status(Reply r, int status) {
  r.status = status;
  if (status == 204 || status == 205) {
    r.body.clear();
    r.stream.reset();
  }
  return r;
}

constexpr std::string_view kModelsBody =
    R"({"object":"list","data":[{"id":"mock-1","object":"model","created":0,)"
    R"("owned_by":"sluice-mock"}]})";

// Claude on Vertex AI takes the Messages API's body without `model` (the URL names it) and with
// "anthropic_version": "vertex-2023-10-16"; streamRawPredict is asked for a stream, rawPredict
// for a complete answer. Anything else is refused as Vertex refuses it, so a gateway that sends
// the Anthropic API's body here fails a test.
Result<Reply> respond_vertex_anthropic(std::string_view body, const std::string& model,
                                       const ReplySpec& spec, bool stream) {
  boost::system::error_code ec;
  boost::json::value doc = boost::json::parse(body, ec);
  if (ec || !doc.is_object()) {
    return Error(ErrorKind::kBadRequest, "invalid JSON body");
  }
  boost::json::object& o = doc.get_object();
  const boost::json::value* version = o.if_contains("anthropic_version");
  if (version == nullptr || !version->is_string() || version->get_string() != "vertex-2023-10-16") {
    return Error(ErrorKind::kBadRequest, "anthropic_version: must be vertex-2023-10-16");
  }
  if (o.contains("model")) {
    return Error(ErrorKind::kBadRequest, "model: Extra inputs are not permitted");
  }
  const boost::json::value* streamed = o.if_contains("stream");
  if ((streamed != nullptr && streamed->is_bool() && streamed->get_bool()) != stream) {
    return Error(ErrorKind::kBadRequest,
                 stream ? "streamRawPredict needs \"stream\": true" : "rawPredict cannot stream");
  }
  o.erase("anthropic_version");
  o["model"] = model;
  return respond_anthropic_messages(boost::json::serialize(doc), spec);
}

// The normal reply of a known endpoint, or its validation error.
Result<Reply> respond(const Route& route, const MockRequest& request, const ReplySpec& spec,
                      ResponseStore& responses) {
  switch (route.endpoint) {
    case Endpoint::kChat:
      return respond_chat(request.body, spec);
    case Endpoint::kEmbeddings:
      return respond_embeddings(request.body, spec.bag_of_words_embeddings
                                                  ? EmbeddingMode::kBagOfWords
                                                  : EmbeddingMode::kHash);
    case Endpoint::kModels:
      return body_reply(std::string(kModelsBody));
    case Endpoint::kAnthropicMessages:
      return respond_anthropic_messages(request.body, spec);
    case Endpoint::kAnthropicCountTokens:
      return respond_anthropic_count_tokens(request.body);
    case Endpoint::kGeminiGenerate:
      return respond_gemini(request.body, route.arg, spec, std::nullopt);
    case Endpoint::kGeminiStream:
      return respond_gemini(request.body, route.arg, spec,
                            query_param(request.target, "alt") == "sse"
                                ? GeminiFraming::kSse
                                : GeminiFraming::kJsonArray);
    case Endpoint::kBedrockConverse:
    case Endpoint::kBedrockConverseStream:
      return respond_bedrock(request.body, codec::percent_decode(route.arg), spec,
                             route.endpoint == Endpoint::kBedrockConverse
                                 ? BedrockOperation::kConverse
                                 : BedrockOperation::kConverseStream);
    case Endpoint::kBedrockInvoke:
    case Endpoint::kBedrockInvokeStream:
      if (const std::string model = codec::percent_decode(route.arg);
          route.endpoint == Endpoint::kBedrockInvoke && is_bedrock_embedding_model(model)) {
        return respond_bedrock_embed(
            request.body, model,
            spec.bag_of_words_embeddings ? EmbeddingMode::kBagOfWords : EmbeddingMode::kHash);
      }
      return respond_bedrock_invoke(request.body, codec::percent_decode(route.arg), spec,
                                    route.endpoint == Endpoint::kBedrockInvokeStream);
    case Endpoint::kVertexRawPredict:
    case Endpoint::kVertexStreamRawPredict:
      return respond_vertex_anthropic(request.body, codec::percent_decode(route.arg), spec,
                                      route.endpoint == Endpoint::kVertexStreamRawPredict);
    case Endpoint::kResponses:
      return respond_responses(request.body, spec, responses);
    case Endpoint::kStoredResponse:
      return respond_stored_response(route.arg, responses);
    case Endpoint::kUnknown:
      break;
  }
  return Error(ErrorKind::kNotFound, "no responder");
}

}  // namespace

RequestHandler::RequestHandler(MockConfig config, Stats& stats)
    : config_(std::move(config)),
      stats_(stats),
      bedrock_auth_(config_.bedrock_auth, config_.sts.get()) {}

Reply RequestHandler::handle(const MockRequest& request) const {
  if (path_of(request.target).starts_with("/_mock/")) {
    return handle_control(request);
  }
  std::uint64_t number = stats_.count_request();
  if (auto key = find_header(request.headers, "x-mock-count-key")) {
    stats_.count_key(*key);
  }
  if (config_.sts) {
    // The credential endpoints the mock plays for Bedrock: each issue or refusal of keys counted.
    const auto now = std::chrono::system_clock::now();
    std::optional<Reply> r;
    bool issues_keys = true;
    if (StsIssuer::is_imds_request(request)) {
      r = config_.sts->handle_imds(request, now);
      constexpr std::string_view kRoles = "/latest/meta-data/iam/security-credentials/";
      const std::string_view path = path_of(request.target);
      issues_keys = path.starts_with(kRoles) && path.size() > kRoles.size();  // not the listing
    } else if (StsIssuer::is_container_request(request)) {
      r = config_.sts->handle_container(request, now);
    } else if (StsIssuer::is_sts_request(request)) {
      r = config_.sts->handle(request, now);
    }
    if (r) {
      if (issues_keys) {
        (r->status == 200 ? stats_.sts_credentials_issued : stats_.sts_refusals)
            .fetch_add(1, std::memory_order_relaxed);
      }
      r->request_number = number;
      return std::move(*r);
    }
  }
  if (config_.gcp_auth && path_of(request.target).ends_with("/token")) {
    Reply r = config_.gcp_auth->handle_token(request, std::chrono::system_clock::now());
    (r.status == 200 ? stats_.gcp_tokens_issued : stats_.gcp_token_refusals)
        .fetch_add(1, std::memory_order_relaxed);
    r.request_number = number;
    return r;
  }
  // The last request to the provider's API: a credential endpoint's (keys refreshed in the
  // background, at any time) would hide it from the test that reads it.
  stats_.record_last_request(request);
  const Route route = route_of(path_of(request.target));
  const EndpointInfo info = info_of(route.endpoint);
  if (info.counter) {
    (stats_.*info.counter).fetch_add(1, std::memory_order_relaxed);
  }
  if (info.dialect == Dialect::kGemini) {
    if (find_header(request.headers, "x-goog-api-key")) {
      stats_.gemini_keys_in_header.fetch_add(1, std::memory_order_relaxed);
    }
    if (query_param(request.target, "key")) {
      stats_.gemini_keys_in_query.fetch_add(1, std::memory_order_relaxed);
    }
  }

  auto faults = parse_faults(request.headers, config_.defaults);
  if (!faults) {
    Reply r = error_reply(info.dialect, faults.error());
    r.request_number = number;
    if (info.dialect == Dialect::kBedrock) {
      r.extra_headers += bedrock_request_id_field(number);
    }
    return r;
  }
  Reply r = handle_api(request, *faults, number);
  r.request_number = number;
  if (info.dialect == Dialect::kBedrock) {
    r.extra_headers += bedrock_request_id_field(number);
  }
  if (!faults->retry_after.empty()) {
    r.extra_headers += "Retry-After: ";
    r.extra_headers += faults->retry_after;
    r.extra_headers += "\r\n";
  }
  r.extra_headers += faults->set_headers;
  if (faults->trailing_response) {
    append_trailing_response(r.trailing, static_cast<std::int64_t>(std::time(nullptr)));
  }
  r.faults = std::move(*faults);
  return r;
}

Reply RequestHandler::handle_control(const MockRequest& request) const {
  std::string_view path = path_of(request.target);
  if (path == "/_mock/stats") {
    if (request.method != "GET") {
      return error_reply(Dialect::kOpenAI, method_not_allowed(request));
    }
    return body_reply(stats_.to_json());
  }
  if (path == "/_mock/reset") {
    if (request.method != "POST") {
      return error_reply(Dialect::kOpenAI, method_not_allowed(request));
    }
    stats_.reset();
    responses_.clear();
    prompt_cache_.clear();
    return body_reply(R"({"ok":true})");
  }
  return error_reply(Dialect::kOpenAI,
                     Error(ErrorKind::kNotFound, "Unknown mock control path " + std::string(path)));
}

Reply RequestHandler::handle_api(const MockRequest& request, const Faults& faults,
                                 std::uint64_t number) const {
  const Route route = route_of(path_of(request.target));
  const EndpointInfo info = info_of(route.endpoint);
  // AWS authenticates a request before anything else looks at it (a rejected request takes
  // no turn of an x-mock-status sequence).
  if (info.dialect == Dialect::kBedrock) {
    if (auto rejected = check_bedrock_auth(request)) {
      return error_reply(Dialect::kBedrock, *rejected);
    }
  }
  if (path_of(request.target).find("/publishers/") != std::string_view::npos) {
    stats_.vertex_requests.fetch_add(1, std::memory_order_relaxed);
    if (config_.gcp_auth) {
      if (auto rejected = config_.gcp_auth->check(request, std::chrono::system_clock::now())) {
        stats_.vertex_auth_failures.fetch_add(1, std::memory_order_relaxed);
        return error_reply(Dialect::kGemini, *rejected);
      }
    }
  }
  int status = 0;
  if (!faults.status.empty()) {
    std::uint64_t k = faults.status.size() == 1 ? 0 : stats_.next_in_sequence(faults.sequence_key);
    status = faults.status[std::min<std::uint64_t>(k, faults.status.size() - 1)];
  }
  // A 2xx replaces the status of a normal answer; 1xx and 3xx answer normally with 200.
  const int success_status = status >= 200 && status < 300 ? status : 200;
  std::string_view content_type =
      faults.content_type.empty() ? std::string_view("application/json") : faults.content_type;

  if (!faults.fixture.empty()) {
    if (!is_safe_fixture_name(faults.fixture)) {
      return error_reply(
          info.dialect,
          Error(ErrorKind::kBadRequest, "invalid x-mock-fixture name (no '/', '\\\\' or '..')"));
    }
    auto fixture = load_fixture(config_.fixtures_dir, faults.fixture);
    if (!fixture) {
      return error_reply(info.dialect,
                         Error(ErrorKind::kNotFound,
                               "mock fixture '" + faults.fixture + "' not found" +
                                   (config_.fixtures_dir.empty() ? " (no --fixtures dir)" : "")));
    }
    Reply r = fixture->kind == FixtureKind::kSse
                  ? stream_reply(make_fixture_stream(std::move(fixture->content)))
                  : body_reply(std::move(fixture->content), content_type);
    r.status = status != 0 ? status : 200;
    return r;
  }

  if (faults.raw_body) {
    Reply r = body_reply(*faults.raw_body, content_type);
    r.status = status != 0 ? status : 200;
    return r;
  }

  if (status >= 400) {
    Reply r = body_reply(injected_status_body(info.dialect, status));
    r.status = status;
    r.extra_headers = injected_status_head_fields(info.dialect, status);
    return r;
  }

  if (route.endpoint == Endpoint::kUnknown) {
    return error_reply(info.dialect,
                       std::move(Error(ErrorKind::kNotFound,
                                       "Unknown request URL: " + std::string(request.method) + " " +
                                           std::string(path_of(request.target)) + ".")
                                     .with_code("unknown_url")));
  }
  if (request.method != info.method) {
    return error_reply(info.dialect, method_not_allowed(request));
  }
  ReplySpec spec{number,
                 static_cast<std::int64_t>(std::time(nullptr)),
                 faults.events,
                 faults.omit_done,
                 faults.stream_error,
                 faults.tool_name,
                 faults.tool_arguments,
                 nullptr,
                 {},
                 faults.bag_of_words_embeddings,
                 faults.latency_ms + faults.first_byte_ms};
  if (auto scope = find_header(request.headers, "x-mock-prompt-cache")) {
    spec.prompt_cache = &prompt_cache_;
    spec.prompt_cache_scope = *scope;
  }
  auto reply = respond(route, request, spec, responses_);
  if (!reply) {
    return error_reply(info.dialect, reply.error());
  }
  return with_success_status(std::move(*reply), success_status);
}

std::optional<Error> RequestHandler::check_bedrock_auth(const MockRequest& request) const {
  AuthOutcome outcome = bedrock_auth_.check(request, std::chrono::system_clock::now());
  if (outcome.scheme == AuthScheme::kSigV4) {
    stats_.bedrock_requests_signed.fetch_add(1, std::memory_order_relaxed);
  } else if (outcome.scheme == AuthScheme::kBearer) {
    stats_.bedrock_requests_bearer.fetch_add(1, std::memory_order_relaxed);
  }
  if (outcome.checked) {
    (outcome.error ? stats_.bedrock_signatures_invalid : stats_.bedrock_signatures_valid)
        .fetch_add(1, std::memory_order_relaxed);
  }
  return std::move(outcome.error);
}

}  // namespace sluice::mock
