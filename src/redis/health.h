#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::redis {

// Whether one Redis answers a feature's commands, shared by every worker of an instance: a
// change of state is logged once (one line when Redis stops answering, one when it is back),
// never per request. Read by the metrics scrape (any thread).
class Health {
 public:
  // `feature`: who speaks ("cache"); `where`: host:port; `meanwhile`: what the feature does
  // while Redis does not answer ("answers come from the origin").
  Health(std::string feature, std::string where, std::string meanwhile)
      : feature_(std::move(feature)), where_(std::move(where)), meanwhile_(std::move(meanwhile)) {}

  // A command got no answer in time (down, slow, refused, too many waiting).
  void failed(std::string_view why);
  // A command was answered.
  void answered();

  bool up() const { return up_.load(std::memory_order_relaxed); }
  std::uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }

 private:
  const std::string feature_;
  const std::string where_;
  const std::string meanwhile_;
  std::atomic<bool> up_{true};
  std::atomic<std::uint64_t> errors_{0};
};

}  // namespace sluice::redis
