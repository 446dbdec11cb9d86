#include "pipeline/request_context.h"

#include <chrono>

#include "codec/json_writer.h"
#include "config/config.h"
#include "protocol/ingress.h"

namespace sluice::pipeline {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kNone:
      return "none";
    case Outcome::kComplete:
      return "complete";
    case Outcome::kTruncated:
      return "truncated";
    case Outcome::kClientGone:
      return "client_gone";
    case Outcome::kUpstreamError:
      return "upstream_error";
    case Outcome::kMidstreamError:
      return "midstream_error";
    case Outcome::kCacheHit:
      return "cache_hit";
    case Outcome::kCoalesced:
      return "coalesced";
    case Outcome::kReplayed:
      return "replayed";
  }
  return "none";
}

std::string guardrails_summary(std::span<const GuardrailFind> finds) {
  std::string out;
  for (const GuardrailFind& f : finds) {
    if (!out.empty()) out += ',';
    if (f.output) out += "out:";
    out += f.policy;
    out += '/';
    out += f.detector;
    out += ':';
    out += f.action;
    out += '=';
    out += std::to_string(f.count);
  }
  return out;
}

namespace {

std::int64_t micros(std::chrono::microseconds d) { return static_cast<std::int64_t>(d.count()); }

// Written with JsonWriter rather than a DOM: this runs once per request on the worker thread,
// and a json::object of ~25 members cost more than the rest of a small request.
class AccessLogLine {
 public:
  explicit AccessLogLine(std::string& line) : w_(line) {}

  codec::JsonWriter& field(std::string_view key) { return w_.next_key(key); }

  void request(const RequestContext& ctx) {
    using namespace std::chrono;
    w_.ch('{').key("ts").number(static_cast<std::int64_t>(
        duration_cast<milliseconds>(ctx.wall_ended.time_since_epoch()).count()));
    field("request_id").string(ctx.request_id);
    field("method").string(ctx.method);
    field("path").string(ctx.path);
    field("status").number(static_cast<std::int64_t>(ctx.status));
    field("duration_us").number(micros(duration_cast<microseconds>(ctx.ended - ctx.started)));
    field("worker").number(static_cast<std::uint64_t>(ctx.worker));
    if (ctx.key != nullptr) {
      field("key").string(ctx.key->name);
      if (!ctx.key->group.empty()) {
        field("key_group").string(ctx.key->group);
      }
    }
  }

  // What the model call was: its alias, what served it, in which API.
  void call(const RequestContext& ctx) {
    if (ctx.alias.empty()) {
      return;
    }
    field("alias").string(ctx.alias);
    if (const Attempt* last = ctx.last_attempt()) {
      field("provider").string(last->provider);
      field("model").string(last->model);
    } else if (!ctx.cached_provider.empty()) {
      field("provider").string(ctx.cached_provider);
      field("model").string(ctx.cached_model);
    }
    field("stream").boolean(ctx.stream);
    // Which API the caller spoke.
    if (ctx.ingress != nullptr) {
      field("api").string(ctx.ingress->api_name());
    }
    field("attempts").number(static_cast<std::uint64_t>(ctx.attempts.size()));
  }

  void outcome(const RequestContext& ctx) {
    if (ctx.ignored_fields > 0) {
      field("ignored_fields").number(static_cast<std::uint64_t>(ctx.ignored_fields));
    }
    field("outcome").string(to_string(ctx.outcome));
    if (!ctx.internal.empty()) {
      field("internal").string(ctx.internal);
    }
    if (!ctx.guardrails.empty()) {
      field("guardrails").string(guardrails_summary(ctx.guardrails));
    }
    if (!ctx.cache.empty()) {
      field("cache").string(ctx.cache);
      if (ctx.cache_key) {
        static constexpr char kHex[] = "0123456789abcdef";
        std::array<char, 64> hex;
        for (std::size_t i = 0; i < 32; ++i) {
          hex[2 * i] = kHex[(*ctx.cache_key)[i] >> 4];
          hex[2 * i + 1] = kHex[(*ctx.cache_key)[i] & 15];
        }
        field("cache_key").string(std::string_view(hex.data(), hex.size()));
      }
      if (ctx.cache_saved_tokens > 0) {
        field("cache_saved_tokens").number(ctx.cache_saved_tokens);
      }
    }
    if (!ctx.retry_stop.empty()) {
      field("retry_stop").string(ctx.retry_stop);
    }
    if (!ctx.finish_reason.empty()) {
      field("finish_reason").string(ctx.finish_reason);
    }
    if (ctx.error) {
      field("error").string(to_string(ctx.error->kind()));
      if (!ctx.error->code().empty()) {
        field("error_code").string(ctx.error->code());
      }
      field("error_message").string(ctx.error->message());
    }
  }

