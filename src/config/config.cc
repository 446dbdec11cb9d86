#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include <openssl/crypto.h>
#include <yaml-cpp/yaml.h>

#include "config/interpolate.h"
#include "config/scalars.h"
#include "config/yaml_field.h"

namespace sluice::config {

std::span<const int> default_fallback_statuses() {
  static constexpr int kStatuses[] = {408, 429, 500, 502, 503, 504};
  return kStatuses;
}

namespace {

constexpr std::uint64_t kMaxMillis = 86'400'000;  // one day
constexpr std::uint64_t kMaxU32 = 0xffffffffULL;
constexpr std::size_t kMinKeyLength = 16;
constexpr std::size_t kMaxNameLength = 256;
constexpr std::uintmax_t kMaxFileBytes = 16 * 1024 * 1024;

// Headers that describe the connection or the message framing: the gateway sets these
// itself, so configuring or forwarding them would corrupt the upstream request.
constexpr std::string_view kFramingHeaders[] = {"host",       "content-length", "transfer-encoding",
                                                "connection", "keep-alive",     "upgrade",
                                                "te",         "trailer",        "proxy-connection"};
// Caller headers that must never reach an upstream: the caller's gateway key (in every header
// the gateway accepts it from) and cookies, plus the framing headers above.
constexpr std::string_view kNeverForwarded[] = {"authorization",
                                                "x-api-key",
                                                "api-key",
                                                "host",
                                                "content-length",
                                                "connection",
                                                "transfer-encoding",
                                                "cookie",
                                                "keep-alive",
                                                "upgrade",
                                                "te",
                                                "trailer",
                                                "proxy-connection",
                                                "proxy-authorization",
                                                "expect"};

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string join(const std::vector<std::string>& parts, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) {
      out += separator;
    }
    out += part;
  }
  return out;
}

// Lists at most a handful of candidates so a typo in a large config stays readable.
std::string known_list(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 10;
  if (names.empty()) {
    return "none defined";
  }
  std::vector<std::string> shown(
      names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), kShown)));
  std::string out = join(shown);
  if (names.size() > kShown) {
    out += ", ... (" + std::to_string(names.size() - kShown) + " more)";
  }
  return out;
}

bool is_provider_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxNameLength) {
    return false;
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(id.front())) {
    return false;
  }
  return std::all_of(id.begin(), id.end(),
                     [&](char c) { return alnum(c) || c == '_' || c == '.' || c == '-'; });
}

// A plaintext secret that must not outlive hashing.
class Wiped {
 public:
  explicit Wiped(std::string value) : value_(std::move(value)) {}
  ~Wiped() { OPENSSL_cleanse(value_.data(), value_.size()); }
  Wiped(const Wiped&) = delete;
  Wiped& operator=(const Wiped&) = delete;
  const std::string& get() const { return value_; }

 private:
  std::string value_;
};

// A requires_env variable that is unset (or set but empty).
struct UnmetEnv {
  std::string name;
  bool empty = false;
};

// "A is not set, B is empty" (provider notes) or "A not set, B empty" (route notes).
std::string describe(const std::vector<UnmetEnv>& unmet, std::string_view verb) {
  std::vector<std::string> parts;
  for (const UnmetEnv& u : unmet) {
    parts.push_back(u.name + std::string(verb) + (u.empty ? "empty" : "not set"));
  }
  return join(parts);
}

// Every provider in the file, skipped ones included (routes may name either).
struct DeclaredProvider {
  std::string id;
  std::string where;
  std::vector<UnmetEnv> unmet;  // empty = active
  std::size_t index = 0;        // into Config::providers when active
};

// Every alias in the file, skipped routes included.
struct DeclaredAlias {
  std::string path;  // "routes[2]"
  std::string where;
};

class Loader {
 public:
  Loader(const LoadContext& context, std::span<const AdapterSchema> adapters)
      : context_(context), adapters_(adapters) {
    provider_keys_ = {"id",      "adapter",         "base_url", "api_key", "requires_env",
                      "headers", "forward_headers", "pool",     "timeout", "tls"};
    for (const AdapterSchema& a : adapters_) {
      for (const AdapterOption& o : a.options) {
        const std::string_view top = o.name.substr(0, o.name.find('.'));
        if (std::find(provider_keys_.begin(), provider_keys_.end(), top) == provider_keys_.end()) {
          provider_keys_.push_back(top);
        }
      }
    }
  }

  std::shared_ptr<const Config> load(const YamlField& root) {
    const YamlMap top = root.map({"version", "listen", "server", "access_log", "admin", "store",
                                  "metering", "traces", "auth", "routing", "providers", "routes",
                                  "keys", "state", "limits", "tenancy"});
    config_.source_path = context_.source_name;
    const YamlField version = top.required("version");
    config_.version = version.unsigned_in(0, std::numeric_limits<std::uint64_t>::max());
    if (config_.version == 0) {
      version.fail("must be at least 1");
    }
    if (auto listen = top.get("listen")) {
      auto address = parse_listen_address(listen->text());
      if (!address) {
        listen->fail(address.error().message());
      }
      config_.listen = std::move(*address);
    }
    if (auto server = top.get("server")) {
      load_server(*server);
    }
    if (auto access_log = top.get("access_log")) {
      load_access_log(*access_log);
    }
    if (auto admin = top.get("admin")) {
      load_admin(*admin);
    }
    if (auto store = top.get("store")) {
      load_store(*store);
    }
    if (auto metering = top.get("metering")) {
      load_metering(*metering);
    }
    load_tenancy(top.get("tenancy"));
    if (auto traces = top.get("traces")) {
      load_traces(*traces);
    }
    if (auto auth = top.get("auth")) {
      const std::string mode = auth->text();
      if (mode == "required") {
        config_.require_auth = true;
      } else if (mode == "none") {
        config_.require_auth = false;
      } else {
        auth->fail("expected \"required\" or \"none\", got " + in_quotes(mode));
      }
    }

    const YamlField providers = top.required("providers");
    const std::vector<YamlField> provider_items = providers.items();
    if (provider_items.empty()) {
      providers.fail("at least one provider is required");
    }
    for (const YamlField& item : provider_items) {
      load_provider(item);
    }

    if (auto routing = top.get("routing")) {
      load_routing(*routing);
    }
    const YamlField routes = top.required("routes");
    const std::vector<YamlField> route_items = routes.items();
    if (route_items.empty()) {
      routes.fail("at least one route is required");
    }
    for (const YamlField& item : route_items) {
      load_route(item);
    }

    std::optional<YamlField> keys = top.get("keys");
    if (keys) {
      for (const YamlField& item : keys->items()) {
        load_key(item);
      }
    }
    if (config_.require_auth && config_.keys.empty() && !config_.tenancy.enabled) {
      const std::string message = "no keys configured; add keys or set auth: none";
      if (keys) {
        keys->fail(message);
      }
      if (auto auth = top.get("auth")) {
        auth->fail_as("keys", message);
      }
      root.fail_as("keys", message);
    }
    if (auto state = top.get("state")) {
      load_state(*state);
    }
    if (auto limits = top.get("limits")) {
      load_limits(*limits);  // after keys, routes and providers: it names them
    }
    if (!config_.require_auth) {
      config_.notes.push_back(
          "auth is disabled (auth: none): every caller is accepted without a key; use only for "
          "local development");
    }
    if (config_.routes.empty()) {
      config_.notes.push_back("no routes are active: every model request will be answered 404");
    }
    return std::make_shared<const Config>(std::move(config_));
  }

 private:
  const AdapterSchema* find_adapter(std::string_view name) const {
    for (const AdapterSchema& a : adapters_) {
      if (a.name == name) {
        return &a;
      }
    }
    return nullptr;
  }

  std::string adapter_names() const {
    std::vector<std::string> names;
    for (const AdapterSchema& a : adapters_) {
      names.emplace_back(a.name);
    }
    std::sort(names.begin(), names.end());
    return names.empty() ? "none are built in" : join(names);
  }

  static std::string_view group_of(std::string_view option) {
    return option.substr(0, option.find('.'));
  }

