#include "pipeline/access_log_observer.h"

namespace sluice::pipeline {

void AccessLogObserver::on_finish(const RequestContext& ctx) {
  log_.write(worker_, format_access_log(ctx));
}

}  // namespace sluice::pipeline
