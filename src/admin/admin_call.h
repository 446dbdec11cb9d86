#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace sluice::admin {

// One command-line call of the admin API (the groups, keys and cache commands): the listener
// is `admin_url`, the credential $SLUICE_ADMIN_KEY only (never a flag: command lines end up in
// shell history and process lists).
struct AdminCall {
  std::string_view command;  // "keys create": error lines start "sluice <command>: "
  std::string_view admin_url;
  std::string_view method;
  std::string target;  // path and query
  std::string body;
  std::string idempotency_key;  // sent as Idempotency-Key when not empty
  bool json_output = false;     // print the API's JSON instead of `render`'s text
};

// Sends `call` and prints its answer on stdout (rendered, or JSON), or why not on stderr (the
// API's error message and code, or the transport's); the exit status: 0, 1 on a failure, 2
// without SLUICE_ADMIN_KEY.
int run_admin_call(const AdminCall& call,
                   const std::function<std::string(const boost::json::value&)>& render);

// The admin listener the commands call: $SLUICE_ADMIN_URL, else http://127.0.0.1:8081.
std::string default_admin_url();

}  // namespace sluice::admin
