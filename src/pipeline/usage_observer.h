#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "metering/pricing.h"
#include "metering/usage_sink.h"
#include "pipeline/observer.h"
#include "store/usage_record.h"

namespace sluice::pipeline {

// Which requests get a usage record: model calls that got past routing, i.e. that made at least
// one upstream attempt or were answered by the gateway in the upstream's place (outcome set).
// Health checks, model lists, stored-object reads and requests refused before an attempt
// (authentication, malformed body, unknown or forbidden model, admission) get none: they used
// no model and cost nothing. They are in the access log and metrics.
bool gets_usage_record(const RequestContext& ctx);

// The x-sluice-feature value as recorded: bytes outside visible ASCII (0x21-0x7E) become '_',
// then it is cut to `max_length` bytes. Empty when the header is absent or empty.
std::string bounded_feature(std::string_view value, std::size_t max_length);

// What the price book charges for the request's model call: provider, adapter and model of
// the answering (last) attempt, the usage as reported, entered_at = ctx.wall_started.
metering::ChargeInput charge_input(const RequestContext& ctx);

// The request's usage record (the charge is ctx.charge, computed once by the pipeline). Timings:
//   total_us          ended - started
//   overhead_us       total - (every attempt's duration) - (every backoff): the gateway's own
//                     time (reading, decoding, translating, routing, writing to the caller
//                     between upstream reads is inside attempt durations)
//   queue_us          every backoff + every attempt's pool wait and connect (acquire)
//   upstream_ttfb_us  the answering attempt's request-written -> response-head
//   ttft_us           first token to the caller since started (streams; -1 otherwise)
//   output_tokens_per_s_milli  output tokens x 1000 per second of generation: from the first
//                     token to the end for streams, the answering attempt's duration otherwise
store::UsageRecord build_usage_record(const RequestContext& ctx, std::string_view record_id);
// The same into `record`, every field assigned (a record filled before keeps nothing of it).
void fill_usage_record(const RequestContext& ctx, std::string_view record_id,
                       store::UsageRecord& record);

// Hands each model call's usage record to the usage sink when the request ends. One per
// worker (the sink's per-worker queue); record ids are "<sink instance>-<worker>-<sequence>",
// unique across workers, instances and restarts. Never blocks: a full queue drops the record
// and the sink counts it.
class UsageObserver final : public RequestObserver {
 public:
  UsageObserver(metering::UsageSink& sink, std::size_t worker);

  void on_finish(const RequestContext& ctx) override;

 private:
  metering::UsageSink& sink_;
  std::size_t worker_;
  std::string prefix_;
  std::uint64_t sequence_ = 0;
  std::string id_;             // the next record id, put together in place
  store::UsageRecord record_;  // refilled for every request
};

}  // namespace sluice::pipeline
