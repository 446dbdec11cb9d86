#include "providers/background_fetch.h"

#include <atomic>

namespace sluice::providers {
namespace {

std::atomic<BackgroundFetch> installed{nullptr};

}  // namespace

void install_background_fetch(BackgroundFetch fetch) {
  installed.store(fetch, std::memory_order_release);
}

bool background_fetch_installed() { return installed.load(std::memory_order_acquire) != nullptr; }

FetchAnswer background_fetch(const FetchRequest& request, std::chrono::milliseconds timeout) {
  const BackgroundFetch fetch = installed.load(std::memory_order_acquire);
  if (fetch == nullptr) {
    return FetchAnswer{.status = 0, .body = {}, .failure = "no HTTP client installed"};
  }
  return fetch(request, timeout);
}

}  // namespace sluice::providers
