#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/container/small_vector.hpp>

#include "core/error.h"
#include "ir/usage.h"
#include "limits/ticket.h"
#include "metering/pricing.h"
#include "observability/trace_context.h"

namespace sluice::config {
struct Key;
}
namespace sluice::protocol {
class IngressCodec;
}
namespace sluice::tenancy {
class KeySet;
struct StoreKey;
}  // namespace sluice::tenancy

namespace sluice::pipeline {

class Snapshot;

// How the model call ended, as opposed to the HTTP status the caller got (a stream that
// broke after its 200 head is status 200, outcome midstream_error).
enum class Outcome : std::uint8_t {
  kNone,            // no model call (health checks, rejected requests)
  kComplete,        // the model finished (finish reason seen, stream terminated)
  kTruncated,       // finish reason "length"
  kClientGone,      // the caller disconnected; the upstream call was cancelled
  kUpstreamError,   // failed before anything was sent to the caller
  kMidstreamError,  // failed after the stream had started
  kCacheHit,        // answered from the response cache: no upstream call
  kCoalesced,       // answered by an identical call already under way (single-flight)
  kReplayed,        // an Idempotency-Key retry answered with the first call's answer
};

std::string_view to_string(Outcome outcome);

// One kind of find of a request's guardrails: the policy and detector, what was done and how
// often, in the request or in the answer. Views into the snapshot's policies (the request pins
// its snapshot); static strings for the action.
struct GuardrailFind {
  std::string_view policy;
  std::string_view detector;
  std::string_view action;  // flag, redact, block
  bool output = false;
  std::uint32_t count = 0;
};
// "pii/email:redact=2,out:pii/payment_card:block=1": the access log's and the header's form.
std::string guardrails_summary(std::span<const GuardrailFind> finds);

// Which kind of endpoint a request is for, once its path is known.
// kStoredObject: a GET of an object an upstream stored (IngressCodec::match_stored_object).
enum class Endpoint : std::uint8_t {
  kNone,
  kHealth,
  kReady,
  kModels,
  kModel,  // GET /v1/models/{alias}
  kModelCall,
  kStoredObject,
  kMetrics,  // GET /metrics on the main listener (admin.metrics_on_main)
};

// One try at one upstream target.
struct Attempt {
  std::string_view provider;  // views into the pinned snapshot
  std::string_view model;
  int status = 0;              // the upstream's HTTP status; 0 when no response head arrived
  std::optional<Error> error;  // why the attempt failed, when it did
  std::chrono::microseconds started{-1};     // since RequestContext::started
  std::chrono::microseconds acquire{-1};     // pool wait + connect
  std::chrono::microseconds first_byte{-1};  // request written -> response head
  std::chrono::microseconds duration{-1};    // the whole attempt, body included
  bool reused_connection = false;
  bool passthrough = false;  // bytes relayed verbatim (same protocol both sides)
  std::string_view path;     // the target's place in the route's policy tree ("" = the root)
  std::chrono::milliseconds backoff{0};  // waited before this attempt
  std::string_view breaker;  // the target's breaker when the attempt began, unless closed
  // Schema drift in this provider's answer (translated answers only; passthrough is not
  // decoded): fields and event types its decoder does not know (protocol/drift.h).
  std::uint32_t unknown_fields = 0;
  // The parent-id this attempt sent upstream in its traceparent: its CLIENT span when the
  // request is traced, the caller's span when only the caller's context is carried on; 0 when
  // no traceparent was sent.
  observability::SpanId span = 0;
};

// Everything known about one request, filled in by the pipeline's stages and reported to the
// observers (access log, later metrics, traces, the usage sink) when it ends. Lives on the
// session's coroutine frame; one worker thread.
struct RequestContext {
  using Clock = std::chrono::steady_clock;

  Clock::time_point started{};
  Clock::time_point ended{};  // set when the request is over (Pipeline::end)
  std::chrono::system_clock::time_point wall_started{};  // fixes the price version and window
  std::chrono::system_clock::time_point wall_ended{};
  // The config version serving this request, pinned from its first byte to its end: a reload
  // in between never changes (or frees) what the request is using.
  std::shared_ptr<const Snapshot> snapshot;
  const config::Key* key = nullptr;  // authenticated gateway key (null when auth is off)
  // A key from the store: the key set it was found in, held until the request ends (`key`
  // points into it), and its entry (budget accounts, quotas). Null for config keys.
  std::shared_ptr<const tenancy::KeySet> key_set;
  const tenancy::StoreKey* store_key = nullptr;
  // The caller's protocol: answers and errors are encoded in it. Null until the request line
  // is known (the default protocol answers then).
  const protocol::IngressCodec* ingress = nullptr;
  std::size_t worker = 0;
  Endpoint endpoint = Endpoint::kNone;

