#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
  // Longest silence between two reads of the response body once it started. A stream that
  // stalls mid-answer fails after this, long before `total`. Reasoning models can think for
  // minutes between chunks, hence the generous default.
  Millis idle{300000};
  Millis total{600000};  // whole upstream exchange, streams included
};

struct PoolSettings {
  // Upper bound on open upstream connections to this provider for the whole instance, shared
  // by its workers (a busy worker may use what the others leave free). A streaming answer holds
  // its connection for its whole length, so the default allows thousands of streams.
  std::uint32_t max_connections = 10000;
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

// What config validation knows about one adapter kind. The adapters declare these
// (providers/registry.h adapter_schemas()); config checks a provider's fields against its
// adapter's schema so a mistake is reported with file:line like any other.
struct AdapterOption {
  enum class Type : std::uint8_t { kString, kUnsigned, kMillis, kBool, kChoice };
  // The field as written under the provider: "max_tokens_field", or "group.name" for a field
  // inside a nested mapping ("mock.embedding_dimensions").
  std::string_view name;
  Type type = Type::kString;
  std::uint64_t min = 0;  // kUnsigned, kMillis (inclusive)
  std::uint64_t max = 0;
  std::span<const std::string_view> choices;  // kChoice
};

struct AdapterSchema {
  std::string_view name;  // the `adapter:` value
  // base_url, api_key and tls are meaningful (the adapter talks to a server).
  bool network = true;
  std::span<const AdapterOption> options;
};

struct Provider {
  std::string id;
  std::string adapter;  // AdapterSchema::name
  // Network adapters: scheme://host[:port][/path-prefix] as configured (normalised), or empty
  // for the adapter's default.
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
  // The adapter's own options that were set, by AdapterOption::name, as validated text:
  // decimal for numbers and durations (milliseconds), "true"/"false", the choice as written.
  std::map<std::string, std::string, std::less<>> options;
  // Where this provider was defined ("file.yaml:12"), for messages.
  std::string source;