  // A provider field that belongs to other adapters' options fails here, naming them.
  void check_option_groups(const YamlMap& m, const AdapterSchema& schema) const {
    for (std::string_view key : provider_keys_) {
      auto f = m.get(key);
      if (!f) {
        continue;
      }
      bool mine = false;
      std::vector<std::string> owners;
      for (const AdapterSchema& a : adapters_) {
        for (const AdapterOption& o : a.options) {
          if (group_of(o.name) == key) {
            if (&a == &schema) {
              mine = true;
            } else if (std::find(owners.begin(), owners.end(), a.name) == owners.end()) {
              owners.emplace_back(a.name);
            }
          }
        }
      }
      if (!mine && !owners.empty()) {
        f->fail("only valid for adapter " + join(owners, " or "));
      }
    }
  }

  // Reads the options `schema` declares, typed and range-checked, into p.options.
  void load_options(const YamlMap& m, const AdapterSchema& schema, Provider& p) const {
    // Nested groups first: their mapping must hold only this adapter's fields.
    std::vector<std::string_view> groups;
    for (const AdapterOption& o : schema.options) {
      const std::size_t dot = o.name.find('.');
      if (dot != std::string_view::npos &&
          std::find(groups.begin(), groups.end(), o.name.substr(0, dot)) == groups.end()) {
        groups.push_back(o.name.substr(0, dot));
      }
    }
    for (std::string_view group : groups) {
      auto g = m.get(group);
      if (!g) {
        continue;
      }
      std::vector<std::string_view> names;
      for (const AdapterOption& o : schema.options) {
        if (group_of(o.name) == group && o.name.size() > group.size()) {
          names.push_back(o.name.substr(group.size() + 1));
        }
      }
      const YamlMap inner = g->map(names);
      for (const AdapterOption& o : schema.options) {
        if (group_of(o.name) == group && o.name.size() > group.size()) {
          if (auto f = inner.get(o.name.substr(group.size() + 1))) {
            p.options.emplace(std::string(o.name), option_value(*f, o));
          }
        }
      }
    }
    for (const AdapterOption& o : schema.options) {
      if (o.name.find('.') == std::string_view::npos) {
        if (auto f = m.get(o.name)) {
          p.options.emplace(std::string(o.name), option_value(*f, o));
        }
      }
    }
  }

  static std::string option_value(const YamlField& f, const AdapterOption& o) {
    switch (o.type) {
      case AdapterOption::Type::kUnsigned:
        return std::to_string(f.unsigned_in(o.min, o.max));
      case AdapterOption::Type::kMillis:
        return std::to_string(f.millis_in(o.min, o.max).count());
      case AdapterOption::Type::kBool:
        return f.boolean() ? "true" : "false";
      case AdapterOption::Type::kChoice: {
        std::string v = f.text();
        if (std::find(o.choices.begin(), o.choices.end(), v) == o.choices.end()) {
          std::vector<std::string> expected(o.choices.begin(), o.choices.end());
          f.fail("unknown value " + in_quotes(v) + " (expected: " + join(expected) + ")");
        }
        return v;
      }
      case AdapterOption::Type::kString:
        break;
    }
    return f.text();
  }

  void load_server(const YamlField& field) {
    const YamlMap m = field.map({"workers", "max_connections", "max_header_bytes", "max_body_bytes",
                                 "idle_timeout_ms", "request_timeout_ms", "drain_timeout_ms",
                                 "max_upstream_response_bytes", "strict_fields", "heartbeat_ms"});
    ServerSettings& s = config_.server;
    if (auto f = m.get("workers")) {
      s.workers = static_cast<std::uint32_t>(f->unsigned_in(0, 256));
    }
    if (auto f = m.get("max_connections")) {
      s.max_connections = static_cast<std::uint32_t>(f->unsigned_in(1, 10'000'000));
    }
    if (auto f = m.get("max_header_bytes")) {
      s.max_header_bytes = static_cast<std::uint32_t>(f->size_in(1024, 1024 * 1024));
    }
    if (auto f = m.get("max_body_bytes")) {
      s.max_body_bytes = static_cast<std::uint32_t>(f->size_in(1024, kMaxU32));
    }
    if (auto f = m.get("idle_timeout_ms")) {
      s.idle_timeout = f->millis_in(1, kMaxMillis);
    }
    if (auto f = m.get("request_timeout_ms")) {
      s.request_timeout = f->millis_in(1, kMaxMillis);
    }
    if (auto f = m.get("drain_timeout_ms")) {
      s.drain_timeout = f->millis_in(0, kMaxMillis);
    }
    if (auto f = m.get("max_upstream_response_bytes")) {
      s.max_upstream_response_bytes = static_cast<std::uint32_t>(f->size_in(1024, kMaxU32));
    }
    if (auto f = m.get("strict_fields")) {
      s.strict_fields = f->boolean();
    }
    if (auto f = m.get("heartbeat_ms")) {
      s.heartbeat = f->millis_in(0, kMaxMillis);
    }
  }

  void load_access_log(const YamlField& field) {
    const YamlMap m = field.map({"enabled", "path", "payloads"});
    if (auto f = m.get("enabled")) {
      config_.access_log.enabled = f->boolean();
    }
    if (auto f = m.get("path")) {
      config_.access_log.path = f->text();
    }
    if (auto f = m.get("payloads")) {
      config_.access_log.payloads = f->boolean();
      if (config_.access_log.payloads) {
        config_.notes.push_back(
            "access_log.payloads is on: prompts and answers are written to the access log "
            "(not for production)");
      }
    }
  }

  void load_admin(const YamlField& field) {
    const YamlMap m =
        field.map({"listen", "key", "key_sha256", "metrics_on_main", "metrics_public"});
    AdminSettings& a = config_.admin;
    a.enabled = true;
    if (auto f = m.get("listen")) {
      auto address = parse_listen_address(f->text());
      if (!address) {
        f->fail(address.error().message());
      }
      a.listen = std::move(*address);
    }
    const std::optional<YamlField> secret = m.get("key");
    const std::optional<YamlField> digest = m.get("key_sha256");
    if (secret && digest) {
      digest->fail("set either key or key_sha256, not both");
    }
    if (!secret && !digest) {
      field.fail("missing key: the admin listener needs its own credential (key or key_sha256)");
    }
    if (secret) {
      const Wiped plaintext(secret->text());
      if (plaintext.get().size() < kMinKeyLength || !is_visible_ascii(plaintext.get())) {
        secret->fail("the admin key needs at least " + std::to_string(kMinKeyLength) +
                     " visible ASCII characters without spaces (value not shown)");
      }
      a.key_sha256 = sha256_hex(plaintext.get());
    } else {
      const std::string hex = digest->text();
      if (!is_sha256_hex(hex)) {
        digest->fail("expected 64 hexadecimal digits (a SHA-256 digest; value not shown)");
      }
      a.key_sha256 = to_lower(hex);
    }
    if (auto f = m.get("metrics_on_main")) {
      a.metrics_on_main = f->boolean();
    }
    if (auto f = m.get("metrics_public")) {
      a.metrics_public = f->boolean();
    }
  }

  void load_store(const YamlField& field) {
    StoreSettings& s = config_.store;
    if (!field.is_map()) {
      const std::string text = field.text();
      if (text != "none") {
        field.fail("expected none, {sqlite: PATH} or {postgres: URL}");
      }
      return;
    }
    const YamlMap m = field.map({"sqlite", "postgres"});
    const std::optional<YamlField> sqlite = m.get("sqlite");
    const std::optional<YamlField> postgres = m.get("postgres");
    if (sqlite && postgres) {
      postgres->fail("set either sqlite or postgres, not both");
    }
    if (sqlite) {
      s.kind = StoreSettings::Kind::kSqlite;
      s.sqlite_path = sqlite->text();
      if (s.sqlite_path.empty()) {
        sqlite->fail("empty path");
      }
    } else if (postgres) {
      s.kind = StoreSettings::Kind::kPostgres;
      s.postgres_url = postgres->text();
      if (!s.postgres_url.starts_with("postgresql://") &&
          !s.postgres_url.starts_with("postgres://")) {
        postgres->fail("expected a postgresql:// URL (value not shown)");
      }
    } else {
      field.fail("expected none, {sqlite: PATH} or {postgres: URL}");
    }
  }

