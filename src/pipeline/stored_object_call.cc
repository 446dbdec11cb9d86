#include "pipeline/stored_object_call.h"

#include "codec/http_head.h"
#include "config/config.h"
#include "pipeline/affinity.h"
#include "pipeline/error_reply.h"
#include "pipeline/pipeline.h"
#include "pipeline/trace_propagation.h"
#include "pipeline/upstream_relay.h"
#include "protocol/registry.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

constexpr std::size_t kMaxErrorBody = 1024 * 1024;

// `stream=true` among the query parameters: the caller asks for the object as an event stream
// (a Responses answer still being generated in the background).
bool wants_stream(std::string_view query) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    if (query.substr(0, amp) == "stream=true") {
      return true;
    }
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
  }
  return false;
}

Error no_record(std::string_view id, const ResponseAffinity* store) {
  const auto minutes = store != nullptr
                           ? std::chrono::duration_cast<std::chrono::minutes>(store->options().ttl)
                           : std::chrono::minutes(0);
  std::string message = "The gateway has no record of '";
  message.append(id).append("': it remembers which provider stored an answer for ");
  message.append(std::to_string(minutes.count()));
  message.append(
      " minutes after relaying it, and only for the key that asked for it. The id is "
      "unknown, expired, or was created with another key.");
  return Error(ErrorKind::kNotFound, std::move(message)).with_code("not_found");
}

}  // namespace

StoredObjectCall::StoredObjectCall(const Pipeline& pipeline, RequestContext& ctx,
                                   const codec::RequestHead& head, Downstream& downstream)
    : pipeline_(pipeline), ctx_(ctx), head_(head), downstream_(downstream) {}

Awaitable<void> StoredObjectCall::serve(const Pipeline& pipeline, RequestContext& ctx,
                                        const codec::RequestHead& head, Downstream& downstream) {
  StoredObjectCall call(pipeline, ctx, head, downstream);
  co_await call.run();
}

Result<const ProviderRuntime*> StoredObjectCall::locate(std::string_view id) const {
  const ResponseAffinity* store = pipeline_.parts_.affinity;
  const auto record = store != nullptr ? store->find(id, pipeline_.clock().now()) : std::nullopt;
  // Owned by the key's immutable id, never its name (which a rename frees for another key).
  const std::string_view key = ctx_.key != nullptr ? std::string_view(ctx_.key->id) : "";
  if (!record || record->owner != key) {
    return no_record(id, store);
  }
  for (const auto& provider : ctx_.snapshot->providers()) {
    if (provider->config->id == record->provider) {
      return provider.get();
    }
  }
  std::string message = "'";
  message.append(id).append("' was stored by provider '").append(record->provider);
  message.append("', which is no longer configured on this gateway");
  return Error(ErrorKind::kNotFound, std::move(message)).with_code("not_found");
}

Awaitable<void> StoredObjectCall::run() {
  const protocol::IngressCodec& codec = *ctx_.ingress;
  const auto ref = codec.match_stored_object(head_.target());
  auto located = ref ? locate(ref->id) : Result<const ProviderRuntime*>(no_record("", nullptr));
  if (!located) {
    co_await pipeline_.reject(ctx_, located.error(), downstream_);
    co_return;
  }
  const ProviderRuntime& provider = **located;
  const providers::ProviderAdapter& adapter = *provider.adapter;
  HeaderList forwarded;
  add_forwarded_headers(head_, adapter, forwarded);
  UpstreamTrace trace;
  const observability::SpanId span = trace.add(ctx_, forwarded);
  providers::RequestSpec spec;
  spec.operation = codec.operation();
  spec.protocol = codec.protocol();
  const std::string resource = protocol::without_credentials(ref->resource);
  spec.resource = resource;
  spec.stream = wants_stream(head_.query());
  spec.request_id = ctx_.request_id;
  spec.forwarded = forwarded.view();
  up_.provider = &provider;
  up_.operation = spec.operation;
  up_.stream = spec.stream;
  up_.timeouts = provider.config->timeout;
  codec::HeadWriter writer(up_.head);
  if (!adapter.write_retrieval_head(spec, writer)) {
    std::string message = "provider '" + adapter.id();
    message.append("' cannot serve '").append(ref->id).append("'");
    co_await pipeline_.reject(
        ctx_, Error(ErrorKind::kNotFound, std::move(message)).with_code("not_found"), downstream_);
    co_return;
  }

  Attempt& record = ctx_.attempts.emplace_back();
  record.provider = adapter.id();
  record.passthrough = true;
  record.span = span;
  const auto started = pipeline_.clock().now();
  record.started = duration_cast<microseconds>(started - ctx_.started);
  ScopedWatch watch(downstream_, [this] { cancel_.cancel(); });
  auto opened = co_await pipeline_.parts_.connector->open(up_, cancel_);
  if (!opened) {
    record.error = opened.error();
    if (opened.error().kind() == ErrorKind::kClientGone || downstream_.client_gone()) {
      client_gone(opened.error());
    } else {
      ctx_.outcome = Outcome::kUpstreamError;
      co_await pipeline_.reject(ctx_, opened.error(), downstream_);
    }
  } else {
    providers::Exchange& exchange = **opened;
    cancel_.on_cancel([&exchange] { exchange.abort(); });
    record_exchange(exchange, record);
    co_await relay(exchange, adapter);
    cancel_.clear();
  }
  Attempt& done = ctx_.attempts.back();
  done.duration = duration_cast<microseconds>(pipeline_.clock().now() - started);
  if (!done.error && ctx_.error) {
    done.error = ctx_.error;
  }
  for (RequestObserver* observer : pipeline_.parts_.observers) {
    observer->on_attempt(ctx_, done);
  }
}

