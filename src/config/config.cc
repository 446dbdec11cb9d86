#include "config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

#include <openssl/crypto.h>
#include <yaml-cpp/yaml.h>

#include "config/access_log.h"
#include "config/adapter_catalog.h"
#include "config/admin.h"
#include "config/keys.h"
#include "config/limits.h"
#include "config/loader.h"
#include "config/metering.h"
#include "config/providers.h"
#include "config/routes.h"
#include "config/routing.h"
#include "config/scalars.h"
#include "config/server.h"
#include "config/state.h"
#include "config/store.h"
#include "config/tenancy.h"
#include "config/traces.h"

namespace sluice::config {

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::string in_quotes(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  out += text;
  out += '"';
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) {
      out += separator;
    }
    out += part;
  }
  return out;
}

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

double ratio(const YamlField& field, double min, double max) {
  const auto format_number = [](double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  };
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

ListenAddress listen_address(const YamlField& field) {
  auto address = parse_listen_address(field.text());
  if (!address) {
    field.fail(address.error().message());
  }
  return std::move(*address);
}

Wiped::~Wiped() { OPENSSL_cleanse(value_.data(), value_.size()); }

std::string describe(const std::vector<UnmetEnv>& unmet, std::string_view verb) {
  std::vector<std::string> parts;
  for (const UnmetEnv& u : unmet) {
    parts.push_back(u.name + std::string(verb) + (u.empty ? "empty" : "not set"));
  }
  return join(parts);
}

const DeclaredProvider* LoadState::find_provider(std::string_view id) const {
  for (const DeclaredProvider& p : providers) {
    if (p.id == id) {
      return &p;
    }
  }
  return nullptr;
}

const DeclaredProvider& LoadState::resolve_provider(const YamlField& field,
                                                    const std::string& id) const {
  if (const DeclaredProvider* p = find_provider(id)) {
    return *p;
  }
  std::vector<std::string> known;
  for (const DeclaredProvider& p : providers) {
    known.push_back(p.id);
  }
  field.fail("unknown provider " + in_quotes(id) + " (known: " + known_list(known) + ")");
}

void LoadState::declare_alias(const YamlField& item, const std::string& alias,
                              const YamlField& route) {
  if (auto it = aliases.find(alias); it != aliases.end()) {
    item.fail("alias " + in_quotes(alias) + " is already used by " + it->second.path + " (" +
              it->second.where + ")");
  }
  aliases.emplace(alias, DeclaredAlias{route.path(), route.where()});
  alias_order.push_back(alias);
}

void LoadState::require_alias(const YamlField& item, const std::string& alias) const {
  if (!has_alias(alias)) {
    item.fail("unknown alias " + in_quotes(alias) + " (known: " + known_list(alias_order) + ")");
  }
}

namespace {

constexpr std::uintmax_t kMaxFileBytes = 16 * 1024 * 1024;

// A semantic cache names the embeddings route it embeds through, which may be declared after
// it: checked once every route is read. A route skipped for its environment (a provider
// without its key) turns the semantic cache off, with a note, as a skipped target does.
void check_semantic_embedders(Config& config, LoadState& declared) {
  for (Route& route : config.routes) {
    if (!route.cache.semantic) {
      continue;
    }
    const SemanticSettings& semantic = *route.cache.semantic;
    const Route* embedder = nullptr;
    for (const Route& candidate : config.routes) {
      if (std::find(candidate.aliases.begin(), candidate.aliases.end(), semantic.embeddings) !=
          candidate.aliases.end()) {
        embedder = &candidate;
      }
    }
    const std::string where = semantic.source + ": route " + in_quotes(route.aliases.front()) +
                              ": cache.semantic.embeddings: ";
    if (embedder == nullptr && declared.has_alias(semantic.embeddings)) {
      declared.notes.push_back("route " + join(route.aliases) +
                               ": semantic cache off: its embeddings route " +
                               in_quotes(semantic.embeddings) + " is skipped");
      route.cache.semantic.reset();
      continue;
    }
    if (embedder == nullptr) {
      throw ConfigError(where + "unknown alias " + in_quotes(semantic.embeddings) +
                        " (known: " + known_list(declared.alias_order) + ")");
    }
    if (embedder->kind != RouteKind::kEmbeddings) {
      throw ConfigError(where + in_quotes(semantic.embeddings) +
                        " is a chat route; name a route with kind: embeddings");
    }
  }
}

// The sections in the order that lets each refer to the ones before it: providers before the
// routes that name them, routes before the keys that list their aliases, and limits last.
std::shared_ptr<const Config> load_config(const YamlField& root, const LoadContext& context,
                                          std::span<const AdapterSchema> adapters) {
  const YamlMap top =
      root.map({"version", "listen", "server", "access_log", "admin", "store", "metering", "traces",
                "auth", "routing", "providers", "routes", "keys", "state", "limits", "tenancy",
                "cache", "idempotency", "guardrails"});
  Config config;
  LoadState state;
  config.source_path = context.source_name;
  const YamlField version = top.required("version");
  config.version = version.unsigned_in(0, std::numeric_limits<std::uint64_t>::max());
  if (config.version == 0) {
    version.fail("must be at least 1");
  }
  if (auto listen = top.get("listen")) {
    config.listen = listen_address(*listen);
  }
  if (auto server = top.get("server")) {
    config.server = load_server(*server);
  }
  if (auto access_log = top.get("access_log")) {
    config.access_log = load_access_log(*access_log, state.notes);
  }
  if (auto admin = top.get("admin")) {
    config.admin = load_admin(*admin);
  }
  if (auto store = top.get("store")) {
    config.store = load_store(*store);
  }
  if (auto metering = top.get("metering")) {
    config.metering = load_metering(*metering);
  }
  const std::optional<YamlField> tenancy = top.get("tenancy");
  config.tenancy =
      load_tenancy(tenancy ? &*tenancy : nullptr, config.store.kind != StoreSettings::Kind::kNone);
  if (auto traces = top.get("traces")) {
    config.traces = load_traces(*traces);
  }
  if (auto auth = top.get("auth")) {
    const std::string mode = auth->text();
    if (mode == "required") {
      config.require_auth = true;
    } else if (mode == "none") {
      config.require_auth = false;
    } else {
      auth->fail("expected \"required\" or \"none\", got " + in_quotes(mode));
    }
  }

  const YamlField providers = top.required("providers");
  const std::vector<YamlField> provider_items = providers.items();
  if (provider_items.empty()) {
    providers.fail("at least one provider is required");
  }
  const AdapterCatalog catalog(adapters);
  for (const YamlField& item : provider_items) {
    if (auto provider = load_provider(item, catalog, context.getenv, state)) {
      config.providers.push_back(std::move(*provider));
    }
  }

  if (auto routing = top.get("routing")) {
    config.routing = load_routing(*routing);
  }
  if (auto cache = top.get("cache")) {
    config.cache = load_cache(*cache);
  }
  if (auto idempotency = top.get("idempotency")) {
    config.idempotency = load_idempotency(*idempotency);
  }
  if (auto guardrails = top.get("guardrails")) {
    config.guardrails = load_guardrails(*guardrails);
  }
  const YamlField routes = top.required("routes");
  const std::vector<YamlField> route_items = routes.items();
  if (route_items.empty()) {
    routes.fail("at least one route is required");
  }
  for (const YamlField& item : route_items) {
    if (auto route = load_route(item, config.routing.retry, config.cache.defaults,
                                config.guardrails, state)) {
      config.routes.push_back(std::move(*route));
    }
  }
  check_semantic_embedders(config, state);

  std::optional<YamlField> keys = top.get("keys");
  if (keys) {
    for (const YamlField& item : keys->items()) {
      config.keys.push_back(load_key(item, config.keys, state));
    }
  }
  if (config.require_auth && config.keys.empty() && !config.tenancy.enabled) {
    const std::string message = "no keys configured; add keys or set auth: none";
    if (keys) {
      keys->fail(message);
    }
    if (auto auth = top.get("auth")) {
      auth->fail_as("keys", message);
    }
    root.fail_as("keys", message);
  }
  if (auto state_field = top.get("state")) {
    config.state = load_state(*state_field);
  }
  if (auto limits = top.get("limits")) {
    config.limits = load_limits(*limits, config.keys, config.tenancy.enabled, state);
  }
  config.notes = std::move(state.notes);
  if (!config.require_auth) {
    config.notes.push_back(
        "auth is disabled (auth: none): every caller is accepted without a key; use only for "
        "local development");
  }
  if (config.routes.empty()) {
    config.notes.push_back("no routes are active: every model request will be answered 404");
  }
  return std::make_shared<const Config>(std::move(config));
}

Error config_error(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message));
}

std::string location(const std::string& source_name, const YAML::Mark& mark) {
  const int line = mark.is_null() ? 1 : std::max(mark.line, 0) + 1;
  const int column = mark.is_null() ? 1 : std::max(mark.column, 0) + 1;
  return source_name + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

}  // namespace

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
    return load_config(YamlField::root(root, context), context, options.adapters);
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