  void load_metering(const YamlField& field) {
    const YamlMap m = field.map({"prices", "spool", "queue_capacity", "batch_size",
                                 "flush_interval_ms", "max_feature_length"});
    MeteringSettings& s = config_.metering;
    if (auto f = m.get("prices")) {
      s.prices = f->text();
    }
    if (auto f = m.get("spool")) {
      s.spool = f->text();
    }
    if (auto f = m.get("queue_capacity")) {
      s.queue_capacity = static_cast<std::uint32_t>(f->unsigned_in(64, 1u << 24));
    }
    if (auto f = m.get("batch_size")) {
      s.batch_size = static_cast<std::uint32_t>(f->unsigned_in(1, 10000));
    }
    if (auto f = m.get("flush_interval_ms")) {
      s.flush_interval = f->millis_in(1, 60000);
    }
    if (auto f = m.get("max_feature_length")) {
      s.max_feature_length = static_cast<std::uint32_t>(f->unsigned_in(1, 256));
    }
  }

  void load_traces(const YamlField& field) {
    const YamlMap m =
        field.map({"endpoint", "service_name", "sample_ratio", "queue_capacity", "batch_size",
                   "export_interval_ms", "export_timeout_ms", "headers"});
    TraceSettings& t = config_.traces;
    t.enabled = true;
    const YamlField endpoint = m.required("endpoint");
    t.endpoint = endpoint.text();
    if (!t.endpoint.starts_with("http://") && !t.endpoint.starts_with("https://")) {
      endpoint.fail("expected an http:// or https:// URL of an OTLP/HTTP traces endpoint");
    }
    if (auto f = m.get("service_name")) {
      t.service_name = f->text();
      if (t.service_name.empty()) {
        f->fail("empty service name");
      }
    }
    if (auto f = m.get("sample_ratio")) {
      t.sample_ratio = ratio(*f, 0.0, 1.0);
    }
    if (auto f = m.get("queue_capacity")) {
      t.queue_capacity = static_cast<std::uint32_t>(f->unsigned_in(16, 1u << 22));
    }
    if (auto f = m.get("batch_size")) {
      t.batch_size = static_cast<std::uint32_t>(f->unsigned_in(1, 8192));
    }
    if (auto f = m.get("export_interval_ms")) {
      t.export_interval = f->millis_in(10, 600000);
    }
    if (auto f = m.get("export_timeout_ms")) {
      t.export_timeout = f->millis_in(10, 600000);
    }
    if (auto f = m.get("headers")) {
      for (auto& [name, value] : f->entries()) {
        const std::string header = name.literal_text();
        if (!is_header_name(header)) {
          name.fail("invalid header name " + in_quotes(header));
        }
        t.headers.emplace_back(header, value.text());
      }
    }
  }

  // tenancy: { enabled, refresh_ms, spend_refresh_ms, budget_thresholds,
  //            budget_webhook: { url, timeout_ms } }; after store (it needs one).
  void load_tenancy(const std::optional<YamlField>& field) {
    TenancySettings& t = config_.tenancy;
    const bool has_store = config_.store.kind != StoreSettings::Kind::kNone;
    t.enabled = has_store;
    if (!field) {
      return;
    }
    const YamlMap m = field->map(
        {"enabled", "refresh_ms", "spend_refresh_ms", "budget_thresholds", "budget_webhook"});
    if (auto f = m.get("enabled")) {
      t.enabled = f->boolean();
      if (t.enabled && !has_store) {
        f->fail(
            "keys and budgets in the store need a store: set store: { sqlite: PATH } or "
            "{ postgres: URL }");
      }
    } else if (!has_store) {
      field->fail(
          "keys and budgets in the store need a store: set store: { sqlite: PATH } or "
          "{ postgres: URL }");
    }
    if (auto f = m.get("refresh_ms")) {
      t.refresh = f->millis_in(50, 600000);
    }
    if (auto f = m.get("spend_refresh_ms")) {
      t.spend_refresh = f->millis_in(100, 3600000);
    }
    if (auto f = m.get("budget_thresholds")) {
      t.budget_thresholds.clear();
      const std::vector<YamlField> items = f->items();
      if (items.empty()) {
        f->fail("list at least one percentage (e.g. [80, 100])");
      }
      for (const YamlField& item : items) {
        const auto percent = static_cast<std::uint32_t>(item.unsigned_in(1, 1000));
        if (!t.budget_thresholds.empty() && percent <= t.budget_thresholds.back()) {
          item.fail("thresholds must increase (" + std::to_string(percent) + " after " +
                    std::to_string(t.budget_thresholds.back()) + ")");
        }
        t.budget_thresholds.push_back(percent);
      }
    }
    if (auto f = m.get("budget_webhook")) {
      const YamlMap w = f->map({"url", "timeout_ms"});
      const YamlField url = w.required("url");
      t.webhook_url = url.text();
      if ((!t.webhook_url.starts_with("http://") && !t.webhook_url.starts_with("https://")) ||
          !is_visible_ascii(t.webhook_url)) {
        url.fail("expected an http:// or https:// URL");
      }
      if (auto g = w.get("timeout_ms")) {
        t.webhook_timeout = g->millis_in(10, 60000);
      }
    }
  }

  // state: { backend: local } or state: { redis: { url, timeout_ms, on_error, key_prefix } }
  void load_state(const YamlField& field) {
    const YamlMap m = field.map({"backend", "redis"});
    StateSettings& s = config_.state;
    const std::optional<YamlField> backend = m.get("backend");
    const std::optional<YamlField> redis = m.get("redis");
    if (backend) {
      const std::string name = backend->text();
      if (name == "redis") {
        if (!redis) {
          backend->fail("backend redis needs a redis: { url: ... } section");
        }
      } else if (name != "local") {
        backend->fail("expected local or redis, got " + in_quotes(name));
      } else if (redis) {
        redis->fail("backend is local: remove redis, or set backend: redis");
      }
    }
    if (!redis) {
      if (!backend) {
        field.fail("expected backend: local or redis: { url: ... }");
      }
      return;
    }
    const YamlMap r = redis->map({"url", "timeout_ms", "on_error", "key_prefix"});
    s.backend = StateSettings::Backend::kRedis;
    const YamlField url = r.required("url");
    s.redis_url = url.text();
    if (!parse_redis_url(s)) {
      url.fail("expected redis://[:password@]host[:port][/db] (value not shown)");
    }
    if (auto f = r.get("timeout_ms")) {
      s.timeout = f->millis_in(1, 1000);
    }
    if (auto f = r.get("on_error")) {
      const std::string policy = f->text();
      if (policy == "fail_open") {
        s.on_error = StateSettings::OnError::kFailOpen;
      } else if (policy == "fail_closed") {
        s.on_error = StateSettings::OnError::kFailClosed;
      } else {
        f->fail("expected fail_open or fail_closed, got " + in_quotes(policy));
      }
    }
    if (auto f = r.get("key_prefix")) {
      s.key_prefix = f->text();
      if (s.key_prefix.size() > 64 || !is_visible_ascii(s.key_prefix) ||
          s.key_prefix.find_first_of("{}") != std::string::npos) {
        f->fail("key_prefix must be up to 64 visible characters without spaces or braces");
      }
    }
  }

