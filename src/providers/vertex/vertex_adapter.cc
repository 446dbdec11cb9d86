#include "providers/vertex/vertex_adapter.h"

#include <array>

#include "codec/json_members.h"
#include "codec/json_writer.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/errors.h"
#include "providers/background_fetch.h"
#include "providers/claude_options.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

using Option = config::AdapterOption;

constexpr std::array<std::string_view, 2> kPublishers = {"google", "anthropic"};
constexpr std::array<Option, 8> kOptions = {{
    {.name = "vertex.project", .type = Option::Type::kString, .min = 0, .max = 0, .choices = {}},
    {.name = "vertex.location", .type = Option::Type::kString, .min = 0, .max = 0, .choices = {}},
    {.name = "vertex.publisher", .type = Option::Type::kChoice, .choices = kPublishers},
    {.name = "vertex.credentials_file",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "vertex.metadata_server",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "vertex.anthropic_version",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    kDefaultMaxTokensOption,
    kAdaptiveThinkingOption,
}};

// https://docs.claude.com/en/api/claude-on-vertex-ai
constexpr std::string_view kVertexAnthropicVersion = "vertex-2023-10-16";
// How long make() waits for a new token source's first token.
constexpr std::chrono::seconds kFirstTokenWait{5};

std::string option_or(const config::Provider& p, std::string_view name) {
  const std::string* value = p.option(name);
  return value != nullptr ? *value : std::string();
}

Error config_error(const config::Provider& p, std::string message) {
  return Error(ErrorKind::kBadRequest, p.source + ": provider " + p.id + ": " + std::move(message));
}

}  // namespace

const config::AdapterSchema VertexAdapter::kSchema = {
    .name = "vertex", .network = true, .options = kOptions};

Result<std::unique_ptr<ProviderAdapter>> VertexAdapter::make(const config::Provider& p) {
  const gcp::EnvLookup env = gcp::process_environment();
  std::unique_ptr<VertexAdapter> a(new VertexAdapter(p));
  a->anthropic_ = option_or(p, "vertex.publisher") == "anthropic";
  std::string location = option_or(p, "vertex.location");
  if (location.empty()) {
    location = env("GOOGLE_CLOUD_LOCATION").value_or("global");
  }
  const std::string default_url = location == "global"
                                      ? std::string("https://aiplatform.googleapis.com/v1")
                                      : "https://" + location + "-aiplatform.googleapis.com/v1";
  if (auto failed = a->connect_to(default_url, a->url_)) {
    return std::move(*failed);
  }
  std::string project = option_or(p, "vertex.project");
  if (!p.api_key.empty()) {
    if (a->anthropic_) {
      return config_error(p,
                          "api_key (Vertex AI express mode) serves Gemini only; Claude on "
                          "Vertex AI needs Google credentials (vertex.credentials_file)");
    }
    a->headers_.emplace_back("x-goog-api-key", p.api_key);
    a->secrets_.push_back(p.api_key);
  } else {
    auto credentials = gcp::find_credentials(option_or(p, "vertex.credentials_file"), env,
                                             option_or(p, "vertex.metadata_server"));
    if (!credentials) {
      return config_error(p, credentials.error().message());
    }
    if (project.empty()) {
      project = std::string(credentials->project_id());
    }
    const std::string source = credentials->source;
    auto tokens = GoogleTokenSource::shared(std::move(*credentials));
    if (!tokens) {
      return config_error(p, tokens.error().message());
    }
    a->tokens_ = std::move(*tokens);
    if (background_fetch_installed() && a->tokens_->authorization() == nullptr) {
      if (auto failed = a->tokens_->wait_first(kFirstTokenWait)) {
        // Not fatal: the source keeps trying, and requests are refused upstream meanwhile.
        spdlog::warn("provider {}: no access token yet from {}: {}", p.id, source,
                     failed->message());
      }
    }
  }
  if (project.empty()) {
    project = env("GOOGLE_CLOUD_PROJECT").value_or("");
  }
  a->models_path_ = a->url_.path_prefix;
  if (p.api_key.empty() || !project.empty()) {
    if (project.empty()) {
      return config_error(p,
                          "vertex.project is required (the credentials name none, and "
                          "GOOGLE_CLOUD_PROJECT is not set)");
    }
    a->models_path_.append("/projects/");
    append_path_segment(a->models_path_, project);
    a->models_path_.append("/locations/");
    append_path_segment(a->models_path_, location);
  }
  a->models_path_.append(a->anthropic_ ? "/publishers/anthropic/models/"
                                       : "/publishers/google/models/");
  if (a->anthropic_) {
    const std::string version = option_or(p, "vertex.anthropic_version");
    codec::JsonWriter(a->anthropic_version_json_)
        .string(version.empty() ? kVertexAnthropicVersion : version);
    a->passes_caller_headers_ = true;  // anthropic-beta (passes_caller_header)
    read_claude_options(p, a->upstream_options_);
  }
  for (const auto& [name, value] : p.headers) {
    a->headers_.emplace_back(name, value);
  }
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId VertexAdapter::wire_protocol(protocol::Operation operation) const {
  if (operation != protocol::Operation::kChat) {
    return {};
  }
  return anthropic_ ? protocol::anthropic::kMessagesProtocol : protocol::gemini::kGeminiProtocol;
}

void VertexAdapter::finish_body(protocol::ProtocolId /*protocol*/, bool /*stream*/,
                                std::string& body) const {
  if (!anthropic_) {
    return;
  }
  std::string without_model = codec::remove_member(body, "model");
  if (auto versioned = codec::set_member(without_model, {.key = "anthropic_version", .inner = {}},
                                         anthropic_version_json_)) {
    body = std::move(*versioned);
  } else {
    body = std::move(without_model);
  }
}

bool VertexAdapter::passes_caller_header(std::string_view name) const {
  return anthropic_ && iequals(name, "anthropic-beta");
}

std::string vertex_target(std::string_view models_path, std::string_view model, bool anthropic,
                          bool stream) {
  if (model.starts_with("models/")) {
    model.remove_prefix(7);
  }
  std::string target;
  target.reserve(models_path.size() + model.size() + 32);
  target.append(models_path);
  append_path_segment(target, model, "@");  // Claude's versions: "claude-sonnet-4-5@20250929"
  if (anthropic) {
    target.append(stream ? ":streamRawPredict" : ":rawPredict");
  } else {
    target.append(stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
  }
  return target;
}

void VertexAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                       codec::HeadWriter& head) const {
  head.request_line("POST", vertex_target(models_path_, spec.model, anthropic_, spec.stream));
  if (tokens_) {
    if (const std::string* authorization = tokens_->authorization()) {
      head.field("Authorization", *authorization);
    }
    // No token yet: sent without, and Vertex's 401 is reported as the provider's credential
    // problem (classify_failure) while the source keeps trying.
  }
  write_common_fields(spec, url_.host_header, headers_, head);
}

Error VertexAdapter::classify_failure(int status, const Exchange& response,
                                      std::string_view body) const {
  return protocol::gemini::with_retry_info(
      ProviderAdapter::classify_failure(status, response, body), status, body);
}

}  // namespace sluice::providers
