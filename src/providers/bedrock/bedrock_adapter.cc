#include "providers/bedrock/bedrock_adapter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>

#include "aws/web_identity.h"
#include "codec/json_members.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/bedrock_converse/conventions.h"
#include "protocol/bedrock_converse/errors.h"
#include "protocol/bedrock_embeddings/upstream.h"
#include "providers/background_fetch.h"
#include "providers/bedrock/container_credentials.h"
#include "providers/bedrock/instance_credentials.h"
#include "providers/bedrock/role_credentials.h"
#include "providers/claude_options.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

using Option = config::AdapterOption;

constexpr std::array<std::string_view, 2> kApis = {"converse", "invoke"};
constexpr std::array<Option, 12> kOptions = {{
    {.name = "bedrock.role_arn", .type = Option::Type::kString, .min = 0, .max = 0, .choices = {}},
    {.name = "bedrock.web_identity_token_file",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "bedrock.role_session_name",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "bedrock.sts_endpoint",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "bedrock.api", .type = Option::Type::kChoice, .choices = kApis},
    kDefaultMaxTokensOption,
    kAdaptiveThinkingOption,
    {.name = "bedrock.region", .type = Option::Type::kString, .min = 0, .max = 0, .choices = {}},
    {.name = "bedrock.access_key_id",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "bedrock.secret_access_key",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "bedrock.session_token",
     .type = Option::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "bedrock.profile", .type = Option::Type::kString, .min = 0, .max = 0, .choices = {}},
}};

std::string option_or(const config::Provider& p, std::string_view name) {
  const std::string* value = p.option(name);
  return value != nullptr ? *value : std::string();
}

Error config_error(const config::Provider& p, std::string message) {
  return Error(ErrorKind::kBadRequest, p.source + ": provider " + p.id + ": " + std::move(message));
}

// How long make() waits for a new role's first keys.
constexpr std::chrono::seconds kFirstKeysWait{5};
// ... and for the instance metadata service's, which answers at once where it exists.
constexpr std::chrono::seconds kInstanceKeysWait{3};
// https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html
constexpr std::string_view kInvokeAnthropicVersion = R"("bedrock-2023-05-31")";

}  // namespace

const config::AdapterSchema BedrockAdapter::kSchema = {
    .name = "bedrock", .network = true, .options = kOptions};