  // redis://[:password@]host[:port][/db] into host, port, password and db; false when malformed.
  static bool parse_redis_url(StateSettings& s) {
    constexpr std::string_view kScheme = "redis://";
    std::string_view rest = s.redis_url;
    if (!rest.starts_with(kScheme)) {
      return false;
    }
    rest.remove_prefix(kScheme.size());
    if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
      std::string_view user_info = rest.substr(0, at);
      rest.remove_prefix(at + 1);
      const std::size_t colon = user_info.find(':');
      s.redis_password =
          std::string(colon == std::string_view::npos ? user_info : user_info.substr(colon + 1));
    }
    std::string_view authority = rest.substr(0, rest.find('/'));
    if (authority.size() < rest.size()) {
      const std::string_view db = rest.substr(authority.size() + 1);
      if (!db.empty()) {
        if (db.size() > 2 || db.find_first_not_of("0123456789") != std::string_view::npos) {
          return false;
        }
        s.redis_db = static_cast<std::uint32_t>(std::stoul(std::string(db)));
      }
    }
    if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
      const std::string_view port = authority.substr(colon + 1);
      if (port.empty() || port.size() > 5 ||
          port.find_first_not_of("0123456789") != std::string_view::npos) {
        return false;
      }
      const unsigned long value = std::stoul(std::string(port));
      if (value == 0 || value > 65535) {
        return false;
      }
      s.redis_port = static_cast<std::uint16_t>(value);
      authority = authority.substr(0, colon);
    }
    if (authority.empty() || !is_visible_ascii(authority)) {
      return false;
    }
    s.redis_host = std::string(authority);
    return true;
  }

  // One layer's limits; `concurrency` only where the layer has slots (groups, the instance).
  RateLimits rate_limits(const YamlField& field, bool concurrency) const {
    const YamlMap m =
        concurrency ? field.map({"rpm", "tpm", "concurrency"}) : field.map({"rpm", "tpm"});
    RateLimits limits;
    limits.source = field.where();
    if (auto f = m.get("rpm")) {
      limits.rpm = f->unsigned_in(1, 1'000'000'000);
    }
    if (auto f = m.get("tpm")) {
      limits.tpm = f->unsigned_in(1, 1'000'000'000'000);
    }
    if (auto f = m.get("concurrency")) {
      limits.concurrency = static_cast<std::uint32_t>(f->unsigned_in(1, 1'000'000));
    }
    if (!limits.any()) {
      field.fail(concurrency ? "set at least one of rpm, tpm, concurrency"
                             : "set at least one of rpm, tpm");
    }
    return limits;
  }

  // A map of named layers (`keys`, `groups`, `models`, `providers`); `known` says whether a
  // name exists in this config, `what` names the kind for the message.
  void load_named_limits(const YamlField& field, std::string_view what, bool concurrency,
                         const std::function<bool(const std::string&)>& known,
                         std::map<std::string, RateLimits, std::less<>>& into) const {
    for (auto& [name, value] : field.entries()) {
      const std::string id = name.literal_text();
      if (!known(id)) {
        name.fail("no " + std::string(what) + " " + in_quotes(id) + " in this config");
      }
      into.emplace(id, rate_limits(value, concurrency));
    }
  }

  void load_limits(const YamlField& field) {
    const YamlMap m =
        field.map({"key", "keys", "groups", "models", "providers", "instance", "lease_ttl_ms"});
    LimitSettings& l = config_.limits;
    if (auto f = m.get("key")) {
      l.key = rate_limits(*f, false);
    }
    if (auto f = m.get("keys")) {
      load_named_limits(
          *f, "key named", false,
          [&](const std::string& name) {
            // Keys in the store are not known here: any name goes when tenancy is on.
            return config_.tenancy.enabled ||
                   std::any_of(config_.keys.begin(), config_.keys.end(),
                               [&](const Key& k) { return k.name == name; });
          },
          l.keys);
    }
    if (auto f = m.get("groups")) {
      load_named_limits(
          *f, "key in group", true,
          [&](const std::string& name) {
            return config_.tenancy.enabled ||
                   std::any_of(config_.keys.begin(), config_.keys.end(),
                               [&](const Key& k) { return k.group == name; });
          },
          l.groups);
    }
    if (auto f = m.get("models")) {
      load_named_limits(
          *f, "route alias", false,
          [&](const std::string& name) { return aliases_.find(name) != aliases_.end(); }, l.models);
    }
    if (auto f = m.get("providers")) {
      load_named_limits(
          *f, "provider", false,
          [&](const std::string& name) {
            return std::any_of(providers_.begin(), providers_.end(),
                               [&](const DeclaredProvider& p) { return p.id == name; });
          },
          l.providers);
    }
    if (auto f = m.get("instance")) {
      const YamlMap i = f->map({"concurrency"});
      l.instance_concurrency =
          static_cast<std::uint32_t>(i.required("concurrency").unsigned_in(1, 10'000'000));
    }
    if (auto f = m.get("lease_ttl_ms")) {
      l.lease_ttl = f->millis_in(1000, 86'400'000);
    }
  }

  void load_provider(const YamlField& field) {
    const YamlMap m = field.map(provider_keys_);
    DeclaredProvider declared;
    declared.where = field.where();

    const YamlField id_field = m.required("id");
    declared.id = id_field.text();
    if (!is_provider_id(declared.id)) {
      id_field.fail("invalid provider id " + in_quotes(declared.id) +
                    " (use lower-case letters, digits, '_', '.', '-'; start with a letter or "
                    "digit)");
    }
    for (const DeclaredProvider& other : providers_) {
      if (other.id == declared.id) {
        id_field.fail("duplicate provider id " + in_quotes(declared.id) + " (first defined at " +
                      other.where + ")");
      }
    }

    const YamlField adapter_field = m.required("adapter");
    const std::string adapter_name = adapter_field.text();
    const AdapterSchema* schema = find_adapter(adapter_name);
    if (schema == nullptr) {
      adapter_field.fail("unknown adapter " + in_quotes(adapter_name) +
                         " (expected: " + adapter_names() + ")");
    }
    // Checked before skipping: these mistakes do not depend on the environment.
    if (!schema->network) {
      for (std::string_view name : {"base_url", "api_key", "tls"}) {
        if (auto f = m.get(name)) {
          f->fail("only valid for adapters that connect to a server (the " + adapter_name +
                  " adapter answers in-process)");
        }
      }
    }
    check_option_groups(m, *schema);
    if (auto f = m.get("requires_env")) {
      for (const YamlField& item : f->one_or_many()) {
        // Variable names, not values: taken literally.
        const std::string name = item.literal_text();
        if (!is_env_name(name)) {
          item.fail("invalid environment variable name " + in_quotes(name));
        }
        const std::optional<std::string> value = context_.getenv(name);
        if (!value || value->empty()) {
          declared.unmet.push_back(UnmetEnv{name, value.has_value()});
        }
      }
    }
    if (!declared.unmet.empty()) {
      config_.notes.push_back("provider " + declared.id +
                              " skipped: " + describe(declared.unmet, " is "));
      providers_.push_back(std::move(declared));
      return;
    }

    Provider p;
    p.id = declared.id;
    p.adapter = adapter_name;
    p.source = declared.where;
    if (schema->network) {
      if (auto f = m.get("base_url")) {
        auto url = normalize_base_url(f->text());
        if (!url) {
          f->fail(url.error().message());
        }
        p.base_url = std::move(*url);
      }
      if (auto f = m.get("api_key")) {
        p.api_key = f->text();
        if (std::any_of(p.api_key.begin(), p.api_key.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
          f->fail("contains control characters (value not shown)");
        }
      }
    }
    if (auto f = m.get("headers")) {
      load_headers(*f, p);
    }
    if (auto f = m.get("forward_headers")) {
      load_forward_headers(*f, p);
    }
    if (auto f = m.get("pool")) {
      load_pool(*f, p.pool);
    }
    if (auto f = m.get("timeout")) {
      p.timeout = load_timeouts(*f, p.timeout);
    }
    if (auto f = m.get("tls")) {
      load_tls(*f, p);
    }
    load_options(m, *schema, p);
    declared.index = config_.providers.size();
    config_.providers.push_back(std::move(p));
    providers_.push_back(std::move(declared));
  }

  void load_headers(const YamlField& field, Provider& p) {
    std::set<std::string> seen;
    for (const auto& [key, value] : field.entries()) {
      const std::string name = key.literal_text();
      const std::string lower = to_lower(name);
      if (!is_header_name(name)) {
        key.fail("not a valid HTTP header name");
      }
      if (std::find(std::begin(kFramingHeaders), std::end(kFramingHeaders), lower) !=
          std::end(kFramingHeaders)) {
        key.fail("the gateway sets this header itself; it cannot be configured");
      }
      if (lower == "authorization" && !p.api_key.empty()) {
        key.fail("conflicts with api_key (which is sent as Authorization: Bearer); set only one");
      }
      if (!seen.insert(lower).second) {
        key.fail("duplicate header (names are case-insensitive)");
      }
      // Header values often carry credentials: never echo them.
      std::string text = value.text();
      if (std::any_of(text.begin(), text.end(),
                      [](char c) { return c == '\r' || c == '\n' || c == '\0'; })) {
        value.fail("header value contains a line break or NUL (value not shown)");
      }
      p.headers.emplace(name, std::move(text));
    }
  }

  void load_forward_headers(const YamlField& field, Provider& p) {
    for (const YamlField& item : field.items()) {
      const std::string pattern = to_lower(item.text());
      const bool prefix = !pattern.empty() && pattern.back() == '*';
      const std::string_view stem =
          prefix ? std::string_view(pattern).substr(0, pattern.size() - 1) : pattern;
      if (pattern == "*") {
        item.fail(
            "\"*\" would forward every header, including credentials; list names or "
            "prefixes such as \"x-trace-*\"");
      }
      if (!is_header_name(stem) || stem.find('*') != std::string_view::npos) {
        item.fail("invalid header pattern " + in_quotes(pattern) +
                  " (a header name, or a prefix ending in '*'; '*' only as the last character)");
      }
      for (std::string_view forbidden : kNeverForwarded) {
        const bool hit = prefix ? forbidden.substr(0, stem.size()) == stem : forbidden == stem;
        if (hit) {
          item.fail(prefix ? in_quotes(pattern) + " would match " + in_quotes(forbidden) +
                                 ", which is never forwarded"
                           : in_quotes(pattern) + " is never forwarded");
        }
      }
      if (std::find(p.forward_headers.begin(), p.forward_headers.end(), pattern) !=
          p.forward_headers.end()) {
        item.fail("duplicate entry " + in_quotes(pattern));
      }
      p.forward_headers.push_back(pattern);
    }
  }

  void load_pool(const YamlField& field, PoolSettings& pool) {
    const YamlMap m = field.map({"max_connections", "acquire_timeout_ms", "idle_timeout_ms"});
    if (auto f = m.get("max_connections")) {
      pool.max_connections = static_cast<std::uint32_t>(f->unsigned_in(1, 1'000'000));
    }
    if (auto f = m.get("acquire_timeout_ms")) {
      pool.acquire_timeout = f->millis_in(0, kMaxMillis);
    }
    if (auto f = m.get("idle_timeout_ms")) {
      pool.idle_timeout = f->millis_in(1, kMaxMillis);
    }
  }

  // Reads a timeout block over `base` (fields not given keep base's values) and checks the
  // result. `check` is false for skipped routes, whose provider values are unknown.
  Timeouts load_timeouts(const YamlField& field, Timeouts base, bool check = true) {
    const YamlMap m = field.map({"connect_ms", "first_byte_ms", "idle_ms", "total_ms"});
    if (auto f = m.get("connect_ms")) {
      base.connect = f->millis_in(1, kMaxMillis);
    }
    if (auto f = m.get("first_byte_ms")) {
      base.first_byte = f->millis_in(1, kMaxMillis);
    }
    if (auto f = m.get("idle_ms")) {
      base.idle = f->millis_in(1, kMaxMillis);
    }
    if (auto f = m.get("total_ms")) {
      base.total = f->millis_in(1, kMaxMillis);
    }
    if (check && base.first_byte > base.total) {
      const std::optional<YamlField> at =
          m.has("first_byte_ms") ? m.get("first_byte_ms") : m.get("total_ms");
      const YamlField& where = at ? *at : m.self();
      where.fail_as(field.path(), "first_byte_ms (" + std::to_string(base.first_byte.count()) +
                                      ") must not exceed total_ms (" +
                                      std::to_string(base.total.count()) + ")");
    }
    return base;
  }

  void load_tls(const YamlField& field, Provider& p) {
    const YamlMap m = field.map({"verify", "ca_file", "server_name"});
    if (auto f = m.get("verify")) {
      p.tls.verify = f->boolean();
      if (!p.tls.verify) {
        config_.notes.push_back("provider " + p.id +
                                ": tls.verify is false; upstream certificates are NOT checked "
                                "(use only in a lab)");
      }
    }
    if (auto f = m.get("ca_file")) {
      p.tls.ca_file = f->text();
      if (p.tls.ca_file.empty()) {
        f->fail("must not be empty; omit ca_file to use the system CA store");
      }
      std::error_code ec;
      const auto status = std::filesystem::status(p.tls.ca_file, ec);
      if (!std::filesystem::exists(status)) {
        f->fail("file " + in_quotes(p.tls.ca_file) + " does not exist");
      }
      if (!std::filesystem::is_regular_file(status)) {
        f->fail(in_quotes(p.tls.ca_file) + " is not a regular file");
      }
    }
    if (auto f = m.get("server_name")) {
      p.tls.server_name = f->text();
      if (!is_visible_ascii(p.tls.server_name)) {
        f->fail("must be a host name without spaces or control characters");
      }
    }
  }

  const DeclaredProvider& resolve_provider(const YamlField& field, const std::string& id) {
    for (const DeclaredProvider& p : providers_) {
      if (p.id == id) {
        return p;
      }
    }
    std::vector<std::string> known;
    for (const DeclaredProvider& p : providers_) {
      known.push_back(p.id);
    }
    field.fail("unknown provider " + in_quotes(id) + " (known: " + known_list(known) + ")");
  }

  std::string model_name(const YamlField& field) {
    std::string model = field.text();
    if (model.empty() || model.size() > kMaxNameLength || !is_visible_ascii(model)) {
      field.fail("model must be 1.." + std::to_string(kMaxNameLength) +
                 " visible characters without spaces");
    }
    return model;
  }

  void load_route(const YamlField& field) {
    const YamlMap m = field.map({"alias", "kind", "provider", "model", "targets", "policy", "retry",
                                 "timeout", "max_output_tokens", "heartbeat_ms"});
    Route route;
    route.source = field.where();

    const YamlField alias_field = m.required("alias");
    const std::vector<YamlField> alias_items = alias_field.one_or_many();
    if (alias_items.empty()) {
      alias_field.fail("at least one alias is required");
    }
    for (const YamlField& item : alias_items) {
      std::string alias = item.text();
      if (alias.empty() || alias.size() > kMaxNameLength || !is_visible_ascii(alias)) {
        item.fail("alias must be 1.." + std::to_string(kMaxNameLength) +
                  " visible characters without spaces");
      }
      if (auto it = aliases_.find(alias); it != aliases_.end()) {
        item.fail("alias " + in_quotes(alias) + " is already used by " + it->second.path + " (" +
                  it->second.where + ")");
      }
      aliases_.emplace(alias, DeclaredAlias{field.path(), route.source});
      alias_order_.push_back(alias);
      route.aliases.push_back(std::move(alias));
    }

    if (auto f = m.get("kind")) {
      const std::string kind = f->text();
      if (kind == "chat") {
        route.kind = RouteKind::kChat;
      } else if (kind == "embeddings") {
        route.kind = RouteKind::kEmbeddings;
      } else {
        f->fail("expected \"chat\" or \"embeddings\", got " + in_quotes(kind));
      }
    }

    // The policy tree: `policy`, a `targets` list (a fallback over them, in order) or the
    // provider/model shorthand (one target).
    const int forms = (m.has("policy") ? 1 : 0) + (m.has("targets") ? 1 : 0) +
                      ((m.has("provider") || m.has("model")) ? 1 : 0);
    if (forms > 1) {
      for (std::string_view name : {"provider", "model", "targets"}) {
        if (auto f = m.get(name)) {
          f->fail("use one of provider/model, targets or policy");
        }
      }
    }
    RouteLoad load{route, {}};
    if (auto policy = m.get("policy")) {
      route.policy = load_policy_node(*policy, load, /*in_balance=*/false);
    } else if (auto targets = m.get("targets")) {
      const std::vector<YamlField> items = targets->items();
      if (items.empty()) {
        targets->fail("at least one target is required");
      }
      route.policy.kind = PolicyNode::Kind::kFallback;
      route.policy.source = targets->where();
      route.policy.on_status.assign(default_fallback_statuses().begin(),
                                    default_fallback_statuses().end());
      for (const YamlField& item : items) {
        route.policy.children.push_back(load_policy_node(item, load, false));
      }
      if (route.policy.children.size() == 1) {
        PolicyNode only = std::move(route.policy.children.front());
        route.policy = std::move(only);
      }
    } else {
      if (!m.has("provider") && !m.has("model")) {
        field.fail("missing target: set provider and model, targets, or policy");
      }
      route.policy = load_target(m, m.self(), load, false, /*leaf_fields=*/false);
    }
    route.retry = config_.routing.retry;
    if (auto f = m.get("retry")) {
      route.retry = load_retry(*f, route.retry);
    }
    if (route.kind == RouteKind::kEmbeddings) {
      check_embeddings_policy(route, m.self());
    }
    if (auto f = m.get("max_output_tokens")) {
      if (route.kind == RouteKind::kEmbeddings) {
        f->fail("max_output_tokens applies to chat routes only");
      }
      route.max_output_tokens = load_output_cap(*f);
    }
    if (auto f = m.get("heartbeat_ms")) {
      route.heartbeat = f->millis_in(0, kMaxMillis);
    }

    // Targets whose provider is disabled (an unset key) leave the tree; the route is skipped
    // only when none is left.
    std::vector<bool> keep(route.targets.size(), true);
    std::vector<std::string> dropped;
    for (std::size_t i = 0; i < route.targets.size(); ++i) {
      const DeclaredProvider* p = load.resolved[i];
      if (!p->unmet.empty()) {
        keep[i] = false;
        dropped.push_back(p->id + " disabled (" + describe(p->unmet, " ") + ")");
      }
    }
    const DeclaredProvider* first_active = nullptr;
    for (std::size_t i = 0; i < route.targets.size(); ++i) {
      if (keep[i]) {
        first_active = load.resolved[i];
        break;
      }
    }
    const bool skipped = first_active == nullptr;
    if (auto f = m.get("timeout")) {
      const Timeouts base = skipped ? Timeouts{} : config_.providers[first_active->index].timeout;
      route.timeout = load_timeouts(*f, base, !skipped);
    }
    if (skipped) {
      config_.notes.push_back("route " + join(route.aliases) + " skipped: provider " +
                              dropped.front());
      return;
    }
    if (!dropped.empty()) {
      prune(route, keep);
      for (const std::string& d : dropped) {
        config_.notes.push_back("route " + join(route.aliases) + ": a target left out: provider " +
                                d);
      }
    }
    config_.routes.push_back(std::move(route));
  }

  // `max_output_tokens: N` (capped) or `{ limit: N, action: cap | refuse }`.
  static OutputCap load_output_cap(const YamlField& field) {
    OutputCap cap;
    if (!field.is_map()) {
      cap.limit = static_cast<std::uint32_t>(field.unsigned_in(1, kMaxU32));
      return cap;
    }
    const YamlMap m = field.map({"limit", "action"});
    cap.limit = static_cast<std::uint32_t>(m.required("limit").unsigned_in(1, kMaxU32));
    if (auto f = m.get("action")) {
      const std::string action = f->text();
      if (action == "cap") {
        cap.action = OutputCap::Action::kCap;
      } else if (action == "refuse") {
        cap.action = OutputCap::Action::kRefuse;
      } else {
        f->fail("expected \"cap\" or \"refuse\", got " + in_quotes(action));
      }
    }
    return cap;
  }

  // What one route's tree collects while it is read.
  struct RouteLoad {
    Route& route;
    std::vector<const DeclaredProvider*> resolved;  // per Route::targets entry
  };

  static constexpr std::size_t kMaxPolicyDepth = 8;
  static constexpr std::size_t kMaxTargets = 64;

  PolicyNode load_policy_node(const YamlField& field, RouteLoad& load, bool in_balance,
                              std::size_t depth = 0) {
    if (depth > kMaxPolicyDepth) {
      field.fail("policy nested deeper than " + std::to_string(kMaxPolicyDepth) + " levels");
    }
    const YamlMap m = field.map({"provider", "model", "weight", "vector_space", "timeout",
                                 "fallback", "loadbalance", "conditional"});
    const int kinds = (m.has("fallback") ? 1 : 0) + (m.has("loadbalance") ? 1 : 0) +
                      (m.has("conditional") ? 1 : 0) +
                      ((m.has("provider") || m.has("model")) ? 1 : 0);
    if (kinds != 1) {
      field.fail(kinds == 0
                     ? "expected a target (provider, model), fallback, loadbalance or conditional"
                     : "a node is one of: a target (provider, model), fallback, loadbalance or "
                       "conditional");
    }
    if (m.has("provider") || m.has("model")) {
      return load_target(m, field, load, in_balance);
    }
    for (std::string_view leaf_only : {"vector_space", "timeout"}) {
      if (auto f = m.get(leaf_only)) {
        f->fail(std::string(leaf_only) + " belongs to a target");
      }
    }
    PolicyNode node;
    node.source = field.where();
    node.weight = load_weight(m, in_balance);
    if (auto c = m.get("conditional")) {
      load_conditional(*c, node, load, depth);
      return node;
    }
    const bool fallback = m.has("fallback");
    const YamlField body = *m.get(fallback ? "fallback" : "loadbalance");
    const YamlMap b =
        fallback ? body.map({"targets", "on_status"}) : body.map({"targets", "strategy"});
    if (fallback) {
      node.kind = PolicyNode::Kind::kFallback;
      if (auto f = b.get("on_status")) {
        for (const YamlField& item : f->one_or_many()) {
          const auto status = static_cast<int>(item.unsigned_in(100, 599));
          for (int never : {400, 401, 403, 404, 413, 422}) {
            if (status == never) {
              item.fail(std::to_string(status) +
                        " is never retried: the same request fails the same way everywhere");
            }
          }
          if (status != 408 && status != 429 && status < 500) {
            // The plan stops on any failure that is not retryable before it reads on_status:
            // listing one would read as a fallback that can never happen.
            item.fail(std::to_string(status) +
                      " can never move on: only 408, 429, 5xx and failures without a status "
                      "are retried");
          }
          node.on_status.push_back(status);
        }
      } else {
        node.on_status.assign(default_fallback_statuses().begin(),
                              default_fallback_statuses().end());
      }
    } else {
      node.kind = PolicyNode::Kind::kLoadBalance;
      if (auto f = b.get("strategy")) {
        const std::string strategy = f->text();
        if (strategy == "weighted") {
          node.strategy = PolicyNode::Strategy::kWeighted;
        } else if (strategy == "ordered") {
          node.strategy = PolicyNode::Strategy::kOrdered;
        } else if (strategy == "least_busy") {
          node.strategy = PolicyNode::Strategy::kLeastBusy;
        } else if (strategy == "latency") {
          node.strategy = PolicyNode::Strategy::kLatency;
        } else {
          f->fail("expected weighted, ordered, least_busy or latency, got " + in_quotes(strategy));
        }
      }
    }
    const YamlField targets = b.required("targets");
    const std::vector<YamlField> items = targets.items();
    if (items.empty()) {
      targets.fail("at least one target is required");
    }
    for (const YamlField& item : items) {
      node.children.push_back(load_policy_node(item, load, !fallback, depth + 1));
    }
    if (!fallback) {
      bool any_weight = false;
      for (const PolicyNode& child : node.children) {
        any_weight = any_weight || child.weight > 0;
      }
      if (!any_weight) {
        targets.fail("every target has weight 0: at least one must take traffic");
      }
    }
    return node;
  }

  // conditional: { rules: [{ when: {...}, then: <node> }, ...], default: <node> }
  void load_conditional(const YamlField& field, PolicyNode& node, RouteLoad& load,
                        std::size_t depth) {
    node.kind = PolicyNode::Kind::kConditional;
    const YamlMap b = field.map({"rules", "default"});
    const YamlField rules = b.required("rules");
    const std::vector<YamlField> items = rules.items();
    if (items.empty()) {
      rules.fail("at least one rule is required");
    }
    for (const YamlField& item : items) {
      const YamlMap rule = item.map({"when", "then"});
      node.when.push_back(load_conditions(rule.required("when")));
      node.children.push_back(load_policy_node(rule.required("then"), load, false, depth + 1));
    }
    node.children.push_back(load_policy_node(b.required("default"), load, false, depth + 1));
  }

  std::vector<Condition> load_conditions(const YamlField& field) {
    const YamlMap m = field.map({"key", "key_group", "stream", "max_tokens", "headers"});
    std::vector<Condition> out;
    if (auto f = m.get("key")) {
      Condition c;
      c.field = Condition::Field::kKey;
      load_matcher(*f, c, /*numeric=*/false);
      out.push_back(std::move(c));
    }
    if (auto f = m.get("key_group")) {
      Condition c;
      c.field = Condition::Field::kKeyGroup;
      load_matcher(*f, c, /*numeric=*/false);
      out.push_back(std::move(c));
    }
    if (auto f = m.get("stream")) {
      Condition c;
      c.field = Condition::Field::kStream;
      c.flag = f->boolean();
      out.push_back(std::move(c));
    }
    if (auto f = m.get("max_tokens")) {
      Condition c;
      c.field = Condition::Field::kMaxTokens;
      load_matcher(*f, c, /*numeric=*/true);
      out.push_back(std::move(c));
    }
    if (auto f = m.get("headers")) {
      for (auto& [name, value] : f->entries()) {
        Condition c;
        c.field = Condition::Field::kHeader;
        c.header = name.literal_text();
        std::transform(c.header.begin(), c.header.end(), c.header.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (c.header.empty() || !is_visible_ascii(c.header) || never_forwarded(c.header)) {
          name.fail("a header a rule may test (not a credential or framing header)");
        }
        load_matcher(value, c, /*numeric=*/false);
        out.push_back(std::move(c));
      }
    }
    if (out.empty()) {
      field.fail("at least one test is required (key, stream, max_tokens, headers)");
    }
    return out;
  }

  // A scalar (equals), or one of {eq: v}, {in: [v...]}, {exists: bool}; numeric fields take
  // {gt|gte|lt|lte|eq: n}.
  void load_matcher(const YamlField& field, Condition& c, bool numeric) {
    if (!field.is_map()) {
      c.op = Condition::Op::kEq;
      if (numeric) {
        c.number = field.unsigned_in(0, std::numeric_limits<std::uint32_t>::max());
      } else {
        c.values.push_back(field.text());
      }
      return;
    }
    const YamlMap m =
        numeric ? field.map({"eq", "gt", "gte", "lt", "lte"}) : field.map({"eq", "in", "exists"});
    int ops = 0;
    for (std::string_view op : {"eq", "in", "exists", "gt", "gte", "lt", "lte"}) {
      ops += m.has(op) ? 1 : 0;
    }
    if (ops != 1) {
      field.fail(numeric ? "expected exactly one of eq, gt, gte, lt, lte"
                         : "expected exactly one of eq, in, exists");
    }
    if (numeric) {
      static constexpr std::pair<std::string_view, Condition::Op> kOps[] = {
          {"eq", Condition::Op::kEq},
          {"gt", Condition::Op::kGt},
          {"gte", Condition::Op::kGte},
          {"lt", Condition::Op::kLt},
          {"lte", Condition::Op::kLte}};
      for (const auto& [name, op] : kOps) {
        if (auto f = m.get(name)) {
          c.op = op;
          c.number = f->unsigned_in(0, std::numeric_limits<std::uint32_t>::max());
        }
      }
      return;
    }
    if (auto f = m.get("eq")) {
      c.op = Condition::Op::kEq;
      c.values.push_back(f->text());
    } else if (auto f = m.get("in")) {
      c.op = Condition::Op::kIn;
      for (const YamlField& v : f->items()) {
        c.values.push_back(v.text());
      }
      if (c.values.empty()) {
        f->fail("at least one value is required");
      }
    } else if (auto f = m.get("exists")) {
      c.op = Condition::Op::kExists;
      c.flag = f->boolean();
    }
  }

  std::uint32_t load_weight(const YamlMap& m, bool in_balance) {
    auto f = m.get("weight");
    if (!f) {
      return 1;
    }
    if (!in_balance) {
      f->fail("weight applies only inside loadbalance");
    }
    return static_cast<std::uint32_t>(f->unsigned_in(0, 1'000'000));
  }

  // `leaf_fields`: weight, vector_space and timeout belong to the target (false for the
  // route-level provider/model shorthand, whose timeout is the route's).
  PolicyNode load_target(const YamlMap& m, const YamlField& at, RouteLoad& load, bool in_balance,
                         bool leaf_fields = true) {
    if (load.route.targets.size() >= kMaxTargets) {
      at.fail("more than " + std::to_string(kMaxTargets) + " targets in one route");
    }
    PolicyNode node;
    node.kind = PolicyNode::Kind::kTarget;
    node.source = at.where();
    node.weight = leaf_fields ? load_weight(m, in_balance) : 1;
    const YamlField provider = m.required("provider");
    Target target;
    target.provider = provider.text();
    target.source = at.where();
    load.resolved.push_back(&resolve_provider(provider, target.provider));
    target.model = model_name(m.required("model"));
    if (auto f = leaf_fields ? m.get("vector_space") : std::nullopt) {
      target.vector_space = f->text();
      if (target.vector_space.empty() || !is_visible_ascii(target.vector_space)) {
        f->fail("must be a non-empty name without spaces");
      }
    }
    if (auto f = leaf_fields ? m.get("timeout") : std::nullopt) {
      const DeclaredProvider* p = load.resolved.back();
      const Timeouts base = p->unmet.empty() ? config_.providers[p->index].timeout : Timeouts{};
      target.timeout = load_timeouts(*f, base, p->unmet.empty());
    }
    node.target = load.route.targets.size();
    load.route.targets.push_back(std::move(target));
    return node;
  }

  // An embeddings route falls back only between targets that return comparable vectors: the
  // same model, or the same declared vector_space.
  void check_embeddings_policy(const Route& route, const YamlField& at) {
    const Target& first = route.targets.front();
    for (const Target& t : route.targets) {
      const bool same_space = !first.vector_space.empty() && t.vector_space == first.vector_space;
      if (!same_space && t.model != first.model) {
        at.fail("embeddings target " + t.provider + "/" + t.model + " (" + t.source +
                ") returns vectors that are not comparable with " + first.provider + "/" +
                first.model + ": give both the same vector_space to allow it");
      }
    }
  }

  // Removes the leaves whose `keep` is false (and inner nodes left empty), renumbering targets.
  static void prune(Route& route, const std::vector<bool>& keep) {
    std::vector<std::size_t> renumber(route.targets.size(), 0);
    std::vector<Target> kept;
    for (std::size_t i = 0; i < route.targets.size(); ++i) {
      if (keep[i]) {
        renumber[i] = kept.size();
        kept.push_back(std::move(route.targets[i]));
      }
    }
    route.targets = std::move(kept);
    prune_node(route.policy, keep, renumber);
    while (route.policy.kind != PolicyNode::Kind::kTarget && route.policy.children.size() == 1) {
      PolicyNode only = std::move(route.policy.children.front());
      route.policy = std::move(only);
    }
  }

  // False when nothing of `node` is left.
  static bool prune_node(PolicyNode& node, const std::vector<bool>& keep,
                         const std::vector<std::size_t>& renumber) {
    if (node.kind == PolicyNode::Kind::kTarget) {
      if (!keep[node.target]) {
        return false;
      }
      node.target = renumber[node.target];
      return true;
    }
    std::vector<PolicyNode> children;
    std::vector<std::vector<Condition>> when;
    const std::size_t n = node.children.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (prune_node(node.children[i], keep, renumber)) {
        children.push_back(std::move(node.children[i]));
        if (node.kind == PolicyNode::Kind::kConditional && i + 1 < n) {
          when.push_back(std::move(node.when[i]));  // a rule whose branch is gone goes too
        }
      } else if (node.kind == PolicyNode::Kind::kConditional && i + 1 == n) {
        return false;  // no default left: the node cannot answer every request
      }
    }
    node.children = std::move(children);
    node.when = std::move(when);
    if (node.kind == PolicyNode::Kind::kLoadBalance) {
      bool any_weight = false;
      for (const PolicyNode& child : node.children) {
        any_weight = any_weight || child.weight > 0;
      }
      if (!any_weight) {
        for (PolicyNode& child : node.children) {  // only failover targets left: in order
          child.weight = 1;
        }
        node.strategy = PolicyNode::Strategy::kOrdered;
      }
    }
    return !node.children.empty();
  }

  RetrySettings load_retry(const YamlField& field, RetrySettings base) {
    const YamlMap m =
        field.map({"max_attempts", "per_target_attempts", "backoff_base_ms", "backoff_max_ms",
                   "retry_after_max_ms", "budget_ratio", "budget_burst", "deadline_ms"});
    if (auto f = m.get("max_attempts")) {
      base.max_attempts = static_cast<std::uint32_t>(f->unsigned_in(1, 20));
    }
    if (auto f = m.get("per_target_attempts")) {
      base.per_target_attempts = static_cast<std::uint32_t>(f->unsigned_in(1, 10));
    }
    if (auto f = m.get("backoff_base_ms")) {
      base.backoff_base = f->millis_in(1, kMaxMillis);
    }
    if (auto f = m.get("backoff_max_ms")) {
      base.backoff_max = f->millis_in(1, kMaxMillis);
    }
    if (base.backoff_max < base.backoff_base) {
      m.self().fail("backoff_max_ms must not be below backoff_base_ms");
    }
    if (auto f = m.get("retry_after_max_ms")) {
      base.retry_after_max = f->millis_in(0, kMaxMillis);
    }
    if (auto f = m.get("budget_ratio")) {
      base.budget_ratio = ratio(*f, 0.0, 1.0);
    }
    if (auto f = m.get("budget_burst")) {
      base.budget_burst = static_cast<std::uint32_t>(f->unsigned_in(0, 100000));
    }
    if (auto f = m.get("deadline_ms")) {
      base.deadline = f->millis_in(1, kMaxMillis);
    }
    return base;
  }

  BreakerSettings load_breaker(const YamlField& field, BreakerSettings base) {
    const YamlMap m = field.map({"enabled", "error_rate", "min_requests", "window_ms", "open_ms"});
    if (auto f = m.get("enabled")) {
      base.enabled = f->boolean();
    }
    if (auto f = m.get("error_rate")) {
      base.error_rate = ratio(*f, 0.01, 1.0);
    }
    if (auto f = m.get("min_requests")) {
      base.min_requests = static_cast<std::uint32_t>(f->unsigned_in(1, 1'000'000));
    }
    if (auto f = m.get("window_ms")) {
      base.window = f->millis_in(100, kMaxMillis);
    }
    if (auto f = m.get("open_ms")) {
      base.open = f->millis_in(1, kMaxMillis);
    }
    return base;
  }

  void load_routing(const YamlField& field) {
    const YamlMap m = field.map({"retry", "circuit_breaker", "budget_window_ms"});
    if (auto f = m.get("retry")) {
      config_.routing.retry = load_retry(*f, config_.routing.retry);
    }
    if (auto f = m.get("budget_window_ms")) {
      config_.routing.budget_window = f->millis_in(100, 3600000);
    }
    if (auto f = m.get("circuit_breaker")) {
      config_.routing.breaker = load_breaker(*f, config_.routing.breaker);
    }
  }

  static double ratio(const YamlField& field, double min, double max) {
    const std::string text = field.text();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !(v >= min) ||
        !(v <= max)) {
      field.fail("expected a number from " + format_number(min) + " to " + format_number(max));
    }
    return v;
  }

  static std::string format_number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

  void load_key(const YamlField& field) {
    const YamlMap m = field.map({"name", "group", "key", "key_sha256", "models"});
    Key key;
    key.source = field.where();
    if (auto f = m.get("group")) {
      key.group = f->text();
      if (key.group.empty() || key.group.size() > kMaxNameLength || !is_visible_ascii(key.group)) {
        f->fail("group must be 1.." + std::to_string(kMaxNameLength) +
                " visible characters without spaces");
      }
    }

    const YamlField name_field = m.required("name");
    key.name = name_field.text();
    key.id = "config:" + key.name;
    if (key.name.empty() || key.name.size() > kMaxNameLength || !is_visible_ascii(key.name)) {
      name_field.fail("name must be 1.." + std::to_string(kMaxNameLength) +
                      " visible characters without spaces");
    }
    for (std::size_t i = 0; i < config_.keys.size(); ++i) {
      if (config_.keys[i].name == key.name) {
        name_field.fail("duplicate key name " + in_quotes(key.name) + " (first used by keys[" +
                        std::to_string(i) + "])");
      }
    }

    const std::optional<YamlField> secret = m.get("key");
    const std::optional<YamlField> digest = m.get("key_sha256");
    if (secret && digest) {
      digest->fail("set either key or key_sha256, not both");
    }
    if (!secret && !digest) {
      field.fail("missing key: set key (plaintext, hashed at load) or key_sha256");
    }
    // Never echo either value below: one is the secret, the other identifies it.
    const YamlField& secret_field = secret ? *secret : *digest;
    if (secret) {
      const Wiped plaintext(secret->text());
      if (plaintext.get().size() < kMinKeyLength) {
        secret->fail("too short: keys need at least " + std::to_string(kMinKeyLength) +
                     " characters (value not shown)");
      }
      if (!is_visible_ascii(plaintext.get())) {
        secret->fail("must contain only visible ASCII characters, no spaces (value not shown)");
      }
      key.sha256_hex = sha256_hex(plaintext.get());
      if (key.sha256_hex.empty()) {
        secret->fail("internal error: SHA-256 is unavailable");
      }
    } else {
      const std::string hex = digest->text();
      if (!is_sha256_hex(hex)) {
        digest->fail("expected 64 hexadecimal digits (a SHA-256 digest; value not shown)");
      }
      key.sha256_hex = to_lower(hex);
    }
    for (std::size_t i = 0; i < config_.keys.size(); ++i) {
      if (config_.keys[i].sha256_hex == key.sha256_hex) {
        secret_field.fail("same secret as key " + in_quotes(config_.keys[i].name) + " (" +
                          config_.keys[i].source + "); every key needs its own secret");
      }
    }

    if (auto models = m.get("models")) {
      const std::vector<YamlField> items = models->items();
      if (items.empty()) {
        models->fail("empty list; omit models to allow every alias");
      }
      for (const YamlField& item : items) {
        std::string alias = item.text();
        // A skipped alias stays in the list: dropping it could leave the list empty, which
        // would mean "every alias".
        if (aliases_.find(alias) == aliases_.end()) {
          item.fail("unknown alias " + in_quotes(alias) + " (known: " + known_list(alias_order_) +
                    ")");
        }
        if (std::find(key.allowed_aliases.begin(), key.allowed_aliases.end(), alias) !=
            key.allowed_aliases.end()) {
          item.fail("duplicate alias " + in_quotes(alias));
        }
        key.allowed_aliases.push_back(std::move(alias));
      }
    }
    config_.keys.push_back(std::move(key));
  }

  const LoadContext& context_;
  std::span<const AdapterSchema> adapters_;
  std::vector<std::string_view> provider_keys_;
  Config config_;
  std::vector<DeclaredProvider> providers_;
  std::map<std::string, DeclaredAlias> aliases_;
  std::vector<std::string> alias_order_;
};

