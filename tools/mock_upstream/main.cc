// sluice-mock-upstream: a scriptable fake model provider (OpenAI, Anthropic, Gemini, Bedrock) for
// integration tests, conformance tests and benchmarks. The contract (flags, x-mock-* headers,
// /_mock/*) is in README.md next to this file.

#include <charconv>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "faults.h"
#include "request_handler.h"
#include "server.h"
#include "stats.h"

namespace {

using sluice::mock::HeaderList;

// "127.0.0.1:8080", "[::1]:0", ":8080" (all IPv4 interfaces), "localhost:0".
bool parse_listen(const std::string& text, sluice::mock::ServerOptions& out) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return false;
  }
  std::string host = text.substr(0, colon);
  std::string port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) {
    host = "0.0.0.0";
  } else if (host == "localhost") {
    host = "127.0.0.1";
  }
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      port > 65535) {
    return false;
  }
  out.host = host;
  out.port = static_cast<std::uint16_t>(port);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sluice-mock-upstream: scriptable fake model provider upstream"};
  std::string listen = "127.0.0.1:0";
  sluice::mock::ServerOptions server;
  sluice::mock::MockConfig config;
  // Per-run faults are given as header values and go through the same parser as the
  // x-mock-* headers, so both accept exactly the same syntax.
  struct FaultFlag {
    const char* flag;
    const char* header;
    const char* help;
    std::string value;
  };
  std::vector<FaultFlag> fault_flags = {
      {"--latency-ms", "x-mock-latency-ms", "Delay before the response head (ms)", {}},
      {"--status", "x-mock-status", "Answer with this status (or comma-separated sequence)", {}},
      {"--retry-after", "x-mock-retry-after", "Add Retry-After with this value", {}},
      {"--first-byte-ms", "x-mock-first-byte-ms", "Streams: delay before the first event (ms)", {}},
      {"--stall-after", "x-mock-stall-after", "Stop sending after N content events", {}},
      {"--disconnect-after", "x-mock-disconnect-after", "Close TCP after N content events", {}},
      {"--disconnect-mode", "x-mock-disconnect-mode", "fin (default) or rst", {}},
      {"--events", "x-mock-events", "Content events / words per reply (default 8)", {}},
      {"--pace-ms", "x-mock-pace-ms", "Delay between stream events (ms)", {}},
      {"--embeddings", "x-mock-embeddings", "hash (default) or bag-of-words vectors", {}},
      {"--end-delay-ms",
       "x-mock-end-delay-ms",
       "Streams: delay before the end of the body (ms)",
       {}},
  };

  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0: pick a free port)")
      ->capture_default_str();
  app.add_option("--threads", server.threads, "Worker threads (SO_REUSEPORT acceptors)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  auto* cert = app.add_option("--tls-cert", server.tls_cert, "PEM certificate chain: serve HTTPS")
                   ->check(CLI::ExistingFile);
  auto* key = app.add_option("--tls-key", server.tls_key, "PEM private key for --tls-cert")
                  ->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
  app.add_option("--fixtures", config.fixtures_dir, "Directory for x-mock-fixture")
      ->check(CLI::ExistingDirectory);
  for (auto& ff : fault_flags) {
    app.add_option(ff.flag, ff.value, ff.help);
  }
  auto& aws = config.bedrock_auth;
  auto* key_id = app.add_option("--aws-access-key-id", aws.access_key_id,
                                "Bedrock: require SigV4 signatures made with this access key id");
  auto* secret = app.add_option("--aws-secret-access-key", aws.secret_access_key,
                                "Bedrock: the secret access key of --aws-access-key-id");
  key_id->needs(secret);
  secret->needs(key_id);
  app.add_option("--aws-region", aws.region, "Bedrock: the region signatures must be scoped to")
      ->capture_default_str();
  app.add_option("--aws-bearer-token", aws.bearer_token,
                 "Bedrock: accept (and require) Authorization: Bearer with this API key");
  sluice::mock::GcpAuthConfig gcp;
  app.add_option("--gcp-service-account", gcp.service_account_file,
                 "Vertex AI: play Google's token endpoint (POST .../token) for this service "
                 "account key file and require its tokens on Vertex AI paths")
      ->check(CLI::ExistingFile);
  app.add_option("--gcp-token-lifetime-s", gcp.token_lifetime_s,
                 "Vertex AI: the expires_in of issued tokens")
      ->capture_default_str();
  sluice::mock::StsConfig sts;
  app.add_option("--aws-web-identity-token", sts.web_identity_token,
                 "Bedrock: play AWS STS's AssumeRoleWithWebIdentity for this web identity token "
                 "and accept the temporary keys it issues");
  app.add_option("--aws-sts-lifetime-s", sts.lifetime_s,
                 "Bedrock: how long issued temporary keys live")
      ->capture_default_str();
  app.add_option("--aws-container-token", sts.container_token,
                 "Bedrock: play a container credentials endpoint (GET /v1/credentials, ECS and "
                 "EKS Pod Identity) for this Authorization token and accept the keys it issues");
  app.add_option("--aws-imds-role", sts.imds_role,
                 "Bedrock: play EC2's instance metadata service (IMDSv2) naming this instance "
                 "role and accept the keys it issues");
  CLI11_PARSE(app, argc, argv);
  if (!sts.web_identity_token.empty() || !sts.container_token.empty() || !sts.imds_role.empty()) {
    config.sts = std::make_shared<sluice::mock::StsIssuer>(sts);
  }
  if (!gcp.service_account_file.empty()) {
    auto loaded = sluice::mock::GcpAuth::load(gcp);
    if (!loaded) {
      std::fprintf(stderr, "--gcp-service-account: %s\n", loaded.error().message().c_str());
      return 2;
    }
    config.gcp_auth = std::move(*loaded);
  }
  if ((!aws.access_key_id.empty() && aws.secret_access_key.empty()) || aws.region.empty()) {
    std::fprintf(stderr,
                 "--aws-access-key-id, --aws-secret-access-key, --aws-region: empty value\n");
    return 2;
  }

  spdlog::set_default_logger(spdlog::stderr_color_mt("mock"));

  if (!parse_listen(listen, server)) {
    std::fprintf(stderr, "--listen: expected HOST:PORT, got '%s'\n", listen.c_str());
    return 2;
  }
  HeaderList fault_headers;
  for (const auto& ff : fault_flags) {
    if (!ff.value.empty()) {
      fault_headers.emplace_back(ff.header, ff.value);
    }
  }
  auto defaults = sluice::mock::parse_faults(fault_headers, sluice::mock::Faults{});
  if (!defaults) {
    std::fprintf(stderr, "%s\n", defaults.error().message().c_str());
    return 2;
  }
  config.defaults = std::move(*defaults);

  try {
    sluice::mock::Stats stats;
    sluice::mock::RequestHandler handler(std::move(config), stats);
    return sluice::mock::run_server(server, handler, stats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice-mock-upstream: %s\n", e.what());
    return 1;
  }
}
