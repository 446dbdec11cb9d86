#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace sluice::config {

using Millis = std::chrono::milliseconds;

// host:port as written in config; port 0 means "pick a free port" (tests).
struct ListenAddress {
  std::string host = "0.0.0.0";
  std::uint16_t port = 8080;
};

struct Timeouts {
  Millis connect{2000};      // resolve + TCP connect + TLS handshake
  Millis first_byte{60000};  // request fully sent -> response head received
  Millis total{600000};      // whole upstream exchange, streams included
};

struct PoolSettings {
  // Upper bound on open upstream connections to this provider for the whole instance;
  // each worker gets an equal share (at least 1).
  std::uint32_t max_connections = 256;
  // How long a request waits for a free connection before it is shed with 429.
  Millis acquire_timeout{100};
  // Idle keep-alive connections older than this are closed instead of reused.
  Millis idle_timeout{30000};
};

struct TlsSettings {
  bool verify = true;       // never disabled by default; `false` only for labs
  std::string ca_file;      // PEM bundle; empty = system CA store
  std::string server_name;  // SNI / verification name override; empty = URL host
};

enum class Adapter { kOpenAI, kMock };

struct Provider {
  std::string id;
  Adapter adapter = Adapter::kOpenAI;
  // For kOpenAI: scheme://host[:port][/path-prefix], e.g. https://api.openai.com/v1.
  std::string base_url;
  std::string api_key;  // secret: never logged, never serialised back out
  // Extra headers sent on every upstream request (e.g. OpenAI-Organization).
  std::map<std::string, std::string> headers;
  // Caller headers copied to the upstream request. Exact lower-case names or prefixes
  // ending in '*' (e.g. "x-mock-*"). Authorization and hop-by-hop headers never pass.
  std::vector<std::string> forward_headers;
  PoolSettings pool;
  Timeouts timeout;
  TlsSettings tls;
  // For kOpenAI: the field that carries a translated request's output limit (an Anthropic
  // caller's max_tokens). OpenAI's own API rejects `max_tokens` for reasoning models and
  // takes `max_completion_tokens` for every chat model; most OpenAI-compatible servers (vLLM,
  // Ollama, llama.cpp) know only `max_tokens`. Default: max_completion_tokens when the base
  // URL's host is api.openai.com, max_tokens otherwise. Passthrough requests are not touched.
  bool max_completion_tokens = false;
  // For kMock: embedding vector width and the pause between streamed chunks.
  std::uint32_t mock_embedding_dimensions = 8;
  Millis mock_chunk_interval{0};
  // Where this provider was defined ("file.yaml:12"), for messages.
  std::string source;
};

// One concrete upstream a route may send to.
struct Target {
  std::string provider;  // Provider::id
  std::string model;     // model name sent upstream
};

enum class RouteKind { kChat, kEmbeddings };

struct Route {
  std::vector<std::string> aliases;  // model names callers use
  RouteKind kind = RouteKind::kChat;
  std::vector<Target> targets;      // single target for now; fallback arrives with routing
  std::optional<Timeouts> timeout;  // overrides the provider's
  std::string source;
};

struct Key {
  std::string name;        // shown in logs; not secret
  std::string sha256_hex;  // SHA-256 of the secret key, lower-case hex
  // Aliases this key may call; empty = all aliases.
  std::vector<std::string> allowed_aliases;
  std::string source;
};

struct ServerSettings {
  std::uint32_t workers = 0;              // 0 = one per core
  std::uint32_t max_connections = 10000;  // per instance; excess accepted then closed
  std::uint32_t max_header_bytes = 16 * 1024;
  std::uint32_t max_body_bytes = 8 * 1024 * 1024;
  Millis idle_timeout{60000};     // keep-alive: between requests
  Millis request_timeout{30000};  // head + body must arrive within this
  Millis drain_timeout{30000};    // SIGTERM: let in-flight requests finish
  std::uint32_t max_upstream_response_bytes = 64 * 1024 * 1024;  // non-stream bodies
};

struct AccessLogSettings {
  bool enabled = true;
  std::string path;  // empty = stdout
};

// The whole validated configuration. Immutable once built; shared across workers as
// std::shared_ptr<const Config>.
struct Config {
  std::uint64_t version = 0;
  ListenAddress listen;
  ServerSettings server;
  AccessLogSettings access_log;
  bool require_auth = true;  // `auth: none` in config turns it off (local development)
  std::vector<Provider> providers;
  std::vector<Route> routes;
  std::vector<Key> keys;
  std::string source_path;
  // Human-readable notes produced while loading (e.g. "provider openai skipped: OPENAI_API_KEY
  // is not set"). Not errors.
  std::vector<std::string> notes;
};

struct LoadOptions {
  // Lookup for ${VAR} interpolation; defaults to the process environment.
  std::function<std::optional<std::string>(const std::string&)> getenv;
};

// Parses and strictly validates YAML text. `source_name` names the file in messages.
// Every error message starts with "<source_name>:<line>:<column>: ". Throws nothing.
Result<std::shared_ptr<const Config>> load_from_string(const std::string& yaml_text,
                                                       const std::string& source_name,
                                                       const LoadOptions& options = {});
// Reads the file, then load_from_string.
Result<std::shared_ptr<const Config>> load_from_file(const std::string& path,
                                                     const LoadOptions& options = {});

}  // namespace sluice::config