  std::string request_id;
  std::string method;
  std::string path;
  int status = 0;          // HTTP status written to the caller
  std::string_view alias;  // view into the snapshot once the route is resolved
  bool stream = false;
  Outcome outcome = Outcome::kNone;
  std::optional<Error> error;
  std::optional<ir::Usage> usage;  // as the upstream reported it, in IR terms
  std::string finish_reason;
  boost::container::small_vector<Attempt, 2> attempts;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t events = 0;
  // Request fields the ingress codec ignored because the IR cannot carry them (schema drift).
  std::uint32_t ignored_fields = 0;
  // Tools a translated request went without (IngressRequest::dropped_tools), "" for none:
  // sent back as x-sluice-dropped-tools.
  std::string dropped_tools;
  // Why the gateway sent this request itself ("embedding", "refresh": pipeline/internal_call.h);
  // "" for a caller's request. Static strings.
  std::string_view internal;
  // What the guardrails found (pipeline/filters/guardrail_filter.h), never the text: empty when
  // they found nothing or the route has none.
  boost::container::small_vector<GuardrailFind, 2> guardrails;
  // What the response cache did (pipeline/filters/cache_filter.h): hit, stale, miss, refresh or
  // bypass (the x-sluice-cache header); "" when the route caches nothing. Static strings.
  std::string_view cache;
  // The target that produced a cached answer (views into the entry or the shared call, which
  // `cached_owner` holds until the request's end: the access log and the usage record read them
  // after the model call's own state is gone); empty otherwise.
  std::string_view cached_provider;
  std::string_view cached_model;
  std::shared_ptr<const void> cached_owner;
  // The request's cache key (cache/key.h) when the cache keyed it: the access log's cache_key,
  // what a purge by key_prefix names.
  std::optional<std::array<std::uint8_t, 32>> cache_key;
  // The upstream tokens (input + output) such an answer did not pay for again, and the usage of
  // the call that produced it (its record's saved tokens, priced into saved_charge).
  std::uint64_t cache_saved_tokens = 0;
  std::optional<ir::Usage> saved_usage;
  void saved(const std::optional<ir::Usage>& usage) {
    saved_usage = usage;
    cache_saved_tokens = usage ? usage->input_tokens + usage->output_tokens : 0;
  }
  // Why the route's plan made no further attempt after a failure ("not retryable", "retry
  // budget exhausted", "deadline", ...); "" when it did not stop on a failure.
  std::string_view retry_stop;
  // Usage reports the caller's protocol could not express exactly and got clamped (metering
  // anomaly: the record keeps the upstream's figures).
  std::uint32_t usage_clamped = 0;
  // Upstream events or answer parts the caller's protocol has no place for, left out by a
  // documented rule (the protocol folder's README) rather than silently.
  std::uint32_t dropped_events = 0;
  std::chrono::microseconds first_token{-1};  // since `started`, streams only
  std::string feature;  // x-sluice-feature, bounded (metering.max_feature_length)
  // The cost of the model call, computed once when the request ends (before on_finish) with
  // the price book of the pinned snapshot; empty when there was no model call.
  std::optional<metering::Charge> charge;
  // What saved_usage would have cost (priced as the call that produced the answer, at this
  // request's prices); set with charge.
  std::optional<metering::Charge> saved_charge;
  // The share of saved_charge this request is billed (the route's cache bill_percent, for a hit
  // or a follower; 0 for an idempotent replay, which is the same request sent again): its charge
  // becomes that share, and saved_charge what is left.
  std::uint8_t saved_bill_percent = 0;
  // Where this request sits in a distributed trace (the caller's traceparent, or a new trace),
  // set when the head is read; inactive when tracing is off and the caller sent none.
  observability::TraceContext trace;
  // What admission took from the rate limits: slots to release, tokens to settle, the figures
  // of the x-ratelimit-* headers. Mutable: the settling observer releases it from on_finish.
  mutable limits::Ticket limits;

  // The attempt that produced the answer (the last one), or null before any attempt.
  const Attempt* last_attempt() const { return attempts.empty() ? nullptr : &attempts.back(); }
};

// The caller went away (or an upstream read says so): the outcome, a kClientGone error, and
// status 499 when nothing was written (what nginx logs for it).
void record_client_gone(RequestContext& ctx, const Error& error);

// One JSON line; never contains prompt text or credentials.
std::string format_access_log(const RequestContext& ctx);

}  // namespace sluice::pipeline
