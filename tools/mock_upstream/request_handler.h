#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bedrock_auth.h"
#include "faults.h"
#include "gcp_auth.h"
#include "mock_request.h"
#include "prompt_cache.h"
#include "reply.h"
#include "responses_responder.h"
#include "stats.h"
#include "sts_issuer.h"

namespace sluice::mock {

// Run-wide settings from the command line.
struct MockConfig {
  // --fixtures: where x-mock-fixture names are looked up; empty means "no fixtures".
  std::string fixtures_dir;
  // --latency-ms, --status, ...: faults applied when a request has no x-mock-* override.
  Faults defaults;
  // --aws-*: how Bedrock requests are authenticated (not at all by default).
  BedrockAuthConfig bedrock_auth;
  // --gcp-service-account: Google's token endpoint and Vertex AI's token check (null: none).
  std::shared_ptr<GcpAuth> gcp_auth;
  // --aws-web-identity-token: AWS STS's AssumeRoleWithWebIdentity (null: none).
  std::shared_ptr<StsIssuer> sts;
};

// Turns requests into replies. Pure logic, no I/O except reading fixture files; safe to
// call from several threads at once (shared state lives in Stats and the ResponseStore).
class RequestHandler {
 public:
  // `stats` must outlive the handler.
  RequestHandler(MockConfig config, Stats& stats);

  Reply handle(const MockRequest& request) const;

  const MockConfig& config() const { return config_; }

 private:
  Reply handle_control(const MockRequest& request) const;
  Reply handle_api(const MockRequest& request, const Faults& faults, std::uint64_t number) const;
  // Counts how a Bedrock request authenticated and returns its 403, if any.
  std::optional<Error> check_bedrock_auth(const MockRequest& request) const;

  MockConfig config_;
  Stats& stats_;
  BedrockAuth bedrock_auth_;
  // Responses API objects for GET …/responses/{id}; /_mock/reset empties it.
  mutable ResponseStore responses_;
  // The simulated prompt caches of x-mock-prompt-cache; /_mock/reset empties them.
  mutable PromptCache prompt_cache_;
};

}  // namespace sluice::mock
