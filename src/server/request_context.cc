#include "server/request_context.h"

#include <chrono>

#include "codec/json_writer.h"

namespace sluice::server {

const char* to_string(Outcome outcome) {
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
  }
  return "none";
}

// Written with JsonWriter rather than a DOM: this runs once per request on the worker
// thread, and a json::object of ~25 members cost more than the rest of a small request.
std::string format_access_log(const RequestContext& ctx) {
  using namespace std::chrono;
  std::string line;
  line.reserve(640);
  codec::JsonWriter w(line);
  auto field = [&w](std::string_view key) -> codec::JsonWriter& { return w.ch(',').key(key); };
  w.ch('{').key("ts").number(static_cast<std::int64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count()));
  field("request_id").string(ctx.request_id);
  field("method").string(ctx.method);
  field("path").string(ctx.path);
  field("status").number(static_cast<std::int64_t>(ctx.status));
  field("duration_us")
      .number(static_cast<std::int64_t>(
          duration_cast<microseconds>(RequestContext::Clock::now() - ctx.started).count()));
  if (!ctx.key_name.empty()) {
    field("key").string(ctx.key_name);
  }
  if (!ctx.alias.empty()) {
    field("alias").string(ctx.alias);
    field("provider").string(ctx.provider);
    field("model").string(ctx.model);
    field("stream").boolean(ctx.stream);
    // Which API the caller spoke; "anthropic" requests were translated to the upstream's.
    field("api").string(ctx.dialect == Dialect::kAnthropic ? "anthropic" : "openai");
    field("attempts").number(static_cast<std::int64_t>(ctx.attempts));
  }
  if (ctx.ignored_fields > 0) {
    field("ignored_fields").number(static_cast<std::uint64_t>(ctx.ignored_fields));
  }
  field("outcome").string(to_string(ctx.outcome));
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
  if (ctx.usage) {
    field("usage").ch('{').key("input_tokens").number(ctx.usage->input_tokens);
    field("output_tokens").number(ctx.usage->output_tokens);
    field("cache_read_tokens").number(ctx.usage->cache_read_tokens);
    field("cache_write_tokens").number(ctx.usage->cache_write_tokens);
    field("reasoning_tokens").number(ctx.usage->reasoning_tokens).ch('}');
  } else if (ctx.outcome != Outcome::kNone) {
    field("usage").null();
  }
  if (ctx.upstream_acquire.count() >= 0) {
    field("upstream_acquire_us").number(static_cast<std::int64_t>(ctx.upstream_acquire.count()));
    field("upstream_reused_connection").boolean(ctx.reused_connection);
  }
  if (ctx.upstream_first_byte.count() >= 0) {
    field("upstream_first_byte_us")
        .number(static_cast<std::int64_t>(ctx.upstream_first_byte.count()));
  }
  if (ctx.first_token.count() >= 0) {
    field("first_token_us").number(static_cast<std::int64_t>(ctx.first_token.count()));
  }
  if (ctx.stream) {
    field("events").number(ctx.events);
  }
  field("bytes_in").number(ctx.bytes_in);
  field("bytes_out").number(ctx.bytes_out).ch('}');
  return line;
}

}  // namespace sluice::server
