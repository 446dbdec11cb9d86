#include "admin/cache_cli.h"

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "admin/admin_call.h"
#include "codec/percent.h"

namespace sluice::admin {
namespace {

namespace json = boost::json;

struct CacheInvocation {
  std::string admin_url = default_admin_url();
  bool json_output = false;
  std::string route;
  std::string key_group;
  std::string key;
  bool shared = false;
  std::string key_prefix;
};

std::int64_t number_of(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

std::string render_stats(const json::value& answer) {
  const json::object& o = answer.as_object();
  return fmt::format(
      "entries      {}\nbytes        {} of {} ({:.1f}%)\nevictions    {}\nexpirations  {}\n",
      number_of(o, "entries"), number_of(o, "bytes"), number_of(o, "capacity"),
      number_of(o, "capacity") > 0 ? 100.0 * static_cast<double>(number_of(o, "bytes")) /
                                         static_cast<double>(number_of(o, "capacity"))
                                   : 0.0,
      number_of(o, "evictions"), number_of(o, "expirations"));
}

std::string render_purge(const json::value& answer) {
  const json::object& o = answer.as_object();
  std::string out = fmt::format("purged {} entries here", number_of(o, "purged"));
  if (o.contains("shared_purged")) {
    out += fmt::format(", {} in the shared store", number_of(o, "shared_purged"));
  }
  return out + "\n";
}

std::string purge_target(const CacheInvocation& inv) {
  std::string query;
  const auto add = [&query](std::string_view name, std::string_view value) {
    query += query.empty() ? '?' : '&';
    query += name;
    query += '=';
    query += codec::percent_encode(value);
  };
  if (!inv.route.empty()) {
    add("route", inv.route);
  }
  if (!inv.key_group.empty()) {
    add("key_group", inv.key_group);
  }
  if (!inv.key.empty()) {
    add("key", inv.key);
  }
  if (inv.shared) {
    add("shared", "true");
  }
  if (!inv.key_prefix.empty()) {
    add("key_prefix", inv.key_prefix);
  }
  return "/admin/v1/cache/purge" + query;
}

}  // namespace

std::function<int()> add_cache_commands(CLI::App& app) {
  auto inv = std::make_shared<CacheInvocation>();
  CLI::App* cache = app.add_subcommand("cache", "The answer cache: stats and purges (admin API)");
  cache->require_subcommand(1);
  const auto common = [&inv](CLI::App* sub) {
    sub->add_option("--admin-url", inv->admin_url,
                    "Admin listener (default $SLUICE_ADMIN_URL, else http://127.0.0.1:8081)");
    sub->add_flag("--json", inv->json_output, "Print the API's JSON answer");
  };
  CLI::App* stats = cache->add_subcommand("stats", "Entries, bytes, evictions of this instance");
  common(stats);
  CLI::App* purge = cache->add_subcommand(
      "purge", "Drop entries of a route, a tenant, or both (neither: every entry)");
  common(purge);
  purge->add_option("--route", inv->route, "The route's first alias");
  CLI::Option* group = purge->add_option("--key-group", inv->key_group, "A key group's entries");
  CLI::Option* key = purge->add_option("--key", inv->key, "One key's entries (its id)");
  CLI::Option* shared = purge->add_flag("--shared", inv->shared, "Entries of scope: shared routes");
  purge->add_option("--key-prefix", inv->key_prefix,
                    "Entries whose key starts with these hex digits (the access log's cache_key)");
  group->excludes(key)->excludes(shared);
  key->excludes(shared);
  return [inv, cache, stats, purge]() -> int {
    if (!cache->parsed()) {
      return -1;
    }
    if (stats->parsed()) {
      return run_admin_call(
          {"cache stats", inv->admin_url, "GET", "/admin/v1/cache", "", "", inv->json_output},
          render_stats);
    }
    if (purge->parsed()) {
      return run_admin_call(
          {"cache purge", inv->admin_url, "POST", purge_target(*inv), "", "", inv->json_output},
          render_purge);
    }
    return 1;
  };
}

}  // namespace sluice::admin
