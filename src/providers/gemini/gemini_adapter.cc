#include "providers/gemini/gemini_adapter.h"

#include <charconv>
#include <cmath>

#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "protocol/gemini/conventions.h"

namespace sluice::providers {
namespace json = boost::json;

namespace {

constexpr std::string_view kDefaultBaseUrl = "https://generativelanguage.googleapis.com/v1beta";

}  // namespace

const config::AdapterSchema GeminiAdapter::kSchema = {
    .name = "gemini", .network = true, .options = {}};

Result<std::unique_ptr<ProviderAdapter>> GeminiAdapter::make(const config::Provider& p) {
  std::unique_ptr<GeminiAdapter> a(new GeminiAdapter(p));
  if (auto failed = a->connect_to(kDefaultBaseUrl, a->url_)) {
    return std::move(*failed);
  }
  if (!p.api_key.empty()) {
    a->headers_.emplace_back("x-goog-api-key", p.api_key);
    a->secrets_.push_back(p.api_key);
  }
  for (const auto& [name, value] : p.headers) {
    a->headers_.emplace_back(name, value);
  }
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId GeminiAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kChat ? protocol::gemini::kGeminiProtocol
                                                 : protocol::ProtocolId();
}

std::string gemini_target(std::string_view prefix, std::string_view model, bool stream) {
  if (model.starts_with("models/")) {
    model.remove_prefix(7);
  }
  std::string target;
  target.reserve(prefix.size() + model.size() + 48);
  target.append(prefix).append("/models/");
  append_path_segment(target, model);
  target.append(stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
  return target;
}

void GeminiAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                       codec::HeadWriter& head) const {
  head.request_line("POST", gemini_target(url_.path_prefix, spec.model, spec.stream));
  write_common_fields(spec, url_.host_header, headers_, head);
}

std::uint32_t gemini_retry_delay(std::string_view body) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  const json::value* error =
      !ec && doc.is_object() ? doc.get_object().if_contains("error") : nullptr;
  const json::value* details =
      error != nullptr && error->is_object() ? error->get_object().if_contains("details") : nullptr;
  if (details == nullptr || !details->is_array()) {
    return 0;
  }
  for (const json::value& d : details->get_array()) {
    const json::value* type = d.is_object() ? d.get_object().if_contains("@type") : nullptr;
    const json::value* delay = d.is_object() ? d.get_object().if_contains("retryDelay") : nullptr;
    if (type == nullptr || !type->is_string() ||
        !std::string_view(type->get_string()).ends_with("google.rpc.RetryInfo") ||
        delay == nullptr || !delay->is_string()) {
      continue;
    }
    std::string_view text(delay->get_string());
    if (!text.ends_with('s')) {
      return 0;
    }
    text.remove_suffix(1);
    double seconds = 0;
    auto [ptr, err] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (err != std::errc() || ptr != text.data() + text.size() || !(seconds > 0)) {
      return 0;
    }
    return static_cast<std::uint32_t>(std::min(86400.0, std::ceil(seconds)));
  }
  return 0;
}

Error GeminiAdapter::classify_failure(int status, const Exchange& response,
                                      std::string_view body) const {
  Error error = ProviderAdapter::classify_failure(status, response, body);
  if (error.retry_after_seconds() == 0 && (status == 429 || status == 503)) {
    if (const std::uint32_t wait = gemini_retry_delay(body); wait > 0) {
      return std::move(error).with_retry_after(wait);
    }
  }
  return error;
}

}  // namespace sluice::providers
