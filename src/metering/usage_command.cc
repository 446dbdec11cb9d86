#include "metering/usage_command.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "config/config.h"
#include "metering/record_json.h"
#include "store/store.h"
#include "store/usage_report.h"

namespace sluice::metering {
namespace {

// Where the store is, and the report's parameters (usage_report.h) as given.
struct UsageOptions {
  std::string config;
  std::string store;  // sqlite:PATH or a postgresql:// URL
  std::map<std::string, std::string> params;
  std::string request_id;  // `usage show`
};

// The store named by --store or by the config's `store:`, without creating or migrating
// anything: a reader must not turn a mistyped path into an empty database.
Result<std::unique_ptr<store::Store>> open_usage_store(const UsageOptions& o,
                                                       const ConfigFileLoader& load_config) {
  config::StoreSettings settings;
  if (!o.store.empty()) {
    if (o.store.starts_with("sqlite:")) {
      settings.kind = config::StoreSettings::Kind::kSqlite;
      settings.sqlite_path = o.store.substr(7);
    } else if (o.store.starts_with("postgresql://") || o.store.starts_with("postgres://")) {
      settings.kind = config::StoreSettings::Kind::kPostgres;
      settings.postgres_url = o.store;
    } else {
      return Error(ErrorKind::kBadRequest,
                   "--store: expected sqlite:PATH or a postgresql:// URL (value not shown)");
    }
  } else if (!o.config.empty()) {
    auto cfg = load_config(o.config);
    if (!cfg) {
      return cfg.error();
    }
    settings = (*cfg)->store;
  } else {
    return Error(ErrorKind::kBadRequest, "give --config FILE or --store sqlite:PATH|URL");
  }
  if (settings.kind == config::StoreSettings::Kind::kNone) {
    return Error(ErrorKind::kBadRequest, o.config + ": the config has no store (store: none)");
  }
  return store::open_store(settings, store::OpenMode::kExisting);
}

// The report parameters among `names` that were given, parsed, and the store they read: or the
// exit status after printing why not (2 bad parameters, 1 no store).
struct UsageCommand {
  store::UsageReportRequest request;
  std::unique_ptr<store::Store> store;
};
std::variant<UsageCommand, int> prepare_usage_command(const UsageOptions& o,
                                                      const ConfigFileLoader& load_config,
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
  auto request = store::parse_usage_report(params, now);
  if (!request) {
    std::cerr << command << ": " << request.error().message() << "\n";
    return 2;
  }
  auto store = open_usage_store(o, load_config);
  if (!store) {
    std::cerr << command << ": " << store.error().message() << "\n";
    return store.error().kind() == ErrorKind::kBadRequest ? 2 : 1;
  }
  return UsageCommand{std::move(*request), std::move(*store)};
}

int usage_report(const UsageOptions& o, const ConfigFileLoader& load_config) {
  auto prepared =
      prepare_usage_command(o, load_config, store::usage_report_parameters(), "sluice usage");
  if (const int* status = std::get_if<int>(&prepared)) {
    return *status;
  }
  auto& [request, store] = std::get<UsageCommand>(prepared);
  auto rows = store->query_usage(request.query);
  if (!rows) {
    std::cerr << "sluice usage: " << rows.error().message() << "\n";
    return 1;
  }
  std::cout << store::render_usage(request.query, *rows, request.format);
  return 0;
}

int usage_show(const UsageOptions& o, const ConfigFileLoader& load_config) {
  store::ReportFormat format = store::ReportFormat::kTable;
  if (auto it = o.params.find("format"); it != o.params.end()) {
    if (it->second == "json") {
      format = store::ReportFormat::kJson;
    } else if (it->second != "table") {
      std::cerr << "sluice usage show: --format: expected table or json\n";
      return 2;
    }
  }
  auto store = open_usage_store(o, load_config);
  if (!store) {
    std::cerr << "sluice usage show: " << store.error().message() << "\n";
    return store.error().kind() == ErrorKind::kBadRequest ? 2 : 1;
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
  std::cout << store::render_usage_record(**record, format);
  return 0;
}

// One JSON object per line per record (the spool's encoding, every field), oldest first.
int usage_export(const UsageOptions& o, const ConfigFileLoader& load_config) {
  static constexpr std::string_view kRange[] = {"since", "until"};
  auto prepared = prepare_usage_command(o, load_config, kRange, "sluice usage export");
  if (const int* status = std::get_if<int>(&prepared)) {
    return *status;
  }
  auto& [request, store] = std::get<UsageCommand>(prepared);
  auto r = store->export_usage(request.query.from_ms, request.query.to_ms,
                               [](const store::UsageRecord& record) {
                                 std::cout << record_to_json(record) << '\n';
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

std::function<int()> add_usage_command(CLI::App& app, ConfigFileLoader load_config) {
  auto o = std::make_shared<UsageOptions>();
  CLI::App* usage = app.add_subcommand(
      "usage", "Usage and cost from the store, grouped and filtered (docs/metering.md, \"Store\")");
  CLI::App* show =
      usage->add_subcommand("show", "One request's usage record with its attempts and timings");
  show->add_option("request_id", o->request_id, "x-request-id of the request")->required();
  CLI::App* exporter = usage->add_subcommand(
      "export", "Every usage record started in a time range, one JSON object per line");
  exporter->add_option_function<std::string>(
      "--since", [o](const std::string& v) { o->params["since"] = v; },
      "From (inclusive): 7d, 24h, 90m ago, 2026-11-01 (UTC) or RFC 3339; default all");
  exporter->add_option_function<std::string>(
      "--until", [o](const std::string& v) { o->params["until"] = v; },
      "To (exclusive), same forms; default now and beyond");
  for (CLI::App* cmd : {usage, show, exporter}) {
    cmd->add_option("-c,--config", o->config, "YAML config file naming the store");
    cmd->add_option("--store", o->store, "sqlite:PATH or postgresql://... instead of --config");
  }
  show->add_option_function<std::string>(
      "--format", [o](const std::string& v) { o->params["format"] = v; }, "table or json");
  const std::map<std::string, std::string> help_of = {
      {"by", "Group by: key,key_group,tenant,feature,alias,provider,model,outcome,day,hour"},
      {"since", "From (inclusive): 7d, 24h, 90m ago, 2026-11-01 (UTC) or RFC 3339"},
      {"until", "To (exclusive), same forms; default now and beyond"},
      {"limit", "Most rows (default 1000), most expensive first"},
      {"format", "table (default), json or csv"}};
  for (std::string_view name : store::usage_report_parameters()) {
    std::string flag = "--" + std::string(name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    const auto help = help_of.find(std::string(name));
    usage->add_option_function<std::string>(
        flag, [o, key = std::string(name)](const std::string& v) { o->params[key] = v; },
        help != help_of.end() ? help->second : "Only this " + std::string(name) + " (exact)");
  }
  return [usage, show, exporter, o, load = std::move(load_config)] {
    if (*exporter) {
      return usage_export(*o, load);
    }
    if (*show) {
      return usage_show(*o, load);
    }
    return *usage ? usage_report(*o, load) : -1;
  };
}

}  // namespace sluice::metering
