#include "admin/tenancy_cli.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "admin/admin_call.h"
#include "codec/percent.h"
#include "store/usage_report.h"

namespace sluice::admin {

namespace {

namespace json = boost::json;

// What the command line said, filled by CLI11 and read when the chosen command runs.
struct Invocation {
  std::string admin_url;
  bool json_output = false;
  std::string idempotency_key;
  std::string target;                        // group name or key id
  std::map<std::string, std::string> given;  // flag (without dashes) -> value
  std::function<int()> run;
};

// "12.5" -> 12500000; nullopt unless a non-negative decimal with at most six places.
std::optional<std::int64_t> parse_amount(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || frac.size() > 6 || (dot != std::string_view::npos && frac.empty())) {
    return std::nullopt;
  }
  std::int64_t units = 0;
  auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), units);
  if (ec != std::errc() || end != whole.data() + whole.size() || units < 0 ||
      units > INT64_MAX / 1'000'000) {
    return std::nullopt;
  }
  std::int64_t micros = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const char c = i < frac.size() ? frac[i] : '0';
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    micros = micros * 10 + (c - '0');
  }
  return units * 1'000'000 + micros;
}

std::optional<std::int64_t> parse_count(std::string_view text) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0) {
    return std::nullopt;
  }
  return n;
}

json::array split_list(std::string_view text) {
  json::array out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    if (const std::string_view item = text.substr(0, comma); !item.empty()) {
      out.emplace_back(item);
    }
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

// The API body from the flags given; an error names the flag.
Result<json::object> body_from(const std::map<std::string, std::string>& given) {
  json::object body;
  json::object budget;
  for (const auto& [flag, value] : given) {
    const auto bad = [&](std::string_view what) {
      return Error(ErrorKind::kBadRequest, fmt::format("--{}: expected {}", flag, what));
    };
    if (flag == "description" || flag == "group" || flag == "name") {
      body[flag] = value;
    } else if (flag == "rpm" || flag == "tpm" || flag == "concurrency") {
      const auto n = parse_count(value);
      if (!n) {
        return bad("a whole number >= 0");
      }
      body[flag] = *n;
    } else if (flag == "aliases") {
      body["allowed_aliases"] = split_list(value);
    } else if (flag == "allocation") {
      if (value == "none") {
        body["allocation_micros"] = nullptr;
        continue;
      }
      const auto micros = parse_amount(value);
      if (!micros) {
        return bad("an amount (12.50) or none");
      }
      body["allocation_micros"] = *micros;
    } else if (flag == "expires") {
      body["expires_at"] = value == "never" ? json::value(nullptr) : json::value(value);
    } else if (flag == "budget") {
      const auto micros = parse_amount(value);
      if (!micros || *micros == 0) {
        return bad("an amount above 0 (1000 or 12.50)");
      }
      budget["amount_micros"] = *micros;
    } else if (flag == "period" || flag == "mode" || flag == "time-zone" || flag == "starts-at") {
      std::string field = flag;
      std::replace(field.begin(), field.end(), '-', '_');
      budget[field] = value;
    } else if (flag == "no-budget") {
      body["budget"] = nullptr;
    } else if (flag == "disable" || flag == "enable") {
      body["disabled"] = flag == "disable";
    }
  }
  if (!budget.empty()) {
    if (body.contains("budget")) {
      return Error(ErrorKind::kBadRequest, "--no-budget and budget flags together");
    }
    body["budget"] = std::move(budget);
  }
  return body;
}

std::string text_of(const json::value& v) {
  if (v.is_string()) {
    return std::string(v.as_string());
  }
  if (v.is_null()) {
    return "-";
  }
  if (v.is_array()) {
    std::string out;
    for (const json::value& item : v.as_array()) {
      out += (out.empty() ? "" : ",") + text_of(item);
    }
    return out.empty() ? "(all)" : out;
  }
  return json::serialize(v);
}

std::string amount_of(const json::value& v) {
  return v.is_int64() ? store::format_micros(v.as_int64()) : text_of(v);
}

// Left-aligned columns, two spaces apart, a header line first.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      l += c + 1 == cells.size() ? cells[c] : fmt::format("{:<{}}  ", cells[c], width[c]);
    }
    out += l + "\n";
  };
  line(header);
  for (const auto& row : rows) {
    line(row);
  }
  return out;
}

std::string render_groups(const json::array& groups) {
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : groups) {
    const json::object& g = v.as_object();
    const json::value& b = g.at("budget");
    rows.push_back(
        {text_of(g.at("name")), b.is_object() ? amount_of(b.at("amount_micros")) : "-",
         b.is_object() ? text_of(b.at("period")) : "-", b.is_object() ? text_of(b.at("mode")) : "-",
         amount_of(g.at("allocated_micros")), text_of(g.at("rpm")), text_of(g.at("tpm")),
         text_of(g.at("concurrency")), g.at("disabled").as_bool() ? "disabled" : "active",
         text_of(g.at("allowed_aliases"))});
  }
  return table({"NAME", "BUDGET", "PERIOD", "MODE", "ALLOCATED", "RPM", "TPM", "CONCURRENCY",
                "STATUS", "ALIASES"},
               rows);
}

