#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/usage_record.h"

namespace sluice::store {

// The one list of usage_records columns and the UsageRecord field each holds, in column order.
// Backends bind and read through it, so a new field is one line here plus a migration.
// `visitor(name, field)` is called once per column; `field` is a std::string, std::int64_t,
// std::uint64_t, int, bool, or the attempts vector (stored as a JSON array, see
// encode_attempts). Record is UsageRecord or const UsageRecord.
template <class Record, class Visitor>
void visit_usage_fields(Record& r, Visitor&& v) {
  v("record_id", r.record_id);
  v("request_id", r.request_id);
  v("started_at_ms", r.started_at_ms);
  v("ended_at_ms", r.ended_at_ms);
  v("key_name", r.key_name);
  v("key_id", r.key_id);
  v("key_group", r.key_group);
  v("tenant", r.tenant);
  v("feature", r.feature);
  v("ingress", r.ingress);
  v("operation", r.operation);
  v("alias", r.alias);
  v("provider", r.provider);
  v("model", r.model);
  v("stream", r.stream);
  v("usage_reported", r.usage_reported);
  v("input_tokens", r.input_tokens);
  v("output_tokens", r.output_tokens);
  v("cache_read_tokens", r.cache_read_tokens);
  v("cache_write_tokens", r.cache_write_tokens);
  v("reasoning_tokens", r.reasoning_tokens);
  v("status", r.status);
  v("outcome", r.outcome);
  v("error_class", r.error_class);
  v("finish_reason", r.finish_reason);
  v("attempts", r.attempts);
  v("total_us", r.total_us);
  v("overhead_us", r.overhead_us);
  v("queue_us", r.queue_us);
  v("upstream_ttfb_us", r.upstream_ttfb_us);
  v("ttft_us", r.ttft_us);
  v("output_tokens_per_s_milli", r.output_tokens_per_s_milli);
  v("priced", r.priced);
  v("price_version", r.price_version);
  v("currency", r.currency);
  v("cost_micros", r.cost_micros);
  v("cost_items", r.cost_items);
  v("saved_input_tokens", r.saved_input_tokens);
  v("saved_output_tokens", r.saved_output_tokens);
  v("saved_cost_micros", r.saved_cost_micros);
  v("guardrails", r.guardrails);
}

// The stored fields of one attempt, in order (the attempts JSON and the segment bytes use
// these names). `field` is a std::string, std::int64_t, int or bool.
template <class Attempt, class Visitor>
void visit_attempt_fields(Attempt& a, Visitor&& v) {
  v("provider", a.provider);
  v("model", a.model);
  v("path", a.path);
  v("status", a.status);
  v("error_class", a.error_class);
  v("acquire_us", a.acquire_us);
  v("first_byte_us", a.first_byte_us);
  v("duration_us", a.duration_us);
  v("backoff_ms", a.backoff_ms);
  v("reused_connection", a.reused_connection);
}

// The column names above, in order.
const std::vector<std::string_view>& usage_columns();

// Attempts as stored: a JSON array of objects with the AttemptRecord field names
// ([{"provider":"openai","model":"gpt-4o","path":"0","status":200,...}]). decode_attempts
// accepts what encode_attempts writes and ignores fields it does not know (later versions may
// add some); a missing field keeps its default.
std::string encode_attempts(const std::vector<AttemptRecord>& attempts);
Result<std::vector<AttemptRecord>> decode_attempts(std::string_view json);

}  // namespace sluice::store
