#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace sluice::admin {

// `sluice cache stats` and `sluice cache purge [--route ALIAS] [--key-group G | --key KEY_ID |
// --shared]`: clients of the admin API's cache routes (cache_routes.h), like the groups and
// keys commands (admin_call.h: --admin-url, $SLUICE_ADMIN_KEY, --json). Adds the command to
// `app`; the returned function runs it (after app.parse) and returns the exit status, or -1 when
// it was not chosen.
std::function<int()> add_cache_commands(CLI::App& app);

}  // namespace sluice::admin
