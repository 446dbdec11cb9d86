#include "request_handler.h"

#include <ctime>

#include "chat_responder.h"
#include "embeddings_responder.h"
#include "fixture.h"
#include "openai_errors.h"
#include "trailing_response.h"

namespace sluice::mock {
namespace {

enum class Endpoint : std::uint8_t { kChat, kEmbeddings, kModels, kUnknown };

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Any prefix is accepted (/v1/chat/completions, /openai/v1/chat/completions, ...) so that
// tests can exercise base_url handling.
Endpoint endpoint_of(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  if (ends_with(path, "/chat/completions")) {
    return Endpoint::kChat;
  }
  if (ends_with(path, "/embeddings")) {
    return Endpoint::kEmbeddings;
  }
  if (ends_with(path, "/models")) {
    return Endpoint::kModels;
  }
  return Endpoint::kUnknown;
}

Reply error_reply(const Error& error) {
  Reply r;
  r.status = error.http_status();
  r.body = openai_error_body(error);
  return r;
}

Reply method_not_allowed(const MockRequest& request) {
  Error e(ErrorKind::kMethodNotAllowed, "Method " + std::string(request.method) +
                                            " is not allowed for " +
                                            std::string(path_of(request.target)) + ".");
  return error_reply(e);
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

}  // namespace

RequestHandler::RequestHandler(MockConfig config, Stats& stats)
    : config_(std::move(config)), stats_(stats) {}

Reply RequestHandler::handle(const MockRequest& request) const {
  if (path_of(request.target).starts_with("/_mock/")) {
    return handle_control(request);
  }
  std::uint64_t number = stats_.count_request();
  stats_.record_last_request(request);
  if (auto key = find_header(request.headers, "x-mock-count-key")) {
    stats_.count_key(*key);
  }
  switch (endpoint_of(path_of(request.target))) {
    case Endpoint::kChat:
      stats_.chat_requests.fetch_add(1, std::memory_order_relaxed);
      break;
    case Endpoint::kEmbeddings:
      stats_.embedding_requests.fetch_add(1, std::memory_order_relaxed);
      break;
    case Endpoint::kModels:
      stats_.model_requests.fetch_add(1, std::memory_order_relaxed);
      break;
    case Endpoint::kUnknown:
      break;
  }

  auto faults = parse_faults(request.headers, config_.defaults);
  if (!faults) {
    Reply r = error_reply(faults.error());
    r.request_number = number;
    return r;
  }
  Reply r = handle_api(request, *faults, number);
  r.request_number = number;
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
      return method_not_allowed(request);
    }
    Reply r;
    r.body = stats_.to_json();
    return r;
  }
  if (path == "/_mock/reset") {
    if (request.method != "POST") {
      return method_not_allowed(request);
    }
    stats_.reset();
    Reply r;
    r.body = R"({"ok":true})";
    return r;
  }
  return error_reply(Error(ErrorKind::kNotFound, "Unknown mock control path " + std::string(path)));
}

Reply RequestHandler::handle_api(const MockRequest& request, const Faults& faults,
                                 std::uint64_t number) const {
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
          Error(ErrorKind::kBadRequest, "invalid x-mock-fixture name (no '/', '\\\\' or '..')"));
    }
    auto fixture = load_fixture(config_.fixtures_dir, faults.fixture);
    if (!fixture) {
      return error_reply(Error(ErrorKind::kNotFound,
                               "mock fixture '" + faults.fixture + "' not found" +
                                   (config_.fixtures_dir.empty() ? " (no --fixtures dir)" : "")));
    }
    Reply r;
    r.status = status != 0 ? status : 200;
    if (fixture->kind == FixtureKind::kSse) {
      r.content_type = "text/event-stream";
      r.stream = make_fixture_stream(std::move(fixture->content));
    } else {
      r.content_type = content_type;
      r.body = std::move(fixture->content);
    }
    return r;
  }

  if (faults.raw_body) {
    Reply r;
    r.status = status != 0 ? status : 200;
    r.content_type = content_type;
    r.body = *faults.raw_body;
    return r;
  }

  if (status >= 400) {
    Reply r;
    r.status = status;
    r.body = injected_status_body(status);
    return r;
  }

  switch (endpoint_of(path_of(request.target))) {
    case Endpoint::kChat: {
      if (request.method != "POST") {
        return method_not_allowed(request);
      }
      auto chat = parse_chat_request(request.body);
      if (!chat) {
        return error_reply(chat.error());
      }
      ChatReplySpec spec{number, static_cast<std::int64_t>(std::time(nullptr)), faults.events,
                         faults.omit_done};
      Reply r;
      if (chat->stream) {
        r.content_type = "text/event-stream";
        r.stream = make_chat_stream(*chat, spec);
      } else {
        r.body = chat_completion_body(*chat, spec);
      }
      return with_success_status(std::move(r), success_status);
    }
    case Endpoint::kEmbeddings: {
      if (request.method != "POST") {
        return method_not_allowed(request);
      }
      auto emb = parse_embeddings_request(request.body);
      if (!emb) {
        return error_reply(emb.error());
      }
      Reply r;
      r.body = embeddings_body(*emb);
      return with_success_status(std::move(r), success_status);
    }
    case Endpoint::kModels: {
      if (request.method != "GET") {
        return method_not_allowed(request);
      }
      Reply r;
      r.body = kModelsBody;
      return with_success_status(std::move(r), success_status);
    }
    case Endpoint::kUnknown:
      break;
  }
  return error_reply(
      std::move(Error(ErrorKind::kNotFound, "Unknown request URL: " + std::string(request.method) +
                                                " " + std::string(path_of(request.target)) + ".")
                    .with_code("unknown_url")));
}

}  // namespace sluice::mock