// The upstream's answer, verbatim: what a caller of this protocol would get from the provider
// itself (minus secrets echoed in an error).
Awaitable<void> StoredObjectCall::relay(providers::Exchange& exchange,
                                        const providers::ProviderAdapter& adapter) {
  const int status = exchange.status();
  const bool ok = status >= 200 && status < 300;
  const std::string_view content_type = exchange.header("content-type");
  ResponseHead& head = downstream_.new_head();
  head.status = status;
  add_standard_fields(ctx_, head);
  relay_upstream_headers(adapter, exchange, head, /*include_retry_headers=*/true);
  if (ok && content_type.starts_with("text/event-stream")) {
    head.content_type = "text/event-stream";
    head.headers.add("Cache-Control", "no-store");
    co_await relay_stream(exchange, head);
    co_return;
  }
  auto read = co_await exchange.read_all(
      ok ? ctx_.snapshot->config().server.max_upstream_response_bytes : kMaxErrorBody);
  if (!read) {
    if (read.error().kind() == ErrorKind::kClientGone || downstream_.client_gone()) {
      client_gone(read.error());
      co_return;
    }
    ctx_.outcome = Outcome::kUpstreamError;
    co_await pipeline_.reject(ctx_, read.error(), downstream_);
    co_return;
  }
  std::string body = std::move(*read);
  if (!ok) {
    scrub_secrets(body, adapter.secrets());
    Error error = adapter.classify_failure(status, exchange, body);
    ctx_.attempts.back().error = error;
    ctx_.error = error;
    ctx_.outcome = Outcome::kUpstreamError;
    if (error.code() == "upstream_auth_failed" || !ctx_.ingress->is_native_error(body)) {
      co_await pipeline_.reject(ctx_, error, downstream_);
      co_return;
    }
    if (exchange.header("x-should-retry").empty()) {
      head.headers.add("x-should-retry", should_retry(error));
    }
  } else {
    ctx_.outcome = Outcome::kComplete;
  }
  if (!content_type.empty()) {
    head.content_type = content_type;
  }
  co_await downstream_.send(ctx_, head, body);
}

Awaitable<void> StoredObjectCall::relay_stream(providers::Exchange& exchange, ResponseHead& head) {
  const bool began = co_await downstream_.begin_stream(ctx_, head);
  if (!began) {
    cancel_.cancel();
    client_gone(Error(ErrorKind::kClientGone, "client disconnected before the stream began"));
    co_return;
  }
  std::string chunk;
  for (;;) {
    chunk.clear();
    auto n = co_await exchange.read_some(chunk);
    if (!n || *n == 0) {
      if (!n) {
        ctx_.error = n.error();
      }
      break;
    }
    const bool sent = co_await downstream_.write(ctx_, chunk);
    if (!sent) {
      cancel_.cancel();
      client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
      co_return;
    }
  }
  ctx_.outcome = ctx_.error ? Outcome::kMidstreamError : Outcome::kComplete;
  co_await downstream_.end_stream(ctx_);
}

void StoredObjectCall::client_gone(const Error& error) { record_client_gone(ctx_, error); }

}  // namespace sluice::pipeline