Error config_error(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message));
}

std::string location(const std::string& source_name, const YAML::Mark& mark) {
  const int line = mark.is_null() ? 1 : std::max(mark.line, 0) + 1;
  const int column = mark.is_null() ? 1 : std::max(mark.column, 0) + 1;
  return source_name + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

}  // namespace

bool never_forwarded(std::string_view name) {
  for (std::string_view forbidden : kNeverForwarded) {
    if (forbidden.size() == name.size()) {
      bool same = true;
      for (std::size_t i = 0; i < name.size() && same; ++i) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z') {
          c = static_cast<char>(c - 'A' + 'a');
        }
        same = c == forbidden[i];
      }
      if (same) {
        return true;
      }
    }
  }
  return false;
}

std::span<const std::string_view> never_forwarded_headers() { return kNeverForwarded; }

Result<std::shared_ptr<const Config>> load_from_string(const std::string& yaml_text,
                                                       const std::string& source_name,
                                                       const LoadOptions& options) {
  LoadContext context;
  context.source_name = source_name;
  context.getenv = options.getenv;
  if (!context.getenv) {
    context.getenv = [](const std::string& name) -> std::optional<std::string> {
      const char* value = std::getenv(name.c_str());
      if (value == nullptr) {
        return std::nullopt;
      }
      return std::string(value);
    };
  }
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(yaml_text);
    if (documents.empty() || documents.front().IsNull()) {
      return config_error(source_name +
                          ":1:1: empty configuration (expected a mapping with "
                          "version, providers and routes)");
    }
    if (documents.size() > 1) {
      return config_error(location(source_name, documents[1].Mark()) +
                          "more than one YAML document; a config file holds exactly one");
    }
    const YAML::Node& root = documents.front();
    if (!root.IsMap()) {
      return config_error(location(source_name, root.Mark()) +
                          "expected a mapping at the top level (version, providers, routes, ...)");
    }
    Loader loader(context, options.adapters);
    return loader.load(YamlField::root(root, context));
  } catch (const ConfigError& e) {
    return config_error(e.what());
  } catch (const YAML::Exception& e) {
    return config_error(location(source_name, e.mark) + "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return config_error(source_name + ":1:1: internal error while loading: " + e.what());
  }
}

Result<std::shared_ptr<const Config>> load_from_file(const std::string& path,
                                                     const LoadOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return config_error(path + ":1:1: cannot read file: is a directory");
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes) {
    return config_error(path + ":1:1: file is larger than 16 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return config_error(path + ":1:1: cannot read file: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return config_error(path + ":1:1: cannot read file: " + std::strerror(errno));
  }
  return load_from_string(text.str(), path, options);
}

}  // namespace sluice::config
