#pragma once

#include "observability/access_log.h"
#include "pipeline/observer.h"

namespace sluice::pipeline {

// Writes one JSON line per request (format_access_log) to the access log when the request
// ends. One per worker: `worker` picks the log's per-worker queue.
class AccessLogObserver final : public RequestObserver {
 public:
  AccessLogObserver(observability::AccessLog& log, std::size_t worker)
      : log_(log), worker_(worker) {}

  void on_finish(const RequestContext& ctx) override;

 private:
  observability::AccessLog& log_;
  std::size_t worker_;
};

}  // namespace sluice::pipeline
