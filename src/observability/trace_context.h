#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// request headers, the ids they carry, and the sampling decision a request's spans follow.
// Sans-I/O and allocation-free except for tracestate; safe on any thread.
namespace sluice::observability {

// A 128-bit trace id; all zero is invalid ("no trace").
struct TraceId {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  bool valid() const { return (high | low) != 0; }
  friend bool operator==(const TraceId&, const TraceId&) = default;
};

// A 64-bit span id; zero is invalid ("no span").
using SpanId = std::uint64_t;

inline constexpr std::size_t kTraceIdHex = 32;
inline constexpr std::size_t kSpanIdHex = 16;
// "00-" trace "-" span "-" flags
inline constexpr std::size_t kTraceparentSize = 3 + kTraceIdHex + 1 + kSpanIdHex + 3;
// Longest tracestate carried through: the spec asks vendors to propagate at least 512
// characters; longer values are cut at a list-member boundary.
inline constexpr std::size_t kMaxTracestate = 512;

// A parsed `traceparent`.
struct Traceparent {
  TraceId trace;
  SpanId parent = 0;
  bool sampled = false;  // trace-flags bit 0
};

// Parses a traceparent value. Version 00 must be exactly 55 characters; a higher version
// (not ff) may carry more fields after a '-' and is read as 00 (the spec's forward
// compatibility rule). Lower-case hex only; all-zero ids are invalid. nullopt when invalid:
// the caller then starts a new trace, as the spec requires.
std::optional<Traceparent> parse_traceparent(std::string_view value);

// Writes "00-<trace>-<span>-<flags>" (kTraceparentSize characters) into `out`.
void format_traceparent(const TraceId& trace, SpanId span, bool sampled,
                        std::array<char, kTraceparentSize>& out);

// Lower-case hex of an id, for exports and logs.
void format_hex(const TraceId& id, std::array<char, kTraceIdHex>& out);
void format_hex(SpanId id, std::array<char, kSpanIdHex>& out);
std::string to_hex(const TraceId& id);
std::string to_hex(SpanId id);

// The tracestate to carry on, or "" to drop it: the caller's value(s) joined with ',' when it
// sent the header more than once, empty list members removed, only printable ASCII; cut to
// at most kMaxTracestate characters by dropping whole members from the end.
std::string sanitize_tracestate(std::string_view joined);

// Random ids from a per-thread generator (xoshiro256**, seeded from std::random_device once
// per thread): no lock, no syscall per id. Never returns an invalid (zero) id.
TraceId new_trace_id();
SpanId new_span_id();

// Whether a new trace (no sampled caller) is sampled at `ratio` (0..1): decided from the trace
// id's low 56 bits, so every service using the same rule agrees for one trace.
bool sample_by_ratio(const TraceId& id, double ratio);

// One request's place in a distributed trace.
struct TraceContext {
  TraceId trace;           // invalid: no trace (tracing off and no caller context)
  SpanId parent = 0;       // the caller's span, 0 when this request starts the trace
  SpanId span = 0;         // this request's server span (0 when the gateway records nothing)
  bool sampled = false;    // the flag sent upstream
  bool recording = false;  // the gateway exports spans for this request
  std::string tracestate;  // carried through to upstreams, sanitised

  bool active() const { return trace.valid(); }
};

// The context of one request: `traceparent_values` is how many traceparent fields the caller
// sent (more than one is invalid) and `traceparent` the first; `tracestate` the joined
// tracestate fields. With `tracing` on, a caller's valid context is continued (its sampled
// flag honoured) and otherwise a new trace begins, sampled at `ratio`; with it off, only a
// caller's valid context is carried on (never recorded).
TraceContext begin_trace(std::size_t traceparent_values, std::string_view traceparent,
                         std::string_view tracestate, bool tracing, double ratio);

}  // namespace sluice::observability