std::string render_keys(const json::array& keys) {
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : keys) {
    const json::object& k = v.as_object();
    rows.push_back({text_of(k.at("id")), text_of(k.at("name")), text_of(k.at("group")),
                    text_of(k.at("prefix")), text_of(k.at("status")),
                    amount_of(k.at("allocation_micros")), text_of(k.at("rpm")),
                    text_of(k.at("tpm")), text_of(k.at("expires_at")),
                    text_of(k.at("allowed_aliases"))});
  }
  return table(
      {"ID", "NAME", "GROUP", "PREFIX", "STATUS", "ALLOCATION", "RPM", "TPM", "EXPIRES", "ALIASES"},
      rows);
}

// A readable rendering of any answer of the API.
std::string render(const json::value& answer) {
  if (!answer.is_object()) {
    return json::serialize(answer) + "\n";
  }
  const json::object& o = answer.as_object();
  if (const json::value* groups = o.if_contains("groups")) {
    return render_groups(groups->as_array());
  }
  if (const json::value* keys = o.if_contains("keys"); keys != nullptr && !o.contains("name")) {
    return render_keys(keys->as_array());
  }
  if (const json::value* deleted = o.if_contains("deleted")) {
    return "deleted key group " + text_of(*deleted) + "\n";
  }
  std::string out;
  if (o.contains("group")) {  // one key
    out = render_keys(json::array{answer});
    if (const json::value* secret = o.if_contains("secret"); secret && secret->is_string()) {
      out += "\nsecret: " + std::string(secret->as_string()) +
             "\n(shown once: store it now; Sluice keeps only its hash)\n";
    }
    return out;
  }
  out = render_groups(json::array{answer});
  if (const json::value* keys = o.if_contains("keys")) {
    out += "\n" + render_keys(keys->as_array());
    for (const json::value& k : keys->as_array()) {
      if (const json::value* s = k.as_object().if_contains("secret"); s && s->is_string()) {
        out += "secret of " + text_of(k.at("name")) + ": " + std::string(s->as_string()) + "\n";
      }
    }
    out += "(secrets are shown once: store them now)\n";
  }
  return out;
}

// Sends one request and prints the answer; the exit status.
int call(const Invocation& inv, std::string_view command, std::string_view method,
         const std::string& target, const std::string& body) {
  return run_admin_call(
      {command, inv.admin_url, method, target, body, inv.idempotency_key, inv.json_output}, render);
}

// Adds a subcommand whose flags (name -> help) fill Invocation::given, and whose action is run.
CLI::App* command(CLI::App& parent, const std::shared_ptr<Invocation>& inv, std::string name,
                  std::string help, const std::vector<std::pair<std::string, std::string>>& flags,
                  std::function<int()> action) {
  CLI::App* sub = parent.add_subcommand(std::move(name), std::move(help));
  sub->add_option("--admin-url", inv->admin_url,
                  "Admin listener (default $SLUICE_ADMIN_URL, else http://127.0.0.1:8081)");
  sub->add_flag("--json", inv->json_output, "Print the API's JSON answer");
  for (const auto& [flag, flag_help] : flags) {
    if (flag == "no-budget" || flag == "disable" || flag == "enable") {
      sub->add_flag_callback(
          "--" + flag, [inv, f = flag] { inv->given[f] = ""; }, flag_help);
    } else {
      sub->add_option_function<std::string>(
          "--" + flag, [inv, f = flag](const std::string& v) { inv->given[f] = v; }, flag_help);
    }
  }
  sub->callback([inv, action = std::move(action)] { inv->run = action; });
  return sub;
}

void mutating(CLI::App* sub, const std::shared_ptr<Invocation>& inv) {
  sub->add_option("--idempotency-key", inv->idempotency_key,
                  "Do the change at most once: a retry with the same key gets the first answer");
}

}  // namespace

