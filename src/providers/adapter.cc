#include "providers/adapter.h"

#include <charconv>

#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "core/version.h"
#include "protocol/registry.h"

namespace sluice::providers {
namespace json = boost::json;

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::optional<std::uint64_t> parse_uint(std::string_view text) {
  while (!text.empty() && text.front() == ' ') {
    text.remove_prefix(1);
  }
  while (!text.empty() && text.back() == ' ') {
    text.remove_suffix(1);
  }
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// What an upstream error body says, whatever the dialect: OpenAI and Anthropic
// ({"error":{"message","type","code"}}), vLLM ({"object":"error","message"}), FastAPI
// ({"detail"}), Gemini ({"error":{"message","status"}}), or plain {"error":"text"}.
struct UpstreamMessage {
  std::string message;
  std::string code;
  bool error_object = false;  // {"error":{"message":...}}: the OpenAI / Anthropic shape
};

std::optional<UpstreamMessage> read_message(std::string_view body) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  if (ec || !doc.is_object()) {
    return std::nullopt;
  }
  const json::object& o = doc.get_object();
  UpstreamMessage out;
  if (const json::value* e = o.if_contains("error")) {
    if (e->is_string()) {
      out.message = std::string(e->get_string());
      return out;
    }
    if (e->is_object()) {
      const json::object& eo = e->get_object();
      if (const json::value* m = eo.if_contains("message"); m && m->is_string()) {
        out.message = std::string(m->get_string());
      }
      for (const char* key : {"code", "type", "status"}) {
        if (const json::value* c = eo.if_contains(key);
            c && c->is_string() && !c->get_string().empty()) {
          out.code = std::string(c->get_string());
          break;
        }
      }
      if (!out.message.empty()) {
        out.error_object = true;
        return out;
      }
    }
  }
  for (const char* key : {"message", "detail"}) {
    if (const json::value* m = o.if_contains(key); m && m->is_string()) {
      out.message = std::string(m->get_string());
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::chrono::milliseconds> asked_retry_after(const Exchange& response) {
  if (auto ms = parse_uint(response.header("retry-after-ms"))) {
    return std::chrono::milliseconds(std::min<std::uint64_t>(*ms, 86'400'000));
  }
  if (auto s = parse_uint(response.header("retry-after"))) {
    return std::chrono::milliseconds(std::min<std::uint64_t>(*s, 86'400) * 1000);
  }
  return std::nullopt;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

bool istarts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

const protocol::UpstreamCodec* ProviderAdapter::upstream_codec(
    protocol::Operation operation) const {
  const protocol::ProtocolId wire = wire_protocol(operation);
  return wire.empty() ? nullptr : protocol::find_upstream(wire, operation);
}

Awaitable<Result<std::unique_ptr<Exchange>>> ProviderAdapter::call_in_process(
    boost::asio::any_io_executor, const InProcessRequest&, Cancellation&) const {
  co_return Error(ErrorKind::kInternal, "provider '" + id() + "' has no in-process implementation");
}

void ProviderAdapter::write_common_fields(
    const RequestSpec& spec, std::string_view host,
    std::span<const std::pair<std::string, std::string>> fixed, codec::HeadWriter& head) const {
  head.field("Host", host).field("User-Agent", kUserAgent);
  for (const auto& [name, value] : fixed) {
    head.field(name, value);
  }
  const bool body = spec.resource.empty();
  if (body) {
    head.field("Content-Type", "application/json");
  }
  head.field("Accept", spec.stream ? "text/event-stream" : "application/json")
      .field("x-request-id", spec.request_id);
  for (const auto& [name, value] : spec.forwarded) {
    head.field(name, value);
  }
  if (body) {
    head.field("Content-Length", spec.content_length);
  }
  head.end();
}

std::optional<Error> ProviderAdapter::connect_to(std::string_view default_base_url, BaseUrl& url) {
  const config::Provider& p = *config_;
  auto parsed =
      parse_base_url(p.base_url.empty() ? default_base_url : std::string_view(p.base_url));
  if (!parsed) {
    return Error(ErrorKind::kBadRequest,
                 p.source + ": provider " + p.id + ": base_url: " + parsed.error().message());
  }
  url = std::move(*parsed);
  auto endpoint = make_endpoint(p, url);
  if (!endpoint) {
    return std::move(endpoint).error();
  }
  endpoint_ = std::move(*endpoint);
  return std::nullopt;
}

Error ProviderAdapter::classify_failure(int status, const Exchange& response,
                                        std::string_view body) const {
  const std::optional<UpstreamMessage> said = read_message(body);
  const std::string prefix = "provider '" + id() + "' returned " + std::to_string(status);
  if (status == 401 || status == 403) {
    // The caller's own credentials were fine (the gateway checked them); the provider refused
    // the gateway's. Relaying 401 would tell the caller to fix a key it does not hold, and SDKs
    // would give up on a fault only the operator can fix.
    return Error(ErrorKind::kUpstreamStatus, 502,
                 prefix +
                     ": the gateway's credentials for this provider were refused; the "
                     "operator must fix the provider's api_key" +
                     (said ? " (provider said: " + said->message + ")" : std::string()))
        .with_code("upstream_auth_failed");
  }
  // A provider's own error object is passed on in its words; anything else (vLLM's
  // {"object":"error"}, FastAPI's {"detail"}, an HTML page) is named as the provider's.
  std::string message = "upstream " + prefix;
  if (said && said->error_object) {
    message = said->message;
  } else if (said) {
    message += ": " + said->message;
  }
  Error error(ErrorKind::kUpstreamStatus, status, std::move(message));
  if (said && !said->code.empty()) {
    error.with_code(said->code);
  }
  const auto asked = asked_retry_after(response);
  const std::uint64_t wait_s =
      asked ? (static_cast<std::uint64_t>(asked->count()) + 999) / 1000 : 0;
  if (wait_s > 0) {
    return std::move(error).with_retry_after(
        static_cast<std::uint32_t>(std::min<std::uint64_t>(wait_s, 86400)));
  }
  return error;
}

bool ProviderAdapter::relays_response_header(std::string_view name) const {
  return istarts_with(name, "x-ratelimit-") || iequals(name, "retry-after") ||
         iequals(name, "retry-after-ms") || iequals(name, "x-should-retry");
}

}  // namespace sluice::providers
