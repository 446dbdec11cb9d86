#include "pipeline/filters/live_mirror.h"

#include "cache/live_record.h"

namespace sluice::pipeline {

void LiveMirror::events(std::span<const ir::StreamEvent> events, std::string_view provider,
                        std::string_view model, const std::optional<ir::Usage>& usage) {
  if (ended_ || events.empty()) {
    return;
  }
  std::string record = cache::encode_live_events(events, provider, model, usage);
  bytes_ += record.size();
  if (bytes_ > max_bytes_) {
    end(false, provider, model, usage);  // larger than an entry may be: no waiter gets it
    return;
  }
  store_.append_live(alias_, tenant_, key_, std::move(record), ttl_,
                     [watch = watch_](std::chrono::milliseconds left) {
                       watch->until = std::chrono::steady_clock::now() + left;
                     });
}

void LiveMirror::end(bool whole, std::string_view provider, std::string_view model,
                     const std::optional<ir::Usage>& usage) {
  if (ended_) {
    return;
  }
  ended_ = true;
  store_.append_live(alias_, tenant_, key_, cache::encode_live_end(whole, provider, model, usage),
                     ttl_, nullptr);
}

}  // namespace sluice::pipeline