Result<std::unique_ptr<ProviderAdapter>> BedrockAdapter::make(const config::Provider& p) {
  const aws::EnvLookup env = aws::process_environment();
  std::string region = option_or(p, "bedrock.region");
  for (const char* variable : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (region.empty()) {
      region = env(variable).value_or("");
    }
  }
  if (region.empty()) {
    return config_error(p, "bedrock.region is required (or AWS_REGION in the environment)");
  }
  std::unique_ptr<BedrockAdapter> a(new BedrockAdapter(p, region));
  const std::string default_url = "https://bedrock-runtime." + region + ".amazonaws.com";
  if (auto failed = a->connect_to(default_url, a->url_)) {
    return std::move(*failed);
  }
  if (!p.api_key.empty()) {
    a->bearer_ = "Bearer " + p.api_key;
    a->secrets_.push_back(p.api_key);
  } else {
    Result<aws::FoundCredentials> found = aws::find_credentials(
        {.access_key_id = option_or(p, "bedrock.access_key_id"),
         .secret_access_key = option_or(p, "bedrock.secret_access_key"),
         .session_token = option_or(p, "bedrock.session_token"),
         .profile = option_or(p, "bedrock.profile"),
         .role_arn = option_or(p, "bedrock.role_arn"),
         .web_identity_token_file = option_or(p, "bedrock.web_identity_token_file"),
         .role_session_name = option_or(p, "bedrock.role_session_name")},
        env);
    if (!found) {
      return config_error(p, found.error().message() + " (or set api_key to a Bedrock API key)");
    }
    if (found->web_identity) {
      std::string sts_override = option_or(p, "bedrock.sts_endpoint");
      if (sts_override.empty()) {
        sts_override = env("AWS_ENDPOINT_URL_STS").value_or("");
      }
      auto role = RoleCredentials::shared(std::move(*found->web_identity),
                                          aws::sts_endpoint(region, sts_override));
      if (!role) {
        return config_error(p, role.error().message());
      }
      a->temporary_ = std::move(*role);
    } else if (found->container) {
      auto served = ContainerCredentials::shared(std::move(*found->container));
      if (!served) {
        return config_error(p, served.error().message());
      }
      a->temporary_ = std::move(*served);
    } else if (found->instance) {
      auto instance = InstanceCredentials::shared(std::move(*found->instance));
      if (!instance) {
        return config_error(p, instance.error().message());
      }
      a->temporary_ = std::move(*instance);
      // The chain's last resort, taken without being named: off EC2 nothing answers, and
      // that is the missing credentials' error, not a warning.
      if (background_fetch_installed() && a->temporary_->current() == nullptr) {
        if (auto failed = a->temporary_->wait_first(kInstanceKeysWait)) {
          return config_error(p,
                              "no AWS credentials in the provider's config, the environment, "
                              "a profile or a container endpoint, and " +
                                  failed->message() +
                                  " (or set api_key to a Bedrock API key; "
                                  "AWS_EC2_METADATA_DISABLED=true skips this step)");
        }
      }
    }
    if (a->temporary_ && background_fetch_installed() && a->temporary_->current() == nullptr) {
      if (auto failed = a->temporary_->wait_first(kFirstKeysWait)) {
        // Not fatal: the keys are fetched again on their schedule; requests go unsigned
        // meanwhile and Bedrock's 403 names the credentials.
        spdlog::warn("provider {}: no keys yet from {}: {}", p.id, found->source,
                     failed->message());
      }
    }
    a->credentials_ = std::move(found->credentials);
    a->secrets_.push_back(a->credentials_.secret_access_key);
    if (!a->credentials_.session_token.empty()) {
      a->secrets_.push_back(a->credentials_.session_token);
    }
  }
  for (const auto& [name, value] : p.headers) {
    a->headers_.emplace_back(name, value);
  }
  a->invoke_ = option_or(p, "bedrock.api") == "invoke";
  read_claude_options(p, a->upstream_options_);
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId BedrockAdapter::wire_protocol(protocol::Operation operation) const {
  if (operation == protocol::Operation::kEmbeddings) {
    return protocol::bedrock_embeddings::kEmbeddingsProtocol;
  }
  if (operation != protocol::Operation::kChat) {
    return {};
  }
  return invoke_ ? protocol::anthropic::kMessagesProtocol
                 : protocol::bedrock_converse::kConverseProtocol;
}

void BedrockAdapter::finish_body(protocol::ProtocolId wire, bool /*stream*/,
                                 std::string& body) const {
  if (wire != protocol::anthropic::kMessagesProtocol) {
    return;  // Converse and embeddings bodies are final as their codecs wrote them
  }
  // The Messages body as InvokeModel takes it: the model is in the path, streaming is the
  // operation's choice, and the version is Bedrock's.
  std::string trimmed = codec::remove_member(codec::remove_member(body, "model"), "stream");
  if (auto versioned = codec::set_member(trimmed, {.key = "anthropic_version", .inner = {}},
                                         kInvokeAnthropicVersion)) {
    body = std::move(*versioned);
  } else {
    body = std::move(trimmed);
  }
}

std::optional<Error> BedrockAdapter::stream_failure(const codec::SseEvent& event) const {
  if (event.event.ends_with("Exception")) {
    return protocol::bedrock_converse::stream_exception(event.event, event.data);
  }
  if (event.event == "error") {
    return protocol::bedrock_converse::stream_error(event.id, event.data);
  }
  return std::nullopt;
}

std::string bedrock_target(std::string_view prefix, std::string_view model, BedrockApi api,
                           bool stream) {
  std::string target;
  target.reserve(prefix.size() + model.size() + 40);
  target.append(prefix).append("/model/");
  append_path_segment(target, model);
  if (api == BedrockApi::kInvoke) {
    target.append(stream ? "/invoke-with-response-stream" : "/invoke");
  } else {
    target.append(stream ? "/converse-stream" : "/converse");
  }
  return target;
}

void BedrockAdapter::write_request_head(const RequestSpec& spec, std::string_view body,
                                        codec::HeadWriter& head) const {
  const bool invoke = invoke_ || spec.operation == protocol::Operation::kEmbeddings;
  const std::string target =
      bedrock_target(url_.path_prefix, spec.model,
                     invoke ? BedrockApi::kInvoke : BedrockApi::kConverse, spec.stream);
  head.request_line("POST", target);
  head.field("Host", url_.host_header).field("User-Agent", "sluice");
  for (const auto& [name, value] : headers_) {
    head.field(name, value);
  }
  head.field("Content-Type", "application/json")
      .field("Accept", spec.stream ? "application/vnd.amazon.eventstream" : "application/json")
      .field("x-request-id", spec.request_id);
  if (!bearer_.empty()) {
    head.field("Authorization", bearer_);
  } else {
    // What the signature covers: the host, the body (its hash), the time, and the provider's
    // own headers; the caller's forwarded headers stay outside it.
    std::vector<aws::HeaderView> signed_headers;
    signed_headers.reserve(headers_.size() + 2);
    signed_headers.push_back({"host", url_.host_header});
    signed_headers.push_back({"content-type", "application/json"});
    for (const auto& [name, value] : headers_) {
      signed_headers.push_back({name, value});
    }
    const aws::Request request{.method = "POST",
                               .path = target,
                               .query = {},
                               .headers = signed_headers,
                               .payload = aws::Payload::bytes(body)};
    const aws::Credentials* keys = temporary_ ? temporary_->current() : &credentials_;
    Result<aws::Signed> signed_request =
        keys != nullptr ? signer_.sign(request, *keys, std::chrono::system_clock::now())
                        : Result<aws::Signed>(Error(ErrorKind::kInternal, "no keys yet"));
    if (signed_request) {
      for (const aws::Header& h : signed_request->headers) {
        head.field(h.name, h.value);
      }
    }
    // A signing failure (a configured header the signer refuses, a role whose keys have not
    // come yet) leaves the request unsigned:
    // Bedrock answers 403, classified below as the provider's credential problem.
  }
  for (const auto& [name, value] : spec.forwarded) {
    head.field(name, value);
  }
  head.field("Content-Length", spec.content_length);
  head.end();
}

Error BedrockAdapter::classify_failure(int status, const Exchange& response,
                                       std::string_view body) const {
  Error error = protocol::bedrock_converse::error_from_wire(
      body, response.header("x-amzn-errortype"), status);
  if (error.code().empty()) {
    // Neither the header nor the body names a Bedrock exception (a proxy in front of it, an
    // HTML page): read like any provider's answer.
    return ProviderAdapter::classify_failure(status, response, body);
  }
  if (const auto asked = asked_retry_after(response); asked && error.retryable()) {
    const auto seconds = static_cast<std::uint64_t>((asked->count() + 999) / 1000);
    return std::move(error).with_retry_after(
        static_cast<std::uint32_t>(std::min<std::uint64_t>(seconds, 86400)));
  }
  return error;
}

bool BedrockAdapter::relays_response_header(std::string_view name) const {
  return ProviderAdapter::relays_response_header(name) || iequals(name, "x-amzn-requestid");
}

std::optional<ir::Usage> BedrockAdapter::usage_from_headers(const Exchange& response) const {
  const std::string_view input = response.header("x-amzn-bedrock-input-token-count");
  std::uint64_t tokens = 0;
  const auto [end, ec] = std::from_chars(input.data(), input.data() + input.size(), tokens);
  if (input.empty() || ec != std::errc() || end != input.data() + input.size()) {
    return std::nullopt;
  }
  ir::Usage usage{.input_tokens = tokens};
  const std::string_view output = response.header("x-amzn-bedrock-output-token-count");
  std::from_chars(output.data(), output.data() + output.size(), usage.output_tokens);
  return usage;
}

}  // namespace sluice::providers