std::function<int()> add_tenancy_commands(CLI::App& app) {
  auto inv = std::make_shared<Invocation>();
  inv->admin_url = default_admin_url();
  const std::vector<std::pair<std::string, std::string>> group_flags = {
      {"description", "Free text"},
      {"budget", "Budget amount in currency units (12.50)"},
      {"period", "monthly (default) or cumulative"},
      {"mode", "hard (default: refuse when spent) or advisory"},
      {"time-zone", "IANA time zone of a monthly budget (default UTC)"},
      {"starts-at", "Start of a cumulative budget (RFC 3339)"},
      {"rpm", "Requests per minute of the whole group (0 = none)"},
      {"tpm", "Tokens per minute of the whole group (0 = none)"},
      {"concurrency", "Requests in flight at once (0 = none)"},
      {"aliases", "Allowed model aliases, comma-separated (empty = all)"}};
  const std::vector<std::pair<std::string, std::string>> key_flags = {
      {"allocation", "Exclusive allocation out of the group's budget (12.50, or none)"},
      {"aliases", "Allowed model aliases, comma-separated, within the group's"},
      {"rpm", "Requests per minute of this key (0 = none)"},
      {"tpm", "Tokens per minute of this key (0 = none)"},
      {"expires", "Expiry (RFC 3339), or never"}};
  const auto with_body = [inv](std::string command, std::string method,
                               std::function<std::string()> target) {
    return [inv, command, method, target]() -> int {
      const std::string path = target();  // may add the positional name to the body
      auto body = body_from(inv->given);
      if (!body) {
        std::cerr << "sluice " << command << ": " << body.error().message() << "\n";
        return 2;
      }
      return call(*inv, command, method, path, json::serialize(*body));
    };
  };

  CLI::App* groups = app.add_subcommand("groups", "Key groups in the store (admin API)");
  groups->require_subcommand(1);
  command(*groups, inv, "list", "List key groups", {},
          [inv] { return call(*inv, "groups list", "GET", "/admin/v1/groups", ""); });
  auto* gcreate = command(*groups, inv, "create", "Create a key group", group_flags,
                          with_body("groups create", "POST", [inv] {
                            inv->given["name"] = inv->target;
                            return std::string("/admin/v1/groups");
                          }));
  gcreate->add_option("name", inv->target, "Key group name")->required();
  mutating(gcreate, inv);
  auto update_flags = group_flags;
  update_flags.push_back({"no-budget", "Remove the budget"});
  update_flags.push_back({"disable", "Refuse every key of the group"});
  update_flags.push_back({"enable", "Accept the group's keys again"});
  auto* gupdate = command(*groups, inv, "update", "Change a key group", update_flags,
                          with_body("groups update", "PATCH", [inv] {
                            return "/admin/v1/groups/" + codec::percent_encode(inv->target);
                          }));
  gupdate->add_option("name", inv->target, "Key group name")->required();
  mutating(gupdate, inv);
  auto* gdelete =
      command(*groups, inv, "delete", "Delete a key group whose keys are all revoked", {}, [inv] {
        return call(*inv, "groups delete", "DELETE",
                    "/admin/v1/groups/" + codec::percent_encode(inv->target), "");
      });
  gdelete->add_option("name", inv->target, "Key group name")->required();
  mutating(gdelete, inv);

  CLI::App* keys = app.add_subcommand("keys", "API keys in the store (admin API)");
  keys->require_subcommand(1);
  command(*keys, inv, "list", "List keys", {{"group", "Only this key group's"}}, [inv] {
    const auto g = inv->given.find("group");
    return call(*inv, "keys list", "GET",
                g == inv->given.end() ? std::string("/admin/v1/keys")
                                      : "/admin/v1/keys?group=" + codec::percent_encode(g->second),
                "");
  });
  auto create_flags = key_flags;
  create_flags.push_back({"group", "The key group (required)"});
  auto* kcreate = command(*keys, inv, "create", "Create a key; prints its secret once",
                          create_flags, with_body("keys create", "POST", [inv] {
                            inv->given["name"] = inv->target;
                            return std::string("/admin/v1/keys");
                          }));
  kcreate->add_option("name", inv->target, "Key name")->required();
  mutating(kcreate, inv);
  auto kupdate_flags = key_flags;
  kupdate_flags.push_back({"name", "New name"});
  auto* kupdate = command(*keys, inv, "update", "Change a key", kupdate_flags,
                          with_body("keys update", "PATCH", [inv] {
                            return "/admin/v1/keys/" + codec::percent_encode(inv->target);
                          }));
  kupdate->add_option("id", inv->target, "Key id (key_...)")->required();
  mutating(kupdate, inv);
  for (const char* status : {"disable", "enable"}) {
    auto* sub = command(*keys, inv, status, std::string(status) + " a key (its allocation is kept)",
                        {}, [inv, status] {
                          const std::string body = std::string_view(status) == "disable"
                                                       ? R"({"status":"disabled"})"
                                                       : R"({"status":"active"})";
                          return call(*inv, std::string("keys ") + status, "PATCH",
                                      "/admin/v1/keys/" + codec::percent_encode(inv->target), body);
                        });
    sub->add_option("id", inv->target, "Key id (key_...)")->required();
    mutating(sub, inv);
  }
  const std::vector<std::pair<std::string, std::string>> actions = {
      {"revoke", "Revoke a key for good (releases its allocation)"},
      {"rotate", "Give a key a new secret (printed once); the old one stops working"}};
  for (const auto& [action, help] : actions) {
    auto* sub = command(*keys, inv, action, help, {}, [inv, action = action] {
      return call(*inv, "keys " + action, "POST",
                  "/admin/v1/keys/" + codec::percent_encode(inv->target) + "/" + action, "");
    });
    sub->add_option("id", inv->target, "Key id (key_...)")->required();
    mutating(sub, inv);
  }

  // The chosen action captures `inv`; moved out before it runs, so `inv` does not keep itself
  // alive through its own `run` (a reference cycle LeakSanitizer reports at exit).
  return [inv]() -> int {
    std::function<int()> run = std::exchange(inv->run, nullptr);
    return run ? run() : -1;
  };
}

}  // namespace sluice::admin
