#include "redis/health.h"

#include "spdlog/spdlog.h"

namespace sluice::redis {

void Health::failed(std::string_view why) {
  errors_.fetch_add(1, std::memory_order_relaxed);
  if (up_.exchange(false, std::memory_order_acq_rel)) {
    spdlog::warn("{}: redis at {} is not answering ({}): {} until it does", feature_, where_, why,
                 meanwhile_);
  }
}

void Health::answered() {
  if (!up_.load(std::memory_order_relaxed) && !up_.exchange(true, std::memory_order_acq_rel)) {
    spdlog::info("{}: redis at {} answers again", feature_, where_);
  }
}

}  // namespace sluice::redis
