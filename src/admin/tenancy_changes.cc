#include "admin/tenancy_changes.h"

#include <boost/json.hpp>

#include "admin/tenancy_errors.h"
#include "store/tenancy_sql.h"
#include "tenancy/spend.h"

namespace sluice::admin {

namespace {

namespace json = boost::json;

Error refusal(int status, std::string code, std::string message) {
  return Error(status == 503 ? ErrorKind::kUnavailable : ErrorKind::kBadRequest, status,
               std::move(message))
      .with_code(std::move(code));
}

}  // namespace

TenancyChanges::TenancyChanges(store::Store& store, Options options)
    : store_(store), options_(std::move(options)) {
  if (!options_.config_key_named) {
    options_.config_key_named = [](std::string_view) { return false; };
  }
}

Result<TenancyAnswer> TenancyChanges::apply(const TenancyCaller& caller, int status, Rule rule,
                                            Render render) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const std::int64_t now_ms = options_.now_ms();
    if (!caller.idempotency_key.empty()) {
      auto stored = store_.find_idempotent(caller.idempotency_key, now_ms);
      if (!stored) {
        return store_failure(stored.error());
      }
      if (*stored) {
        if ((*stored)->request_sha256 != caller.request_sha256) {
          return refusal(422, "idempotency_key_reused",
                         "this Idempotency-Key was used for a different request");
        }
        boost::system::error_code ec;
        json::value body = json::parse((*stored)->body, ec);
        if (ec) {
          return refusal(500, "store_error", "a stored idempotent answer is not JSON");
        }
        return TenancyAnswer{(*stored)->status, std::move(body)};
      }
    }
    auto state = store_.load_tenancy();
    if (!state) {
      return store_failure(state.error());
    }
    const std::uint64_t revision = state->revision;
    auto change = rule(std::move(*state), tenancy::RuleContext{now_ms, options_.config_key_named});
    if (!change) {
      return rule_refusal(change.error());
    }
    if (change->edits.empty()) {
      return TenancyAnswer{status, render(*change, Secrets::kShown)};  // nothing to commit
    }
    if (auto within = check_spend_caps(*change, now_ms); !within) {
      return within.error();
    }
    store::TenancyCommit commit = commit_of(*change, caller, now_ms);
    commit.expected_revision = revision;
    if (!caller.idempotency_key.empty()) {
      commit.idempotency =
          store::IdempotentReply{caller.idempotency_key, caller.request_sha256, status,
                                 json::serialize(render(*change, Secrets::kWithheld)), now_ms};
    }
    auto committed = store_.commit_tenancy(commit);
    if (committed) {
      return TenancyAnswer{status, render(*change, Secrets::kShown)};
    }
    if (!store::is_tenancy_conflict(committed.error())) {
      return committed.error().http_status() == 400
                 ? refusal(409, "conflict", committed.error().message())
                 : store_failure(committed.error());
    }
  }
  return refusal(503, "busy", "too many concurrent changes; try again");
}

Result<void> TenancyChanges::check_spend_caps(const tenancy::Change& change, std::int64_t now_ms) {
  for (const tenancy::SpendCap& cap : change.spend_caps) {
    auto zone = TimeZone::load(cap.budget.time_zone);
    if (!zone) {
      return refusal(500, "invalid_time_zone", zone.error().message());
    }
    auto spent = tenancy::spent_in_period(store_, cap, *zone, now_ms);
    if (!spent) {
      return store_failure(spent.error());
    }
    if (auto within = tenancy::check_spend(cap, *spent); !within) {
      return rule_refusal(within.error());
    }
  }
  return {};
}

store::TenancyCommit TenancyChanges::commit_of(const tenancy::Change& change,
                                               const TenancyCaller& caller,
                                               std::int64_t now_ms) const {
  store::TenancyCommit commit;
  const auto audit = [&](std::string_view action, std::string_view type, const std::string& id,
                         std::string before, std::string after) {
    commit.audit.push_back(store::AuditEntry{0, now_ms, caller.actor, std::string(action),
                                             std::string(type), id, std::move(before),
                                             std::move(after), caller.request_id});
  };
  // The audit log keeps objects as the API shows them ("" for none).
  const auto group_text = [&](const std::optional<store::KeyGroup>& g) {
    return g ? json::serialize(group_json(*g, change.state)) : std::string();
  };
  const auto key_text = [](const std::optional<store::ApiKey>& k) {
    return k ? json::serialize(key_json(*k)) : std::string();
  };
  for (const tenancy::Edit& edit : change.edits) {
    if (const auto* g = std::get_if<tenancy::GroupEdit>(&edit)) {
      const std::string& name = g->after ? g->after->name : g->before->name;
      if (g->after) {
        commit.put_groups.push_back(*g->after);
      } else {
        commit.delete_groups.push_back(name);
      }
      audit(g->action, "group", name, group_text(g->before), group_text(g->after));
    } else {
      const auto& k = std::get<tenancy::KeyEdit>(edit);
      commit.put_keys.push_back(k.after);
      audit(k.action, "key", k.after.id, key_text(k.before), key_text(k.after));
    }
  }
  return commit;
}

}  // namespace sluice::admin
