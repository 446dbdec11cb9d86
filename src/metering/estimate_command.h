#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace sluice::metering {

// `sluice estimate --model M --input-tokens N --output-tokens N [...]`: the per-call, daily and
// monthly (30-day) cost of a workload at the prices of the built-in catalogue or --prices
// FILE, at --at (RFC 3339) or now. Exit 0 priced, 2 when no catalogue entry prices the model,
// 1 on an error (on stderr).
//
// Adds the command to `app`; the returned function runs it when it was chosen (after
// app.parse) and returns the exit status, or -1 when it was not.
std::function<int()> add_estimate_command(CLI::App& app);

}  // namespace sluice::metering
