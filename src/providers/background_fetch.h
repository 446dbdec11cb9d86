#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace sluice::providers {

// One POST an adapter's credential refresher makes (an OAuth token endpoint, AWS STS).
struct FetchRequest {
  std::string_view url;
  std::string_view content_type;  // "application/x-www-form-urlencoded"
  std::string_view accept;        // "" for none
  std::string_view body;
};

// What it came to: the answer's status and body, or status 0 and why not.
struct FetchAnswer {
  int status = 0;
  std::string body;
  std::string failure;
};

// How refreshers reach the network. The HTTP client lives above providers/ (http/), so the
// server installs it once at start-up, before the first snapshot is built; until then (and in
// commands that never serve, such as check-config) a fetch fails at once with "no HTTP client",
// and refreshers retry on their own schedule. Blocking: call only from a refresher's thread,
// never a worker.
using BackgroundFetch = FetchAnswer (*)(const FetchRequest& request,
                                        std::chrono::milliseconds timeout);
void install_background_fetch(BackgroundFetch fetch);
bool background_fetch_installed();
FetchAnswer background_fetch(const FetchRequest& request, std::chrono::milliseconds timeout);

}  // namespace sluice::providers