  // An option's value, or nullptr when it was not set.
  const std::string* option(std::string_view name) const {
    auto it = options.find(name);
    return it == options.end() ? nullptr : &it->second;
  }
};

// Caller headers that must never reach an upstream, whatever forward_headers says: the
// caller's credentials (Authorization, and x-api-key / api-key which the gateway also accepts
// as key headers), cookies, and the framing and hop-by-hop headers the gateway sets itself.
// `name` is compared case-insensitively.
bool never_forwarded(std::string_view name);
std::span<const std::string_view> never_forwarded_headers();

// One concrete upstream a route may send to.
struct Target {
  std::string provider;  // Provider::id
  std::string model;     // model name sent upstream
  // Embeddings only: targets with the same non-empty vector space return comparable vectors,
  // so one may stand in for another. An embeddings route fails over only between them.
  std::string vector_space;
  std::optional<Timeouts> timeout;  // overrides the route's and the provider's
  std::string source;
};

// One test a `conditional` node makes on a request (docs/routing.md "conditional").
struct Condition {
  enum class Field : std::uint8_t {
    kKey,        // the gateway key's name
    kKeyGroup,   // the gateway key's group ("" when it has none)
    kHeader,     // a request header (`header`, lower case)
    kStream,     // whether the caller asked for a stream
    kMaxTokens,  // the request's output token limit (absent: no numeric test matches)
  };
  enum class Op : std::uint8_t { kEq, kIn, kGt, kGte, kLt, kLte, kExists };
  Field field = Field::kKey;
  std::string header;
  Op op = Op::kEq;
  std::vector<std::string> values;  // kEq (one), kIn
  std::uint64_t number = 0;         // kGt, kGte, kLt, kLte
  bool flag = true;                 // kStream: the value to match; kExists: present or absent
};

// A node of a route's policy tree (docs/routing.md). Leaves are targets; inner nodes decide
// the order in which their children are tried.
struct PolicyNode {
  enum class Kind : std::uint8_t {
    kTarget,       // one target (Route::targets[target])
    kFallback,     // children in order; a failure moves on only when `on_status` allows
    kLoadBalance,  // children ordered by `strategy` per request
    kConditional,  // the first child whose conditions all match; the last child is the default
  };
  enum class Strategy : std::uint8_t {
    kWeighted,   // random, proportional to weight; weight 0 = failover only
    kOrdered,    // in the order written
    kLeastBusy,  // fewest requests in flight first
    kLatency,    // power of two choices on the EWMA of time to first byte
  };
  Kind kind = Kind::kTarget;
  std::size_t target = 0;                   // kTarget
  std::uint32_t weight = 1;                 // this node's share inside a kLoadBalance parent
  Strategy strategy = Strategy::kWeighted;  // kLoadBalance
  // kFallback: the upstream statuses that move on to the next child (failures without a
  // status, such as connect errors and timeouts, always do). Never 400/401/403/404/413/422.
  std::vector<int> on_status;
  // kConditional: per child but the last (the default), the tests that must all pass.
  std::vector<std::vector<Condition>> when;
  std::vector<PolicyNode> children;
  std::string source;  // "file.yaml:12"
};

// Statuses a fallback moves on for when its `on_status` is not given.
std::span<const int> default_fallback_statuses();

// How a route retries: the same target again and the next ones in its policy tree.
struct RetrySettings {
  // Attempts per request in total, the first included; 0 = one per target of the tree.
  std::uint32_t max_attempts = 0;
  // Attempts at one target before the tree moves on (1 = no retry on the same target).
  std::uint32_t per_target_attempts = 1;
  // Full-jitter exponential backoff between attempts at the same target:
  // uniform(0, min(backoff_max, backoff_base * 2^n)).
  Millis backoff_base{100};
  Millis backoff_max{2000};
  // An upstream asking (Retry-After, retry-after-ms) for a longer wait than this is not waited
  // for: the next target is tried instead.
  Millis retry_after_max{5000};
  // Retries at the same target may not exceed this fraction of requests over the sliding
  // window RoutingSettings::budget_window, per target and per instance, plus `budget_burst`
  // retries per window whatever the traffic (moving on to the next target in the tree is not a
  // retry: it spends nothing). The per-instance budget follows the config-wide `routing.retry`
  // values; a route's own values apply to its targets' budgets.
  double budget_ratio = 0.1;
  std::uint32_t budget_burst = 10;
  // Bounds all attempts of a request together, backoffs included; 0 = the longest total
  // timeout among the route's targets.
  Millis deadline{0};
};

// Per target, per instance (docs/routing.md "Circuit breaker").
struct BreakerSettings {
  bool enabled = true;
  double error_rate = 0.5;          // failures / requests over the window that opens it
  std::uint32_t min_requests = 20;  // below this many requests in the window it stays closed
  Millis window{10000};
  Millis open{15000};  // open for this long, then one probe (half-open)
};

struct RoutingSettings {
  RetrySettings retry;  // default for routes without their own
  BreakerSettings breaker;
  // The sliding window retry budgets count requests and retries over (instance-wide, so that a
  // target shared by two routes has one window).
  Millis budget_window{10000};
};

enum class RouteKind { kChat, kEmbeddings };

// A route's ceiling on the output a request may ask for (max_tokens, max_completion_tokens,
// max_output_tokens, maxOutputTokens, whichever the caller's protocol uses).
struct OutputCap {
  enum class Action : std::uint8_t {
    kCap,     // a request asking for more, or for no limit, is sent with the limit
    kRefuse,  // such a request is refused (400 naming the field and the limit)
  };
  std::uint32_t limit = 0;  // 0 = no cap
  Action action = Action::kCap;
};

struct Route {
  std::vector<std::string> aliases;  // model names callers use
  RouteKind kind = RouteKind::kChat;
  std::vector<Target> targets;  // every leaf of `policy`, in the order written
  PolicyNode policy;            // a single target: one kTarget leaf
  RetrySettings retry;
  std::optional<Timeouts> timeout;  // overrides the provider's
  OutputCap max_output_tokens;
  // Overrides server.heartbeat_ms for this route's streams.
  std::optional<Millis> heartbeat;
  std::string source;
};

struct Key {
  // Immutable identity of the key: "config:<name>" for a key of this file, the store's id
  // ("key_" + 16 hex) for a store key (tenancy/key_set.h). What owns per-key state (rate
  // buckets, budget spend, stored Responses): a name can be renamed or reused, an id cannot.
  std::string id;
  std::string name;  // shown in logs; not secret
  // The key group (team, application) the key belongs to: routing conditions, usage records
  // and limits are per group. "" = none.
  std::string group;
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
  // Translated requests carrying a field the target protocol cannot take are rejected (400
  // naming the field) instead of sent without it; passthrough is never affected.
  bool strict_fields = false;
  // A stream with nothing to send for this long gets an SSE comment (`: keep-alive`), so that
  // load balancers' idle timeouts do not cut a model that thinks for minutes. 0 = off.
  Millis heartbeat{15000};
};

struct AccessLogSettings {
  bool enabled = true;
  std::string path;  // empty = stdout
  // Adds request and response bodies to access-log lines (credentials stay redacted). For
  // non-production debugging only: prompts and answers land in the log.
  bool payloads = false;
};

// The admin listener: /metrics, usage queries, and (admission issue) key management. Its own
// address and its own credential, never a model key.
struct AdminSettings {
  bool enabled = false;  // true when `admin:` is present
  ListenAddress listen{"127.0.0.1", 8081};
  std::string key_sha256;  // SHA-256 hex of the admin credential
  // Also answer GET /metrics on the main listener (no credential there: scrapers usually have
  // none; the admin listener's /metrics asks for the admin credential unless metrics_public).
  bool metrics_on_main = false;
  bool metrics_public = false;  // /metrics on the admin listener without the credential
};

// Where usage records (and, later, keys, budgets and prices) are kept.
struct StoreSettings {
  enum class Kind : std::uint8_t { kNone, kSqlite, kPostgres };
  Kind kind = Kind::kNone;
  std::string sqlite_path;   // kSqlite
  std::string postgres_url;  // kPostgres; may hold a password: never logged
};

// The usage sink and the price catalogue.
struct MeteringSettings {
  // Price catalogue YAML; empty = the catalogue built into the binary (prices/default.yaml).
  std::string prices;
  // Append-only spool used while the store is down or slow; empty = "<sqlite path>.spool", or
  // "sluice-usage.spool" in the working directory for PostgreSQL.
  std::string spool;
  std::uint32_t queue_capacity = 65536;   // records waiting for the writer, all workers
  std::uint32_t batch_size = 512;         // records per store transaction
  Millis flush_interval{200};             // longest a record waits before its batch is written
  std::uint32_t max_feature_length = 64;  // x-sluice-feature values longer than this are cut
};

// OpenTelemetry traces over OTLP/HTTP JSON.
struct TraceSettings {
  bool enabled = false;  // true when `traces:` is present
  std::string endpoint;  // e.g. http://127.0.0.1:4318/v1/traces
  std::string service_name = "sluice";
  double sample_ratio = 1.0;            // of requests without a sampled traceparent
  std::uint32_t queue_capacity = 8192;  // spans waiting for export; beyond it spans are dropped
  std::uint32_t batch_size = 512;
  Millis export_interval{1000};
  Millis export_timeout{5000};
  std::vector<std::pair<std::string, std::string>> headers;  // sent to the collector
};

// Rate limits of one layer (a key, a key group, a model alias, a provider): requests and
// tokens per minute, and concurrent requests (key groups and the instance only). 0 = no limit.
// A limit of N per minute is a token bucket of N that refills continuously (N/60 a second), so a
// caller may burst up to N at once and then gets a steady N a minute.
struct RateLimits {
  std::uint64_t rpm = 0;
  std::uint64_t tpm = 0;
  std::uint32_t concurrency = 0;
  std::string source;  // "<file>:<line>"
  bool any() const { return rpm != 0 || tpm != 0 || concurrency != 0; }
};

// Where limiter state lives: in this process (each instance enforces its own limits) or in a
// Redis shared by every instance (limits hold across replicas).
struct StateSettings {
  enum class Backend : std::uint8_t { kLocal, kRedis };
  // What a request gets when Redis does not answer within the timeout (down, slow, refused):
  // admitted (rate limits: a short burst of overspend beats an outage) or refused with 503.
  enum class OnError : std::uint8_t { kFailOpen, kFailClosed };
  Backend backend = Backend::kLocal;
  std::string redis_url;  // kRedis: redis://[:password@]host[:port][/db]; never logged
  std::string redis_host;
  std::uint16_t redis_port = 6379;
  std::string redis_password;  // may be empty
  std::uint32_t redis_db = 0;
  Millis timeout{20};  // the longest a request waits for Redis
  OnError on_error = OnError::kFailOpen;
  std::string key_prefix = "sluice:";  // every Redis key starts with it
};

// The `limits:` section: RPM, TPM and concurrency per key, key group, model alias and
// provider, checked at admission (docs/tenancy.md).
struct LimitSettings {
  RateLimits key;  // every key that has no entry of its own in `keys`
  std::map<std::string, RateLimits, std::less<>> keys;       // by key name
  std::map<std::string, RateLimits, std::less<>> groups;     // by key group
  std::map<std::string, RateLimits, std::less<>> models;     // by alias
  std::map<std::string, RateLimits, std::less<>> providers;  // by provider id (capacity)
  std::uint32_t instance_concurrency = 0;  // requests in admission..finish, this instance
  // A concurrency slot is a lease: if an instance dies holding it, it frees itself after this.
  Millis lease_ttl{300000};
  bool any() const {
    return key.any() || !keys.empty() || !groups.empty() || !models.empty() || !providers.empty() ||
           instance_concurrency != 0;
  }
};

// Keys, key groups and budgets kept in the store (`tenancy:`; docs/tenancy.md). On whenever a
// `store:` is configured, unless `tenancy: { enabled: false }`; without a store there is none.
struct TenancySettings {
  bool enabled = false;
  // How often each instance asks the store whether keys or groups changed (one small query);
  // a revocation reaches every instance within about this long.
  Millis refresh{1000};
  // How often the spend of every budget is re-read from the usage ledger (one grouped query).
  // Between reads an instance adds what its own requests cost.
  Millis spend_refresh{5000};
  // Percentages of a budget at which an event is logged and sent to the webhook, once per
  // period each; increasing, 1..1000.
  std::vector<std::uint32_t> budget_thresholds{80, 100};
  std::string webhook_url;  // "" = no webhook; http:// or https://
  Millis webhook_timeout{2000};
};

// The whole validated configuration. Immutable once built; shared across workers as
// std::shared_ptr<const Config>.
struct Config {
  std::uint64_t version = 0;
  ListenAddress listen;
  ServerSettings server;
  AccessLogSettings access_log;
  AdminSettings admin;
  StoreSettings store;
  MeteringSettings metering;
  TraceSettings traces;
  RoutingSettings routing;
  StateSettings state;
  LimitSettings limits;
  TenancySettings tenancy;
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
  // The adapter kinds a provider may name, with their options. Callers pass
  // providers::adapter_schemas(); with none, every provider is an error.
  std::span<const AdapterSchema> adapters;
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
