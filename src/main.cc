// Wiring only: command line, logging, config, server.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <variant>

#include <CLI/CLI.hpp>
#include <malloc.h>

#include "admin/tenancy_cli.h"
#include "config/config.h"
#include "config/routes_report.h"
#include "core/time_zone.h"
#include "core/version.h"
#include "metering/estimate.h"
#include "metering/price_catalogue.h"
#include "metering/record_json.h"
#include "pipeline/snapshot.h"
#include "providers/registry.h"
#include "server/server.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/usage_report.h"

namespace {

// Loads and compiles `path` as the server would; on failure prints the error on stderr.
std::shared_ptr<const sluice::config::Config> load_checked(const std::string& path) {
  auto cfg = sluice::providers::load_config_file(path);
  if (!cfg) {
    std::cerr << cfg.error().message() << "\n";
    return nullptr;
  }
  auto snap = sluice::pipeline::Snapshot::build(*cfg);
  if (!snap) {
    std::cerr << snap.error().message() << "\n";
    return nullptr;
  }
  return *cfg;
}

int check_config(const std::string& path) {
  auto cfg = load_checked(path);
  if (!cfg) {
    return 1;
  }
  std::cout << "OK: " << path << " (version " << cfg->version << ", " << cfg->providers.size()
            << " providers, " << cfg->routes.size() << " routes, " << cfg->keys.size()
            << " keys)\n";
  for (const std::string& note : cfg->notes) {
    std::cout << "note: " << note << "\n";
  }
  return 0;
}

int print_routes(const std::string& path) {
  auto cfg = load_checked(path);
  if (!cfg) {
    return 1;
  }
  std::cout << sluice::config::describe_routes(*cfg);
  return 0;
}

// Reads a whole file; on failure prints why on stderr.
std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << path << ": cannot read file\n";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int check_prices(const std::string& path) {
  const auto text = read_text_file(path);
  if (!text) {
    return 1;
  }
  auto catalogue = sluice::metering::parse_price_catalogue(*text, path);
  if (!catalogue) {
    std::cerr << catalogue.error().message() << "\n";
    return 1;
  }
  std::cout << "OK: " << path << ": " << catalogue->summary();
  return 0;
}

struct EstimateOptions {
  sluice::metering::EstimateInput input;
  std::string prices;
  std::string at;
};

int estimate(EstimateOptions options) {
  std::shared_ptr<const sluice::metering::PriceBook> book;
  if (options.prices.empty()) {
    book = sluice::metering::default_price_book();
  } else {
    const auto text = read_text_file(options.prices);
    if (!text) {
      return 1;
    }
    auto loaded = sluice::metering::load_price_book(*text, options.prices);
    if (!loaded) {
      std::cerr << loaded.error().message() << "\n";
      return 1;
    }
    book = *loaded;
  }
  if (options.at.empty()) {
    options.input.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  } else {
    auto at = sluice::parse_rfc3339_ms(options.at);
    if (!at) {
      std::cerr << "--at: " << at.error().message() << "\n";
      return 1;
    }
    options.input.at_ms = *at;
  }
  auto result = sluice::metering::estimate_cost(*book, options.input);
  if (!result) {
    std::cerr << result.error().message() << "\n";
    return 1;
  }
  std::cout << sluice::metering::format_estimate(*book, options.input, *result);
  return result->priced ? 0 : 2;
}

int serve(const std::string& path) {
  auto cfg = sluice::providers::load_config_file(path);
  if (!cfg) {
    spdlog::error("{}", cfg.error().message());
    return 1;
  }
  auto snap = sluice::pipeline::Snapshot::build(*cfg);
  if (!snap) {
    spdlog::error("{}", snap.error().message());
    return 1;
  }
  // Signals are handled by the server's signal_set; block them here so worker threads
  // (which inherit this mask) never receive them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sluice::server::Server server(*snap, path);
  return server.run();
}

// `sluice usage`: where the store is, and the report's parameters (usage_report.h) as given.
struct UsageOptions {
  std::string config;
  std::string store;  // sqlite:PATH or a postgresql:// URL
  std::map<std::string, std::string> params;
  std::string request_id;  // `usage show`
};

// The store named by --store or by the config's `store:`, without creating or migrating
// anything: a reader must not turn a mistyped path into an empty database.
sluice::Result<std::unique_ptr<sluice::store::Store>> open_usage_store(const UsageOptions& o) {
  using sluice::Error;
  using sluice::ErrorKind;
  sluice::config::StoreSettings settings;
  if (!o.store.empty()) {
    if (o.store.starts_with("sqlite:")) {
      settings.kind = sluice::config::StoreSettings::Kind::kSqlite;
      settings.sqlite_path = o.store.substr(7);
    } else if (o.store.starts_with("postgresql://") || o.store.starts_with("postgres://")) {
      settings.kind = sluice::config::StoreSettings::Kind::kPostgres;
      settings.postgres_url = o.store;
    } else {
      return Error(ErrorKind::kBadRequest,
                   "--store: expected sqlite:PATH or a postgresql:// URL (value not shown)");
    }
  } else if (!o.config.empty()) {
    auto cfg = sluice::providers::load_config_file(o.config);
    if (!cfg) {
      return cfg.error();
    }
    settings = (*cfg)->store;
  } else {
    return Error(ErrorKind::kBadRequest, "give --config FILE or --store sqlite:PATH|URL");
  }
  switch (settings.kind) {
    case sluice::config::StoreSettings::Kind::kNone:
      return Error(ErrorKind::kBadRequest, o.config + ": the config has no store (store: none)");
    case sluice::config::StoreSettings::Kind::kSqlite: {
      if (!std::ifstream(settings.sqlite_path)) {
        return Error(ErrorKind::kNotFound, settings.sqlite_path + ": no such database file");
      }
      auto s = sluice::store::SqliteStore::open(settings.sqlite_path);
      if (!s) {
        return s.error();
      }
      return std::unique_ptr<sluice::store::Store>(std::move(*s));
    }
    case sluice::config::StoreSettings::Kind::kPostgres: {
      auto s = sluice::store::PostgresStore::open(settings.postgres_url);
      if (!s) {
        return s.error();
      }
      return std::unique_ptr<sluice::store::Store>(std::move(*s));
    }
  }
  return Error(ErrorKind::kInternal, "unknown store kind");
}

// Exit codes: 0 printed, 1 the store failed or has no such request, 2 bad parameters.
// The report parameters among `names` that were given, parsed, and the store they read: or the
// exit status after printing why not (2 bad parameters, 1 no store).
struct UsageCommand {
  sluice::store::UsageReportRequest request;
  std::unique_ptr<sluice::store::Store> store;
};
std::variant<UsageCommand, int> prepare_usage_command(const UsageOptions& o,
                                                      std::span<const std::string_view> names,
                                                      std::string_view command) {
  std::vector<std::pair<std::string, std::string>> params;
  for (std::string_view name : names) {
    if (auto it = o.params.find(std::string(name)); it != o.params.end()) {
      params.emplace_back(name, it->second);
    }
  }
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  auto request = sluice::store::parse_usage_report(params, now);
  if (!request) {
    std::cerr << command << ": " << request.error().message() << "\n";
    return 2;
  }
  auto store = open_usage_store(o);
  if (!store) {
    std::cerr << command << ": " << store.error().message() << "\n";
    return store.error().kind() == sluice::ErrorKind::kBadRequest ? 2 : 1;
  }
  return UsageCommand{std::move(*request), std::move(*store)};
}

int usage_report(const UsageOptions& o) {
  auto prepared =
      prepare_usage_command(o, sluice::store::usage_report_parameters(), "sluice usage");
  if (const int* status = std::get_if<int>(&prepared)) {
    return *status;
  }
  auto& [request, store] = std::get<UsageCommand>(prepared);
  auto rows = store->query_usage(request.query);
  if (!rows) {
    std::cerr << "sluice usage: " << rows.error().message() << "\n";
    return 1;
  }
  std::cout << sluice::store::render_usage(request.query, *rows, request.format);
  return 0;
}

int usage_show(const UsageOptions& o) {
  sluice::store::ReportFormat format = sluice::store::ReportFormat::kTable;
  if (auto it = o.params.find("format"); it != o.params.end()) {
    if (it->second == "json") {
      format = sluice::store::ReportFormat::kJson;
    } else if (it->second != "table") {
      std::cerr << "sluice usage show: --format: expected table or json\n";
      return 2;
    }
  }
  auto store = open_usage_store(o);
  if (!store) {
    std::cerr << "sluice usage show: " << store.error().message() << "\n";
    return store.error().kind() == sluice::ErrorKind::kBadRequest ? 2 : 1;
  }
  auto record = (*store)->find_usage(o.request_id);
  if (!record) {
    std::cerr << "sluice usage show: " << record.error().message() << "\n";
    return 1;
  }
  if (!record->has_value()) {
    std::cerr << "sluice usage show: no usage record for request id " << o.request_id << "\n";
    return 1;
  }
  std::cout << sluice::store::render_usage_record(**record, format);
  return 0;
}

// One JSON object per line per record (the spool's encoding, every field), oldest first.
int usage_export(const UsageOptions& o) {
  static constexpr std::string_view kRange[] = {"since", "until"};
  auto prepared = prepare_usage_command(o, kRange, "sluice usage export");
  if (const int* status = std::get_if<int>(&prepared)) {
    return *status;
  }
  auto& [request, store] = std::get<UsageCommand>(prepared);
  auto r = store->export_usage(request.query.from_ms, request.query.to_ms,
                               [](const sluice::store::UsageRecord& record) {
                                 std::cout << sluice::metering::record_to_json(record) << '\n';
                                 return static_cast<bool>(std::cout);
                               });
  std::cout.flush();
  if (!r) {
    std::cerr << "sluice usage export: " << r.error().message() << "\n";
    return 1;
  }
  return std::cout ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // glibc returns freed heap to the kernel eagerly (trim at 128 KiB, mmap for blocks over
  // 128 KiB), so a request that allocates a large prompt pays page faults on every call.
  // A gateway's working set is stable: keep freed memory in the process.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
  mallopt(M_TOP_PAD, 16 * 1024 * 1024);
  spdlog::set_default_logger(spdlog::stderr_color_mt("sluice"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  CLI::App app{"Sluice: a self-hosted AI gateway"};
  app.set_version_flag("--version", std::string("sluice ") + sluice::kVersion);
  app.require_subcommand(1);

  std::string check_path;
  auto* check = app.add_subcommand("check-config", "Validate a config file and exit");
  check->add_option("file", check_path, "YAML config file")->required();

  std::string routes_path;
  auto* routes = app.add_subcommand(
      "routes", "Print each route's policy tree, retry settings and worst-case latency, and exit");
  routes->add_option("file", routes_path, "YAML config file")->required();

  std::string serve_path;
  auto* serve_cmd = app.add_subcommand("serve", "Run the gateway");
  serve_cmd->add_option("-c,--config", serve_path, "YAML config file")->required();

  std::string prices_path;
  auto* check_prices_cmd = app.add_subcommand(
      "check-prices", "Validate a price catalogue (docs/metering.md, \"Pricing\") and exit");
  check_prices_cmd->add_option("file", prices_path, "YAML price catalogue")->required();

  EstimateOptions est;
  auto* estimate_cmd = app.add_subcommand(
      "estimate", "Per-call, daily and monthly (30-day) cost of a workload, and exit");
  estimate_cmd->add_option("--model", est.input.model, "Upstream model name")->required();
  estimate_cmd->add_option("--provider-kind", est.input.adapter,
                           "Adapter kind (openai, anthropic, gemini, ...); default: the first "
                           "that prices the model");
  estimate_cmd
      ->add_option("--input-tokens", est.input.input_tokens,
                   "Average prompt tokens per call, cache reads included")
      ->required();
  estimate_cmd
      ->add_option("--output-tokens", est.input.output_tokens,
                   "Average output tokens per call, reasoning included")
      ->required();
  estimate_cmd->add_option("--cache-read-tokens", est.input.cache_read_tokens,
                           "Average prompt tokens per call read from a cache");
  estimate_cmd->add_option("--calls-per-day", est.input.calls_per_day, "Calls per day")
      ->default_val(1);
  estimate_cmd->add_option("--prices", est.prices,
                           "Price catalogue file (default: the one built into the binary)");
  estimate_cmd->add_option("--at", est.at,
                           "RFC 3339 instant the prices are taken at (default: now)");

  UsageOptions usage_opts;
  auto* usage_cmd = app.add_subcommand(
      "usage", "Usage and cost from the store, grouped and filtered (docs/metering.md, \"Store\")");
  auto* usage_show_cmd =
      usage_cmd->add_subcommand("show", "One request's usage record with its attempts and timings");
  usage_show_cmd->add_option("request_id", usage_opts.request_id, "x-request-id of the request")
      ->required();
  auto* usage_export_cmd = usage_cmd->add_subcommand(
      "export", "Every usage record started in a time range, one JSON object per line");
  usage_export_cmd->add_option_function<std::string>(
      "--since", [&](const std::string& v) { usage_opts.params["since"] = v; },
      "From (inclusive): 7d, 24h, 90m ago, 2026-11-01 (UTC) or RFC 3339; default all");
  usage_export_cmd->add_option_function<std::string>(
      "--until", [&](const std::string& v) { usage_opts.params["until"] = v; },
      "To (exclusive), same forms; default now and beyond");
  for (CLI::App* cmd : {usage_cmd, usage_show_cmd, usage_export_cmd}) {
    cmd->add_option("-c,--config", usage_opts.config, "YAML config file naming the store");
    cmd->add_option("--store", usage_opts.store,
                    "sqlite:PATH or postgresql://... instead of --config");
  }
  usage_show_cmd->add_option_function<std::string>(
      "--format", [&](const std::string& v) { usage_opts.params["format"] = v; }, "table or json");
  const std::map<std::string, std::string> usage_help = {
      {"by", "Group by: key,key_group,tenant,feature,alias,provider,model,outcome,day,hour"},
      {"since", "From (inclusive): 7d, 24h, 90m ago, 2026-11-01 (UTC) or RFC 3339"},
      {"until", "To (exclusive), same forms; default now and beyond"},
      {"limit", "Most rows (default 1000), most expensive first"},
      {"format", "table (default), json or csv"}};
  for (std::string_view name : sluice::store::usage_report_parameters()) {
    std::string flag = "--" + std::string(name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    const auto help = usage_help.find(std::string(name));
    usage_cmd->add_option_function<std::string>(
        flag,
        [&usage_opts, key = std::string(name)](const std::string& v) {
          usage_opts.params[key] = v;
        },
        help != usage_help.end() ? help->second : "Only this " + std::string(name) + " (exact)");
  }

  const auto run_tenancy_command = sluice::admin::add_tenancy_commands(app);

  CLI11_PARSE(app, argc, argv);
  try {
    if (const int status = run_tenancy_command(); status >= 0) {
      return status;
    }
    if (*check) {
      return check_config(check_path);
    }
    if (*routes) {
      return print_routes(routes_path);
    }
    if (*check_prices_cmd) {
      return check_prices(prices_path);
    }
    if (*estimate_cmd) {
      return estimate(std::move(est));
    }
    if (*usage_export_cmd) {
      return usage_export(usage_opts);
    }
    if (*usage_show_cmd) {
      return usage_show(usage_opts);
    }
    if (*usage_cmd) {
      return usage_report(usage_opts);
    }
    return serve(serve_path);
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
