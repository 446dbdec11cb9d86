#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace sluice::admin {

// `sluice groups list|create|update|delete` and `sluice keys
// list|create|update|disable|enable|revoke|rotate`: clients of the admin API (tenancy_routes.h)
// over HTTP. The listener is --admin-url (default $SLUICE_ADMIN_URL, else http://127.0.0.1:8081);
// the credential is $SLUICE_ADMIN_KEY only (never a flag: command lines end up in shell history and
// process lists). Output: a readable table, or the API's JSON with --json. Amounts are decimal
// currency units ("12.50") on the command line, integer micro-units in the API.
//
// Adds both commands to `app`; the returned function runs the one parsed (after app.parse) and
// returns the exit status, or -1 when neither was chosen.
std::function<int()> add_tenancy_commands(CLI::App& app);

}  // namespace sluice::admin
