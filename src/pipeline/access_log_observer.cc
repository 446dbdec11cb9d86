#include "pipeline/access_log_observer.h"

#include "pipeline/snapshot.h"

namespace sluice::pipeline {

void AccessLogObserver::on_finish(const RequestContext& ctx) {
  // Disabled: no line is formatted at all (it cost about 1 us per request on the way to
  // /dev/null). The file is opened at start, so a reload can turn the log off and on again,
  // but one that starts disabled writes nowhere until a restart.
  if (ctx.snapshot != nullptr && !ctx.snapshot->config().access_log.enabled) {
    return;
  }
  log_.write(worker_, format_access_log(ctx));
}

}  // namespace sluice::pipeline
