#include "config/providers.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>

#include "config/adapter_catalog.h"
#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {
namespace {

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

void load_tls(const YamlField& field, Provider& p, std::vector<std::string>& notes) {
  const YamlMap m = field.map({"verify", "ca_file", "server_name"});
  if (auto f = m.get("verify")) {
    p.tls.verify = f->boolean();
    if (!p.tls.verify) {
      notes.push_back("provider " + p.id +
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

std::optional<Provider> load_provider(const YamlField& field, const AdapterCatalog& adapters,
                                      const EnvLookup& getenv, LoadState& declared) {
  const YamlMap m = field.map(adapters.provider_fields());
  DeclaredProvider self;
  self.where = field.where();

  const YamlField id_field = m.required("id");
  self.id = id_field.text();
  if (!is_provider_id(self.id)) {
    id_field.fail("invalid provider id " + in_quotes(self.id) +
                  " (use lower-case letters, digits, '_', '.', '-'; start with a letter or "
                  "digit)");
  }
  if (const DeclaredProvider* other = declared.find_provider(self.id)) {
    id_field.fail("duplicate provider id " + in_quotes(self.id) + " (first defined at " +
                  other->where + ")");
  }

  const YamlField adapter_field = m.required("adapter");
  const std::string adapter_name = adapter_field.text();
  const AdapterSchema* schema = adapters.find(adapter_name);
  if (schema == nullptr) {
    adapter_field.fail("unknown adapter " + in_quotes(adapter_name) +
                       " (expected: " + adapters.names() + ")");
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
  adapters.check_option_groups(m, *schema);
  if (auto f = m.get("requires_env")) {
    for (const YamlField& item : f->one_or_many()) {
      // Variable names, not values: taken literally.
      const std::string name = item.literal_text();
      if (!is_env_name(name)) {
        item.fail("invalid environment variable name " + in_quotes(name));
      }
      const std::optional<std::string> value = getenv(name);
      if (!value || value->empty()) {
        self.unmet.push_back(UnmetEnv{name, value.has_value()});
      }
    }
  }
  if (!self.active()) {
    declared.notes.push_back("provider " + self.id + " skipped: " + describe(self.unmet, " is "));
    declared.providers.push_back(std::move(self));
    return std::nullopt;
  }

  Provider p;
  p.id = self.id;
  p.adapter = adapter_name;
  p.source = self.where;
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
    load_tls(*f, p, declared.notes);
  }
  AdapterCatalog::read_options(m, *schema, p);
  self.timeout = p.timeout;
  declared.providers.push_back(std::move(self));
  return p;
}

Timeouts load_timeouts(const YamlField& field, Timeouts base, bool check) {
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

}  // namespace sluice::config