  void usage(const RequestContext& ctx) {
    if (ctx.usage) {
      field("usage").ch('{').key("input_tokens").number(ctx.usage->input_tokens);
      field("output_tokens").number(ctx.usage->output_tokens);
      field("cache_read_tokens").number(ctx.usage->cache_read_tokens);
      field("cache_write_tokens").number(ctx.usage->cache_write_tokens);
      field("reasoning_tokens").number(ctx.usage->reasoning_tokens).ch('}');
    } else if (ctx.outcome != Outcome::kNone) {
      field("usage").null();
    }
    if (ctx.usage_clamped > 0) {
      field("usage_clamped").number(static_cast<std::uint64_t>(ctx.usage_clamped));
    }
    if (ctx.dropped_events > 0) {
      field("dropped_events").number(static_cast<std::uint64_t>(ctx.dropped_events));
    }
  }

  void attempts(const RequestContext& ctx) {
    if (ctx.attempts.empty()) {
      return;
    }
    field("upstream").ch('[');
    bool first = true;
    for (const Attempt& a : ctx.attempts) {
      w_.raw(first ? "{" : ",{");
      first = false;
      attempt(a);
      w_.ch('}');
    }
    w_.ch(']');
  }

  void transfer(const RequestContext& ctx) {
    if (ctx.first_token.count() >= 0) {
      field("first_token_us").number(micros(ctx.first_token));
    }
    if (ctx.stream) {
      field("events").number(ctx.events);
    }
    field("bytes_in").number(ctx.bytes_in);
    field("bytes_out").number(ctx.bytes_out).ch('}');
  }

 private:
  void attempt(const Attempt& a) {
    w_.key("provider").string(a.provider);
    field("model").string(a.model);
    field("status").number(static_cast<std::int64_t>(a.status));
    field("passthrough").boolean(a.passthrough);
    if (!a.path.empty()) {
      field("target").string(a.path);
    }
    if (a.backoff.count() > 0) {
      field("backoff_ms").number(static_cast<std::uint64_t>(a.backoff.count()));
    }
    if (!a.breaker.empty()) {
      field("breaker").string(a.breaker);
    }
    if (a.unknown_fields > 0) {
      field("drift").number(static_cast<std::uint64_t>(a.unknown_fields));
    }
    if (a.error) {
      field("error").string(to_string(a.error->kind()));
      if (!a.error->code().empty()) {
        field("error_code").string(a.error->code());
      }
    }
    if (a.acquire.count() >= 0) {
      field("acquire_us").number(micros(a.acquire));
      field("reused").boolean(a.reused_connection);
    }
    if (a.first_byte.count() >= 0) {
      field("first_byte_us").number(micros(a.first_byte));
    }
    if (a.duration.count() >= 0) {
      field("duration_us").number(micros(a.duration));
    }
  }

  codec::JsonWriter w_;
};

}  // namespace

void record_client_gone(RequestContext& ctx, const Error& error) {
  ctx.outcome = Outcome::kClientGone;
  ctx.error = error.kind() == ErrorKind::kClientGone
                  ? error
                  : Error(ErrorKind::kClientGone, "client disconnected");
  if (ctx.status == 0) {
    ctx.status = 499;
  }
}

std::string format_access_log(const RequestContext& ctx) {
  std::string line;
  line.reserve(1024);  // a model call with one attempt fits
  AccessLogLine out(line);
  out.request(ctx);
  out.call(ctx);
  out.outcome(ctx);
  out.usage(ctx);
  out.attempts(ctx);
  out.transfer(ctx);
  return line;
}

}  // namespace sluice::pipeline
