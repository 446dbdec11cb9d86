#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::store {

// One upstream attempt of a request, as stored.
struct AttemptRecord {
  std::string provider;
  std::string model;
  std::string path;                 // the target's place in the route's policy tree
  int status = 0;                   // upstream HTTP status; 0 when no response head arrived
  std::string error_class;          // ErrorKind name ("upstream_timeout", ...); "" on success
  std::int64_t acquire_us = -1;     // pool wait + connect; -1 = not reached
  std::int64_t first_byte_us = -1;  // request written -> response head
  std::int64_t duration_us = -1;    // the whole attempt
  std::int64_t backoff_ms = 0;      // waited before this attempt
  bool reused_connection = false;
};

// One request's usage record: what was asked, who asked, what was used, what it cost. Written
// once per model call (never for health checks or requests rejected before routing), never
// updated. `record_id` is unique per record and makes writes idempotent: replaying a spool
// that was partly written already stores each record once.
struct UsageRecord {
  std::string record_id;           // "<instance>-<sequence>", unique across instances and restarts
  std::string request_id;          // the x-request-id the caller saw
  std::int64_t started_at_ms = 0;  // unix milliseconds, when the request entered
  std::int64_t ended_at_ms = 0;

  // Who.
  std::string key_name;   // "" when auth is off
  std::string key_id;     // the key's immutable id (config::Key::id): what budgets count by
  std::string key_group;  // "" until key groups exist (admission issue)
  std::string tenant;     // ""
  std::string feature;    // x-sluice-feature, cut to metering.max_feature_length

  // What.
  std::string ingress;    // caller's protocol: openai_chat, anthropic, gemini, openai_responses
  std::string operation;  // chat, embeddings, count_tokens, ...
  std::string alias;      // model name the caller asked for
  std::string provider;   // provider and model actually used (the last attempt's)
  std::string model;
  bool stream = false;

  // Normalised usage (ir::Usage semantics: input includes cache reads and writes; reasoning is
  // part of output). usage_reported is false when the upstream reported none.
  bool usage_reported = false;
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::uint64_t reasoning_tokens = 0;

  // How it ended.
  int status = 0;           // HTTP status written to the caller
  std::string outcome;      // complete, truncated, client_gone, upstream_error, midstream_error
  std::string error_class;  // "" when it succeeded
  std::string finish_reason;
  std::vector<AttemptRecord> attempts;

  // Timings in microseconds; -1 = not measured (e.g. no first token on a failed request).
  std::int64_t total_us = -1;
  std::int64_t overhead_us = -1;                // time spent in the gateway itself
  std::int64_t queue_us = -1;                   // waiting for admission, backoff and pool slots
  std::int64_t upstream_ttfb_us = -1;           // the answering attempt's first byte
  std::int64_t ttft_us = -1;                    // first token to the caller (streams)
  std::int64_t output_tokens_per_s_milli = -1;  // output tokens per second x 1000

  // Cost. priced=false means "unaccounted": no price for this model; cost_micros is then 0 and
  // must never be summed as zero spend.
  bool priced = false;
  std::string price_version;  // the catalogue version fixed when the request entered
  std::string currency = "USD";
  std::int64_t cost_micros = 0;  // millionths of the currency unit
  std::string cost_items;        // JSON array: [{"item":"input","tokens":..,"rate":..,"micros":..}]

  // What an answer served without an upstream call (outcome cache_hit, coalesced, replayed)
  // saved: the upstream tokens of the call that produced it, and their cost at this request's
  // prices for that call's provider and model (0 when unpriced). Zero for every other record.
  std::uint64_t saved_input_tokens = 0;
  std::uint64_t saved_output_tokens = 0;
  std::int64_t saved_cost_micros = 0;

  // What the guardrails found and did (docs/guardrails.md#observability): counts per policy,
  // detector and action, "pii/email:redact=2,out:no-cards/payment_card:block=1"; "" when
  // nothing was found. Never a matched text.
  std::string guardrails;
};

}  // namespace sluice::store
