#include "server/request_context.h"

#include <chrono>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace sluice::server {
namespace json = boost::json;

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

std::string format_access_log(const RequestContext& ctx) {
  using namespace std::chrono;
  json::object o;
  o["ts"] = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  o["request_id"] = ctx.request_id;
  o["method"] = ctx.method;
  o["path"] = ctx.path;
  o["status"] = ctx.status;
  o["duration_us"] =
      duration_cast<microseconds>(RequestContext::Clock::now() - ctx.started).count();
  if (!ctx.key_name.empty()) {
    o["key"] = ctx.key_name;
  }
  if (!ctx.alias.empty()) {
    o["alias"] = ctx.alias;
    o["provider"] = ctx.provider;
    o["model"] = ctx.model;
    o["stream"] = ctx.stream;
    o["attempts"] = ctx.attempts;
  }
  o["outcome"] = to_string(ctx.outcome);
  if (!ctx.finish_reason.empty()) {
    o["finish_reason"] = ctx.finish_reason;
  }
  if (ctx.error) {
    o["error"] = to_string(ctx.error->kind());
    if (!ctx.error->code().empty()) {
      o["error_code"] = ctx.error->code();
    }
    o["error_message"] = ctx.error->message();
  }
  if (ctx.usage) {
    o["usage"] = json::object{{"input_tokens", ctx.usage->input_tokens},
                              {"output_tokens", ctx.usage->output_tokens},
                              {"cache_read_tokens", ctx.usage->cache_read_tokens},
                              {"cache_write_tokens", ctx.usage->cache_write_tokens},
                              {"reasoning_tokens", ctx.usage->reasoning_tokens}};
  } else if (ctx.outcome != Outcome::kNone) {
    o["usage"] = nullptr;
  }
  if (ctx.upstream_acquire.count() >= 0) {
    o["upstream_acquire_us"] = ctx.upstream_acquire.count();
    o["upstream_reused_connection"] = ctx.reused_connection;
  }
  if (ctx.upstream_first_byte.count() >= 0) {
    o["upstream_first_byte_us"] = ctx.upstream_first_byte.count();
  }
  if (ctx.first_token.count() >= 0) {
    o["first_token_us"] = ctx.first_token.count();
  }
  if (ctx.stream) {
    o["events"] = ctx.events;
  }
  o["bytes_in"] = ctx.bytes_in;
  o["bytes_out"] = ctx.bytes_out;
  return json::serialize(o);
}

}  // namespace sluice::server
