#pragma once

#include <functional>

#include "config/check_config_command.h"

namespace CLI {
class App;
}

namespace sluice::server {

// `sluice guardrails test FILE --policy NAME [--policy NAME ...] (--text TEXT | --text-file
// PATH)`: what the config's policies would do to a text, without a gateway or a request
// (docs/guardrails.md#trying-a-policy). Prints one JSON object: whether it blocks (and which
// policy and detector), the finds (policy, detector, action, count) and, unless blocked, the
// text as it would be sent; never a matched text on its own. Exit 0; 1 when the config or a
// policy name is wrong.
std::function<int()> add_guardrails_command(CLI::App& app, config::ConfigFileCheck check);

}  // namespace sluice::server
