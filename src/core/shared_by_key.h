#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/result.h"

namespace sluice {

// Live objects by a key, so that everything asking for the same key while one lives shares it:
// a credential refresher that every provider and every reloaded snapshot naming the same
// credentials uses, rather than each fetching its own. Holds weak references only: an object
// lives as long as its users, and dead entries are dropped on the next lookup. For set-up
// paths (snapshot builds), not requests: one mutex. Thread-safe.
template <class T>
class SharedByKey {
 public:
  // The live object for `key`, else make() (a Result<std::shared_ptr<T>>), kept for the next
  // caller.
  template <class Make>
  Result<std::shared_ptr<T>> get_or_make(const std::string& key, Make&& make) {
    std::lock_guard lock(mutex_);
    std::erase_if(live_, [](const auto& entry) { return entry.second.expired(); });
    if (auto it = live_.find(key); it != live_.end()) {
      if (auto live = it->second.lock()) {
        return live;
      }
    }
    Result<std::shared_ptr<T>> made = make();
    if (made) {
      live_[key] = *made;
    }
    return made;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<T>, std::less<>> live_;
};

}  // namespace sluice
