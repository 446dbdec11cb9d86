#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/adapter.h"
#include "providers/base_url.h"

namespace sluice::providers {

// What every adapter speaking the OpenAI wire protocol shares (OpenAI itself, OpenAI-compatible
// servers, Azure OpenAI): Chat Completions and Embeddings (translated traffic uses the
// openai_chat upstream codec), fixed headers (authentication and configured ones) written on
// every request. Subclasses say where the request goes (request_target, retrieval_target) and
// build headers_ / secrets_ and upstream_options_ (max_completion_tokens) in their make().
//
// Chat routes speak two protocols: Chat Completions (wire_protocol(), what translated traffic
// uses: every OpenAI-compatible server has it) and, unless responses_api_ is off, the Responses
// API, so Responses callers are passed through to /responses and may GET their stored responses.
class OpenAiCompatibleAdapter : public ProviderAdapter {
 public:
  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  bool speaks(protocol::ProtocolId protocol, protocol::Operation operation) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;
  // GET <retrieval_target> for a Responses resource ("/responses/{id}").
  bool write_retrieval_head(const RequestSpec& spec, codec::HeadWriter& head) const override;
  std::span<const std::string> secrets() const override { return secrets_; }
  // max_completion_tokens where this server wants it for translated requests too.
  std::string_view output_limit_field(protocol::ProtocolId protocol) const override;

 protected:
  using ProviderAdapter::ProviderAdapter;

  // Appends the request target (path and query) for `spec` after the request line's method.
  virtual void request_target(const RequestSpec& spec, std::string& target) const = 0;
  // The same for a retrieval: where spec.resource (below the API root) lives on this server.
  virtual void retrieval_target(const RequestSpec& spec, std::string& target) const = 0;
  // Adds the configured `headers` of the provider after the authentication header.
  void add_configured_headers();

  BaseUrl url_;
  std::vector<std::pair<std::string, std::string>> headers_;  // auth + configured headers
  std::vector<std::string> secrets_;
  // The server has the Responses API (POST /responses, GET /responses/{id}).
  bool responses_api_ = true;
};

}  // namespace sluice::providers
