#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::providers {

// One request an adapter's credential refresher makes: a POST (an OAuth token endpoint, AWS
// STS), a GET (a metadata server) or a PUT (EC2's IMDSv2 session token).
struct FetchRequest {
  enum class Method : std::uint8_t { kPost, kGet, kPut };
  std::string_view url;
  Method method = Method::kPost;
  std::string_view content_type;  // "application/x-www-form-urlencoded"; "" for none (a GET)
  std::string_view accept;        // "" for none
  std::span<const std::pair<std::string_view, std::string_view>> headers;  // besides those
  std::string_view body;                                                   // a POST's
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
