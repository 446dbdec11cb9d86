#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "core/function_ref.h"
#include "core/result.h"
#include "store/store.h"

namespace sluice::tenancy {

// An answer of the admin service: HTTP status and JSON body. Errors are Result errors whose
// http_status() and code() say how to answer (400 malformed, 404 unknown object, 409 the
// change conflicts with what is stored, 422 a reference or scope that is not allowed, 503 the
// store is unavailable or too busy).
struct AdminReply {
  AdminReply(int status, boost::json::value body,
             std::optional<boost::json::value> stored = std::nullopt)
      : status(status), body(std::move(body)), stored(std::move(stored)) {}

  int status = 200;
  boost::json::value body;
  // What an Idempotency-Key stores and replays in place of `body` when `body` shows a secret:
  // the same answer with each secret withheld (null, and a note). Empty: `body` shows none.
  std::optional<boost::json::value> stored;
};

// Who asks, for the audit log, and the Idempotency-Key of the request, if any.
struct AdminCaller {
  std::string actor = "admin";
  std::string request_id;
  std::string idempotency_key;  // "" = none
  std::string request_sha256;   // of method, path and body; with idempotency_key
};

// The rules of key groups and API keys (docs/tenancy.md, "Keys and groups in the store"), in
// one place: the admin routes and their tests call it; it reads and commits through a Store.
//
// Every change loads the tenancy state, checks the rules against it, and commits the change
// with its audit entries (and the stored answer of an Idempotency-Key) in one transaction at
// the revision it read; a conflict (someone else committed meanwhile) re-reads and re-checks,
// up to kMaxAttempts times. The rules:
// - the allocations of a group's keys that are not revoked never sum above the group's budget
//   amount (disabled keys keep theirs; revoking releases it);
// - a key's allocation, or a group's amount, is never set below what was already spent in the
//   budget's current period (the usage ledger, by key name or key group);
// - a key's allowed aliases are within its group's (when the group has a list);
// - a revoked key is final; a key name is unique and never one of the config file's keys.
// The secret of a new key is in the create answer only; the store keeps its SHA-256 and prefix.
//
// Blocking (store calls); one thread at a time, like the Store it uses.
class AdminService {
 public:
  static constexpr int kMaxAttempts = 5;

  struct Options {
    // Whether the config file has a key of this name (a store key may not take it).
    std::function<bool(std::string_view)> config_key_named;
    std::function<std::int64_t()> now_ms;  // wall clock, unix ms
  };

  AdminService(store::Store& store, Options options);

  Result<AdminReply> list_groups();
  Result<AdminReply> get_group(std::string_view name);
  // Body: a group object, optionally with "keys": [key objects without "group"], all created
  // in one commit. 201.
  Result<AdminReply> create_group(const boost::json::value& body, const AdminCaller& caller);
  Result<AdminReply> update_group(std::string_view name, const boost::json::value& body,
                                  const AdminCaller& caller);
  // Only when every key of the group is revoked.
  Result<AdminReply> delete_group(std::string_view name, const AdminCaller& caller);

  Result<AdminReply> list_keys(std::optional<std::string_view> group);
  Result<AdminReply> get_key(std::string_view id);
  // 201 with "secret" (the only time it is shown).
  Result<AdminReply> create_key(const boost::json::value& body, const AdminCaller& caller);
  Result<AdminReply> update_key(std::string_view id, const boost::json::value& body,
                                const AdminCaller& caller);
  Result<AdminReply> revoke_key(std::string_view id, const AdminCaller& caller);
  // A new secret for the key (same id, name, group, allocation and quotas); the old secret is
  // refused from the next tenancy revision on. 200 with "secret", shown this once.
  Result<AdminReply> rotate_key(std::string_view id, const AdminCaller& caller);

  // Newest first. object_id matches a group name or a key id.
  Result<AdminReply> list_audit(const store::AuditQuery& query);

  // The state being changed by one attempt of a mutation, and the commit it builds.
  struct Change;

 private:
  using Mutation = FunctionRef<Result<AdminReply>(Change&)>;
  // Runs `mutate` against a fresh state until its commit lands (or fails other than by
  // conflict); answers a repeated Idempotency-Key with the stored answer.
  Result<AdminReply> mutate(const AdminCaller& caller, Mutation mutation);
  // What was spent in the current period of `budget` by usage records matching `where`.
  Result<std::int64_t> consumed(const store::Budget& budget, store::Dimension dimension,
                                const std::string& value);
  Result<void> check_allocations(const Change& change, const store::KeyGroup& group);
  Result<AdminReply> put_key(Change& change, const store::KeyGroup& group,
                             const boost::json::object& body, std::string_view group_field);

  store::Store& store_;
  Options options_;
};

// "sk-slc-" and 40 base62 characters from OpenSSL's CSPRNG.
std::string generate_key_secret();
// The part of a secret shown in lists and logs.
std::string key_prefix(std::string_view secret);

}  // namespace sluice::tenancy
