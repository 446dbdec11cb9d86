#include "providers/gemini/gemini_adapter.h"

#include <charconv>
#include <cmath>

#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/errors.h"

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

Error GeminiAdapter::classify_failure(int status, const Exchange& response,
                                      std::string_view body) const {
  return protocol::gemini::with_retry_info(
      ProviderAdapter::classify_failure(status, response, body), status, body);
}

}  // namespace sluice::providers
