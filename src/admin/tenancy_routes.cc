#include "admin/tenancy_routes.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "admin/tenancy_answers.h"
#include "admin/tenancy_errors.h"
#include "admin/tenancy_requests.h"
#include "config/scalars.h"
#include "store/usage_report.h"
#include "tenancy/key_secret.h"

namespace sluice::admin {

namespace {

namespace json = boost::json;
using store::TenancyState;
using tenancy::Change;
using tenancy::RuleContext;

constexpr std::size_t kMaxIdempotencyKey = 255;

Response from_error(const Error& e) {
  return Response::error(e.http_status(), e.code().empty() ? "error" : e.code(), e.message());
}

bool printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

// The key's answer after a change that kept it (update, revoke).
json::value key_after(const Change& change, std::string_view id) {
  return key_json(*tenancy::find_key(change.state, id));
}

// Who asks: the request's X-Request-Id (else one made here) and, for a change, its
// Idempotency-Key with the hash of what it asks.
Result<TenancyCaller> caller_of(const Request& request, std::int64_t now_ms) {
  static std::atomic<std::uint64_t> counter{0};
  TenancyCaller caller;
  caller.request_id = std::string(request.header("x-request-id"));
  if (caller.request_id.empty()) {
    caller.request_id = fmt::format("admin-{}-{}", now_ms, ++counter);
  }
  if (request.method == "GET") {
    return caller;
  }
  caller.idempotency_key = std::string(request.header("idempotency-key"));
  if (!caller.idempotency_key.empty()) {
    if (caller.idempotency_key.size() > kMaxIdempotencyKey || !printable(caller.idempotency_key)) {
      return Error(ErrorKind::kBadRequest, 400,
                   "Idempotency-Key: 1 to 255 printable ASCII characters")
          .with_code("invalid_request");
    }
    caller.request_sha256 =
        config::sha256_hex(fmt::format("{}\n{}\n{}", request.method, request.path, request.body));
  }
  return caller;
}

}  // namespace

TenancyRoutes::TenancyRoutes(OpenStore open, Options options)
    : open_(std::move(open)), options_(std::move(options)) {}

TenancyRoutes::~TenancyRoutes() = default;

void TenancyRoutes::add_to(Router& router) {
  router.add("GET", "/admin/v1/groups", Access::kAdmin, [this](const Request& r) {
    return read(r, [](const TenancyState& s) -> Result<json::value> {
      json::array groups;
      for (const store::KeyGroup& g : s.groups) {
        groups.push_back(group_json(g, s));
      }
      return json::object{{"groups", std::move(groups)}};
    });
  });
  router.add("GET", "/admin/v1/groups/{}", Access::kAdmin, [this](const Request& r) {
    return read(r, [&](const TenancyState& s) -> Result<json::value> {
      if (const store::KeyGroup* g = tenancy::find_group(s, r.path_params[0])) {
        return group_json(*g, s);
      }
      return rule_refusal(
          {.kind = tenancy::RuleErrorKind::kGroupNotFound, .group = r.path_params[0]});
    });
  });
  router.add("POST", "/admin/v1/groups", Access::kAdmin, [this](const Request& r) {
    auto request = read_group_create(r.body);
    if (!request) {
      return from_error(request.error());
    }
    std::vector<tenancy::NewKey> keys;
    for (tenancy::KeyFields& fields : request->keys) {
      keys.push_back({tenancy::generate_key_id(), tenancy::generate_key_secret(), fields});
    }
    return change(
        r, 201,
        [&](TenancyState s, const RuleContext& c) {
          return tenancy::create_group(std::move(s), c, request->name, request->fields, keys);
        },
        [&](const Change& c, Secrets secrets) -> json::value {
          json::object o = group_json(*tenancy::find_group(c.state, request->name), c.state);
          if (request->with_keys) {
            json::array created;
            for (const tenancy::NewKey& k : keys) {
              created.push_back(
                  key_with_secret(*tenancy::find_key(c.state, k.id), k.secret, secrets));
            }
            o["keys"] = std::move(created);
          }
          return o;
        });
  });
  router.add("PATCH", "/admin/v1/groups/{}", Access::kAdmin, [this](const Request& r) {
    auto fields = read_group_update(r.body);
    if (!fields) {
      return from_error(fields.error());
    }
    const std::string& name = r.path_params[0];
    return change(
        r, 200,
        [&](TenancyState s, const RuleContext& c) {
          return tenancy::update_group(std::move(s), c, name, *fields);
        },
        [&](const Change& c, Secrets) -> json::value {
          return group_json(*tenancy::find_group(c.state, name), c.state);
        });
  });
  router.add("DELETE", "/admin/v1/groups/{}", Access::kAdmin, [this](const Request& r) {
    const std::string& name = r.path_params[0];
    return change(
        r, 200,
        [&](TenancyState s, const RuleContext& c) {
          return tenancy::delete_group(std::move(s), c, name);
        },
        [&](const Change&, Secrets) -> json::value {
          return json::object{{"deleted", name}};
        });
  });
  router.add("GET", "/admin/v1/keys", Access::kAdmin, [this](const Request& r) {
    const std::optional<std::string_view> group = r.param("group");
    return read(r, [&](const TenancyState& s) -> Result<json::value> {
      json::array keys;
      for (const store::ApiKey& k : s.keys) {
        if (!group || k.group == *group) {
          keys.push_back(key_json(k));
        }
      }
      return json::object{{"keys", std::move(keys)}};
    });
  });
  router.add("GET", "/admin/v1/keys/{}", Access::kAdmin, [this](const Request& r) {
    return read(r, [&](const TenancyState& s) -> Result<json::value> {
      if (const store::ApiKey* k = tenancy::find_key(s, r.path_params[0])) {
        return key_json(*k);
      }
      return rule_refusal({.kind = tenancy::RuleErrorKind::kKeyNotFound, .key = r.path_params[0]});
    });
  });
  router.add("POST", "/admin/v1/keys", Access::kAdmin, [this](const Request& r) {
    auto request = read_key_create(r.body);
    if (!request) {
      return from_error(request.error());
    }
    const tenancy::NewKey key{tenancy::generate_key_id(), tenancy::generate_key_secret(),
                              request->fields};
    return change(
        r, 201,
        [&](TenancyState s, const RuleContext& c) {
          return tenancy::create_key(std::move(s), c, request->group, key);
        },
        [&](const Change& c, Secrets secrets) -> json::value {
          return key_with_secret(*tenancy::find_key(c.state, key.id), key.secret, secrets);
        });
  });
  const auto update_key = [this](const Request& r, const tenancy::KeyFields& fields) {
    const std::string& id = r.path_params[0];
    return change(
        r, 200,
        [&](TenancyState s, const RuleContext& c) {
          return tenancy::update_key(std::move(s), c, id, fields);
        },
        [&](const Change& c, Secrets) { return key_after(c, id); });
  };
  router.add("PATCH", "/admin/v1/keys/{}", Access::kAdmin, [update_key](const Request& r) {
    auto fields = read_key_update(r.body);
    return fields ? update_key(r, *fields) : from_error(fields.error());
  });
  router.add("POST", "/admin/v1/keys/{}/revoke", Access::kAdmin, [update_key](const Request& r) {
    tenancy::KeyFields revoke;
    revoke.status = store::KeyStatus::kRevoked;
    return update_key(r, revoke);
  });
  router.add("POST", "/admin/v1/keys/{}/rotate", Access::kAdmin, [this](const Request& r) {
    const std::string& id = r.path_params[0];
    const std::string secret = tenancy::generate_key_secret();
    return change(
        r, 200,
        [&](TenancyState s, const RuleContext& c) {
          return tenancy::rotate_key(std::move(s), c, id, secret);
        },
        [&](const Change& c, Secrets secrets) -> json::value {
          return key_with_secret(*tenancy::find_key(c.state, id), secret, secrets);
        });
  });
  router.add("GET", "/admin/v1/audit", Access::kAdmin,
             [this](const Request& r) { return audit(r); });
}

TenancyChanges* TenancyRoutes::changes(Response& unavailable) {
  if (!changes_) {
    auto opened = open_();
    if (!opened) {
      unavailable = Response::error(503, "store_unavailable", opened.error().message());
      return nullptr;
    }
    if (!*opened) {
      unavailable = Response::error(404, "no_store",
                                    "no store is configured (store: none): keys are not kept");
      return nullptr;
    }
    // The usage sink migrates at start too, on its own thread: whichever comes first applies
    // the migrations, the other finds them applied.
    if (auto migrated = (*opened)->migrate(); !migrated) {
      unavailable = Response::error(503, "store_unavailable", migrated.error().message());
      return nullptr;
    }
    store_ = std::move(*opened);
    changes_ = std::make_unique<TenancyChanges>(*store_, options_);
  }
  return changes_.get();
}

Response TenancyRoutes::answer(const TenancyCaller& caller, const Result<TenancyAnswer>& answer) {
  Response r = answer ? Response::json(json::serialize(answer->body), answer->status)
                      : from_error(answer.error());
  r.headers.emplace_back("X-Request-Id", caller.request_id);
  return r;
}

Response TenancyRoutes::change(const Request& request, int status, TenancyChanges::Rule rule,
                               TenancyChanges::Render render) {
  auto caller = caller_of(request, options_.now_ms());
  if (!caller) {
    return from_error(caller.error());
  }
  Response unavailable;
  TenancyChanges* c = changes(unavailable);
  if (c == nullptr) {
    return unavailable;
  }
  return answer(*caller, c->apply(*caller, status, rule, render));
}

Response TenancyRoutes::read(const Request& request, Read read) {
  auto caller = caller_of(request, options_.now_ms());
  Response unavailable;
  if (changes(unavailable) == nullptr) {
    return unavailable;
  }
  auto state = store_->load_tenancy();
  if (!state) {
    return answer(*caller, store_failure(state.error()));
  }
  auto body = read(*state);
  if (!body) {
    return answer(*caller, body.error());
  }
  return answer(*caller, TenancyAnswer{200, std::move(*body)});
}

Response TenancyRoutes::audit(const Request& request) {
  store::AuditQuery q;
  for (const QueryParam& p : request.params) {
    if (p.name == "object_type") {
      q.object_type = p.value;
    } else if (p.name == "object_id") {
      q.object_id = p.value;
    } else if (p.name == "since" || p.name == "until") {
      const auto ms = store::parse_report_time(p.value, options_.now_ms());
      if (!ms) {
        return Response::error(400, "invalid_parameter",
                               p.name + ": expected 7d, 24h, 90m, a date or an RFC 3339 time");
      }
      (p.name == "since" ? q.from_ms : q.to_ms) = *ms;
    } else if (p.name == "limit") {
      unsigned limit = 0;
      const auto [end, ec] =
          std::from_chars(p.value.data(), p.value.data() + p.value.size(), limit);
      if (ec != std::errc() || end != p.value.data() + p.value.size() || limit < 1 ||
          limit > 10000) {
        return Response::error(400, "invalid_parameter", "limit: expected 1 to 10000");
      }
      q.limit = limit;
    } else {
      return Response::error(400, "invalid_parameter", "unknown parameter " + p.name);
    }
  }
  auto caller = caller_of(request, options_.now_ms());
  Response unavailable;
  if (changes(unavailable) == nullptr) {
    return unavailable;
  }
  auto entries = store_->list_audit(q);
  if (!entries) {
    return answer(*caller, store_failure(entries.error()));
  }
  return answer(*caller, TenancyAnswer{200, audit_json(*entries)});
}

}  // namespace sluice::admin
