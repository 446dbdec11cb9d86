#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace sluice::metering {

// `sluice check-prices FILE`: validates a price catalogue (docs/metering.md, "Pricing") and
// prints its summary. Exit 0, or 1 with the error on stderr.
//
// Adds the command to `app`; the returned function runs it when it was chosen (after
// app.parse) and returns the exit status, or -1 when it was not.
std::function<int()> add_check_prices_command(CLI::App& app);

}  // namespace sluice::metering
