#include "observability/trace_context.h"

#include <random>

namespace sluice::observability {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// -1 unless `c` is a lower-case hex digit (the spec's HEXDIGLC: upper case is invalid).
int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

// Reads `text.size()` (at most 16) hex digits into `out`.
bool read_hex(std::string_view text, std::uint64_t& out) {
  std::uint64_t v = 0;
  for (char c : text) {
    const int d = hex_value(c);
    if (d < 0) {
      return false;
    }
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  out = v;
  return true;
}

void write_hex(std::uint64_t v, char* out) {
  for (int i = 15; i >= 0; --i) {
    out[i] = kHex[v & 0xf];
    v >>= 4;
  }
}

// xoshiro256** (Blackman and Vigna), state filled by splitmix64 from one random_device draw
// pair: fast, and good enough for ids that must not collide (they are not secrets).
class IdRandom {
 public:
  IdRandom() {
    std::random_device device;
    std::uint64_t seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
    for (std::uint64_t& word : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

IdRandom& id_random() {
  thread_local IdRandom random;
  return random;
}

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

}  // namespace

std::optional<Traceparent> parse_traceparent(std::string_view value) {
  // version "-" trace-id "-" parent-id "-" trace-flags (W3C Trace Context, section 3.2).
  if (value.size() < kTraceparentSize) {
    return std::nullopt;
  }
  std::uint64_t version = 0;
  if (!read_hex(value.substr(0, 2), version) || version == 0xff) {
    return std::nullopt;
  }
  if (version == 0 ? value.size() != kTraceparentSize
                   : value.size() > kTraceparentSize && value[kTraceparentSize] != '-') {
    return std::nullopt;
  }
  if (value[2] != '-' || value[35] != '-' || value[52] != '-') {
    return std::nullopt;
  }
  Traceparent out;
  std::uint64_t flags = 0;
  if (!read_hex(value.substr(3, 16), out.trace.high) ||
      !read_hex(value.substr(19, 16), out.trace.low) ||
      !read_hex(value.substr(36, 16), out.parent) || !read_hex(value.substr(53, 2), flags)) {
    return std::nullopt;
  }
  if (!out.trace.valid() || out.parent == 0) {
    return std::nullopt;
  }
  out.sampled = (flags & 0x01) != 0;
  return out;
}

void format_traceparent(const TraceId& trace, SpanId span, bool sampled,
                        std::array<char, kTraceparentSize>& out) {
  char* p = out.data();
  p[0] = '0';
  p[1] = '0';
  p[2] = '-';
  write_hex(trace.high, p + 3);
  write_hex(trace.low, p + 19);
  p[35] = '-';
  write_hex(span, p + 36);
  p[52] = '-';
  p[53] = '0';
  p[54] = sampled ? '1' : '0';
}

void format_hex(const TraceId& id, std::array<char, kTraceIdHex>& out) {
  write_hex(id.high, out.data());
  write_hex(id.low, out.data() + 16);
}

void format_hex(SpanId id, std::array<char, kSpanIdHex>& out) { write_hex(id, out.data()); }

std::string to_hex(const TraceId& id) {
  std::array<char, kTraceIdHex> out;
  format_hex(id, out);
  return std::string(out.data(), out.size());
}

std::string to_hex(SpanId id) {
  std::array<char, kSpanIdHex> out;
  format_hex(id, out);
  return std::string(out.data(), out.size());
}

std::string sanitize_tracestate(std::string_view joined) {
  std::string out;
  std::size_t begin = 0;
  while (begin <= joined.size()) {
    std::size_t end = joined.find(',', begin);
    if (end == std::string_view::npos) {
      end = joined.size();
    }
    std::string_view member = joined.substr(begin, end - begin);
    while (!member.empty() && (member.front() == ' ' || member.front() == '\t')) {
      member.remove_prefix(1);
    }
    while (!member.empty() && (member.back() == ' ' || member.back() == '\t')) {
      member.remove_suffix(1);
    }
    for (char c : member) {
      if (!printable(c)) {
        return {};  // not a tracestate: carry nothing rather than pass bytes on
      }
    }
    if (!member.empty() && member.find('=') != std::string_view::npos) {
      if (out.size() + (out.empty() ? 0 : 1) + member.size() > kMaxTracestate) {
        break;  // members are ordered newest first: the ones dropped are the oldest
      }
      if (!out.empty()) {
        out.push_back(',');
      }
      out.append(member);
    } else if (!member.empty()) {
      return {};
    }
    begin = end + 1;
  }
  return out;
}

TraceId new_trace_id() {
  IdRandom& random = id_random();
  TraceId id{random.next(), random.next()};
  while (!id.valid()) {
    id.low = random.next();
  }
  return id;
}

SpanId new_span_id() {
  IdRandom& random = id_random();
  SpanId id = random.next();
  while (id == 0) {
    id = random.next();
  }
  return id;
}

bool sample_by_ratio(const TraceId& id, double ratio) {
  if (ratio >= 1.0) {
    return true;
  }
  if (ratio <= 0.0) {
    return false;
  }
  constexpr std::uint64_t kScale = std::uint64_t{1} << 56;
  const auto threshold = static_cast<std::uint64_t>(ratio * static_cast<double>(kScale));
  return (id.low & (kScale - 1)) < threshold;
}

TraceContext begin_trace(std::size_t traceparent_values, std::string_view traceparent,
                         std::string_view tracestate, bool tracing, double ratio) {
  TraceContext ctx;
  std::optional<Traceparent> caller;
  if (traceparent_values == 1) {
    caller = parse_traceparent(traceparent);
  }
  if (caller) {
    ctx.trace = caller->trace;
    ctx.parent = caller->parent;
    ctx.sampled = caller->sampled;
    // The spec ties tracestate to a valid traceparent: without one it is discarded.
    if (!tracestate.empty()) {
      ctx.tracestate = sanitize_tracestate(tracestate);
    }
  } else if (tracing) {
    ctx.trace = new_trace_id();
    ctx.sampled = sample_by_ratio(ctx.trace, ratio);
  } else {
    return ctx;
  }
  if (tracing) {
    ctx.span = new_span_id();
    ctx.recording = ctx.sampled;
  }
  return ctx;
}

}  // namespace sluice::observability
