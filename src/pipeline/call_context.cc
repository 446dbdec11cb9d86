#include "pipeline/call_context.h"

#include "codec/json_members.h"
#include "config/config.h"
#include "pipeline/error_reply.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream_relay.h"
#include "pipeline/upstream_request.h"

namespace sluice::pipeline {

CallContext::CallContext(const Pipeline& pipeline, RequestContext& ctx,
                         const codec::RequestHead& head, Downstream& downstream)
    : pipeline_(pipeline), ctx_(ctx), head_(head), downstream_(&downstream) {}

const PipelineParts& CallContext::parts() const { return pipeline_.parts_; }
const Clock& CallContext::clock() const { return pipeline_.clock(); }
const config::Config& CallContext::config() const { return ctx_.snapshot->config(); }

std::optional<Error> CallContext::decode(std::string_view body) {
  auto decoded = ctx_.ingress->decode(body, head_);
  if (!decoded) {
    return std::move(decoded).error();
  }
  request_ = std::move(*decoded);
  ctx_.stream = request_.stream;
  ctx_.ignored_fields = request_.ignored_fields;
  return std::nullopt;
}

std::optional<Error> CallContext::resolve_route(std::shared_ptr<const RouteChains> chains) {
  const std::string_view model = request_.model;
  const RouteRuntime* route = ctx_.snapshot->find_route(model);
  if (route == nullptr || route->operation != ctx_.ingress->operation()) {
    return model_not_found(model);
  }
  // An internal call (pipeline/internal_call.h) serves a route the key may use; the route it
  // calls (an embeddings route named by that route's config) is the operator's choice.
  if (ctx_.internal.empty() && !Snapshot::key_allows(ctx_.key, model)) {
    return Error(ErrorKind::kForbidden,
                 "key '" + ctx_.key->name + "' may not use model '" + std::string(model) + "'")
        .with_code("model_not_allowed")
        .with_param("model");
  }
  ctx_.alias = ctx_.snapshot->stored_alias(model);
  route_ = route;
  chain_ = &chains->of(*route, *ctx_.ingress);
  chains_ = std::move(chains);
  return std::nullopt;
}

Result<ir::Request*> CallContext::ir() {
  if (!ir_) {
    auto ir = ctx_.ingress->to_ir(request_);
    if (!ir) {
      return std::move(ir).error();
    }
    ir_ = std::make_unique<ir::Request>(std::move(*ir));
    ir_strict_ = request_.strict_fields;
    if (request_.provider_options) {
      auto bag = provider_options();
      if (!bag) {
        ir_.reset();
        return std::move(bag).error();
      }
      if (!(*bag)->empty()) {
        ir_->provider_options = (*bag)->text();  // part of the question the cache keys on
      }
    }
    if (ctx_.ingress->seals_reasoning()) {
      // Opened once for every reader (the cache key sees the signature, not its random nonce);
      // what does not open never goes upstream.
      request_.ignored_fields += static_cast<std::uint32_t>(
          open_reasoning(*ir_, ctx_.snapshot->reasoning_seal(), /*only_sealed=*/true));
    }
  }
  return ir_.get();
}

Result<const ProviderOptions*> CallContext::provider_options() {
  if (!request_.provider_options) {
    return nullptr;
  }
  if (!provider_options_) {
    auto read = ProviderOptions::read(request_.body);
    if (!read) {
      return std::move(read).error();
    }
    provider_options_ = std::move(*read);
  }
  return &*provider_options_;  // possibly empty: its member still comes out of the body
}

Result<ir::Request*> CallContext::ir_for_translation() {
  const bool strict = config().server.strict_fields;
  if (ir_ && strict && !ir_strict_) {
    ir_.reset();  // decoded for a look, without the strict check translation needs
  }
  request_.strict_fields = strict;
  auto ir = this->ir();
  ctx_.ignored_fields = request_.ignored_fields;  // the full decode counts them
  ctx_.dropped_tools = request_.dropped_tools;
  return ir;
}

std::optional<Error> CallContext::replace_body(std::string body) {
  // On the heap: the decoded request views it, and moving a short std::string copies its bytes.
  auto next = std::make_unique<std::string>(std::move(body));
  auto decoded = ctx_.ingress->decode(*next, head_);
  if (!decoded) {
    return std::move(decoded).error();  // the request is left as it was
  }
  request_ = std::move(*decoded);
  rewritten_body_ = std::move(next);
  ir_.reset();
  requested_limit_.reset();
  return std::nullopt;
}

std::optional<std::uint64_t> CallContext::output_limit() const {
  if (output_limit_) {
    return output_limit_;
  }
  const ir::Request* ir = ir_ ? ir_.get() : request_.ir ? &*request_.ir : nullptr;
  if (ir != nullptr) {
    return ir->max_tokens ? std::optional<std::uint64_t>(*ir->max_tokens) : std::nullopt;
  }
  if (!requested_limit_) {
    // The first field the protocol names that the body sets (read without a DOM).
    std::optional<std::uint64_t> found;
    for (const codec::MemberPath& field : ctx_.ingress->output_limit_fields()) {
      const codec::UnsignedMember m = codec::read_unsigned_member(request_.body, field);
      if (m.present) {
        found = m.value;
        break;
      }
    }
    requested_limit_ = found;
  }
  return *requested_limit_;
}

std::optional<std::uint64_t> CallContext::max_tokens() const { return output_limit(); }

bool CallContext::guardrails_found(std::string_view name) const {
  for (const GuardrailFind& f : ctx_.guardrails) {
    if (f.output) {
      continue;
    }
    if (name.empty() || name == f.policy ||
        (name.size() == f.policy.size() + 1 + f.detector.size() && name.starts_with(f.policy) &&
         name[f.policy.size()] == '/' && name.ends_with(f.detector))) {
      return true;
    }
  }
  return false;
}

namespace {

void hash_parts(std::uint64_t& h, std::span<const ir::ContentPart> parts) {
  for (const ir::ContentPart& p : parts) {
    const char kind = static_cast<char>('0' + static_cast<int>(p.kind));
    h = routing::stable_hash(std::string_view(&kind, 1), h);
    h = routing::stable_hash(p.text, h);
    h = routing::stable_hash(p.name, h);
    h = routing::stable_hash(p.arguments, h);
    h = routing::stable_hash(p.source, h);
    hash_parts(h, p.parts);
  }
}

}  // namespace

std::uint64_t CallContext::affinity() const {
  // Never 0 (0 means none): the low bit is set on every answer.
  if (std::optional<std::string_view> given = header("x-sluice-affinity-key");
      given && !given->empty()) {
    return routing::stable_hash(*given) | 1;
  }
  const std::vector<codec::ValueRange> cache_key =
      codec::find_member(request_.body, {"prompt_cache_key", ""});
  if (!cache_key.empty()) {
    const codec::ValueRange& v = cache_key.back();
    return routing::stable_hash(request_.body.substr(v.begin, v.end - v.begin)) | 1;
  }
  // The prefix a provider's prompt cache would match: system prompt, tools, first message.
  // ir() decodes on first use and keeps the result: this is the plan asking, once.
  Result<ir::Request*> decoded = const_cast<CallContext*>(this)->ir();
  if (!decoded) {
    return 0;
  }
  const ir::Request& r = **decoded;
  std::uint64_t h = routing::stable_hash("sluice-prefix");
  hash_parts(h, r.system);
  for (const ir::Tool& t : r.tools) {
    h = routing::stable_hash(t.name, h);
    h = routing::stable_hash(t.description, h);
    h = routing::stable_hash(t.parameters, h);
  }
  if (!r.messages.empty()) {
    const char role = static_cast<char>('0' + static_cast<int>(r.messages.front().role));
    h = routing::stable_hash(std::string_view(&role, 1), h);
    hash_parts(h, r.messages.front().content);
  }
  return h | 1;
}

std::string_view CallContext::key() const {
  return ctx_.key != nullptr ? std::string_view(ctx_.key->name) : std::string_view();
}

std::string_view CallContext::key_group() const {
  return ctx_.key != nullptr ? std::string_view(ctx_.key->group) : std::string_view();
}

std::optional<std::string_view> CallContext::header(std::string_view lower_name) const {
  if (!head_.has_header(lower_name)) {
    return std::nullopt;
  }
  return head_.header(lower_name);
}

CallerStream& CallContext::open_stream(std::chrono::milliseconds heartbeat) {
  if (stream_) {
    stream_->keep_alive_every(heartbeat);
  } else {
    stream_.emplace(ctx_, *downstream_, clock(), heartbeat);
    stream_->set_rerun_filters([this](std::string& out) {
      std::optional<Error> stopped;
      const bool go_on = filter_stream_data(out, stopped);
      if (!out.empty() && ctx_.first_token.count() < 0) {
        ctx_.first_token =
            std::chrono::duration_cast<std::chrono::microseconds>(clock().now() - ctx_.started);
      }
      if (go_on) {
        return true;
      }
      // A filter ended the stream on its own clock: its error event is in `out`, and the
      // upstream call is over for this caller.
      ctx_.outcome = Outcome::kMidstreamError;
      ctx_.error = stopped;
      cancel_.cancel();
      return false;
    });
  }
  return *stream_;
}

void CallContext::rerun_stream_filters_at(Clock::Monotonic::time_point due) {
  if (stream_) {
    stream_->rerun_filters_at(due);
  }
}

Awaitable<std::optional<Error>> CallContext::release(const std::string* answer) {
  released_ = true;
  for (Filter* filter : chain_->at(FilterHook::kBeforeRelease)) {
    const FilterStatus status = co_await filter->before_release(*this, answer);
    if (status.action() == FilterStatus::Action::kStop) {
      co_return status.error();
    }
  }
  co_return std::nullopt;
}

Awaitable<void> CallContext::send_answer(ResponseHead& head, std::string body) {
  std::optional<Error> stopped;
  if (must_release()) {
    stopped = co_await release(&body);
  }
  for (Filter* filter : chain_->at(FilterHook::kResponseHead)) {
    if (stopped) {
      break;
    }
    const FilterStatus status = filter->on_response_head(*this, head);
    if (!status.proceeds()) {
      stopped = status.action() == FilterStatus::Action::kStop ? std::optional(status.error())
                                                               : std::nullopt;
      break;
    }
  }
  for (Filter* filter : chain_->at(FilterHook::kResponseBody)) {
    if (stopped) {
      break;
    }
    const FilterStatus status = filter->on_response_body(*this, body);
    if (status.action() == FilterStatus::Action::kStop) {
      stopped = status.error();
    }
  }
  if (!stopped && stream_) {
    const bool plain = co_await plain_answer();
    if (!plain) {
      // The keep-alive sent a stream's head early and the upstream answered in one piece: the
      // caller expects events now.
      stopped = Error(ErrorKind::kUpstreamProtocol,
                      "the provider answered a streaming request without a stream")
                    .with_code("upstream_not_streaming");
    }
  }
  if (stopped) {
    co_await fail(*stopped, Outcome::kUpstreamError);
    co_return;
  }
  co_await downstream_->send(ctx_, head, body);
}

Awaitable<bool> CallContext::begin_own_stream(ResponseHead& head) {
  if (must_release()) {
    std::optional<Error> stopped = co_await release(nullptr);
    if (stopped) {
      co_await fail(*stopped, Outcome::kUpstreamError);
      co_return false;
    }
  }
  for (Filter* filter : chain_->at(FilterHook::kResponseHead)) {
    const FilterStatus status = filter->on_response_head(*this, head);
    if (status.action() == FilterStatus::Action::kStop) {
      co_await fail(status.error(), Outcome::kUpstreamError);
      co_return false;
    }
  }
  CallerStream& stream = stream_ ? *stream_ : open_stream(std::chrono::milliseconds(0));
  const bool began = co_await stream.begin(head);
  if (!began) {
    client_gone(Error(ErrorKind::kClientGone, "client disconnected before the stream began"));
  }
  co_return began;
}

Awaitable<bool> CallContext::write_own_stream(std::string& data, bool ending) {
  std::optional<Error> stopped;
  bool go_on = true;
  if (checks_stream()) {
    go_on = co_await check_stream_data(data, stopped, ending);
  }
  if (go_on) {
    go_on = filter_stream_data(data, stopped, ending);
  }
  const bool sent = co_await stream_->write(data);
  if (!go_on) {
    ctx_.outcome = Outcome::kMidstreamError;
    ctx_.error = stopped;
  }
  if (!sent) {
    client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
    co_return false;
  }
  if (!go_on) {
    co_await stream_->end();
  }
  co_return go_on;
}

Awaitable<void> CallContext::send_stream(ResponseHead& head, std::string events) {
  const bool began = co_await begin_own_stream(head);
  if (!began) {
    co_return;
  }
  const bool written = co_await write_own_stream(events, /*ending=*/true);
  if (written) {
    co_await stream_->end();
  }
}

void CallContext::hold_caller(std::function<bool()> wanted) {
  if (held_) {
    held_->also_wanted(std::move(wanted));
    return;
  }
  held_ = std::make_unique<HeldDownstream>(*downstream_, std::move(wanted));
  downstream_ = held_.get();
}

bool CallContext::caller_left() const {
  return held_ ? held_->caller_left() : downstream_->client_gone();
}

Awaitable<void> CallContext::send_upstream_error(ResponseHead& head, std::string_view body) {
  if (must_release()) {
    std::optional<Error> stopped = co_await release(nullptr);
    if (stopped) {
      co_await fail(*stopped, Outcome::kUpstreamError);
      co_return;
    }
  }
  for (Filter* filter : chain_->at(FilterHook::kResponseHead)) {
    const FilterStatus status = filter->on_response_head(*this, head);
    if (status.action() == FilterStatus::Action::kStop) {
      co_await fail(status.error(), Outcome::kUpstreamError);
      co_return;
    }
  }
  co_await downstream_->send(ctx_, head, body);
}

Awaitable<bool> CallContext::plain_answer() {
  if (!stream_) {
    co_return true;
  }
  co_return co_await stream_->claim_plain();
}

Awaitable<void> CallContext::fail(const Error& failure, Outcome outcome,
                                  UpstreamRequest* upstream) {
  std::optional<Error> stopped;
  if (must_release()) {
    stopped = co_await release(nullptr);  // a verdict still to come outranks the failure
  }
  const Error& error = stopped ? *stopped : failure;
  ctx_.outcome = outcome;
  ctx_.error = error;
  bool plain = true;
  if (stream_) {
    plain = co_await plain_answer();
  }
  if (!plain) {
    std::string event;
    ctx_.ingress->append_stream_error(error, event);
    const bool sent = co_await stream_->write(event);
    if (sent) {
      co_await stream_->end();
    }
    co_return;
  }
  ResponseHead& head = downstream_->new_head();
  const std::string body = error_response(ctx_, error, head);
  if (upstream != nullptr) {
    relay_upstream_headers(upstream->adapter(), upstream->exchange(), head,
                           /*include_retry_headers=*/false);
  }
  co_await downstream_->send(ctx_, head, body);
}

void CallContext::client_gone(const Error& error) { record_client_gone(ctx_, error); }

namespace {

// What a stream filter that stopped the stream ends it with.
Error stream_stop(const FilterStatus& status) {
  return status.action() == FilterStatus::Action::kStop
             ? status.error()
             : Error(ErrorKind::kInternal, "a filter ended the stream").with_code("stream_stopped");
}

}  // namespace

bool CallContext::filter_stream_data(std::string& data, std::optional<Error>& stopped,
                                     bool ending) {
  stream_ending_ = ending;
  for (Filter* filter : chain_->at(FilterHook::kStreamData)) {
    const FilterStatus status = filter->on_stream_data(*this, data);
    if (!status.proceeds()) {
      stream_ending_ = false;
      stopped = stream_stop(status);
      ctx_.ingress->append_stream_error(*stopped, data);
      return false;
    }
  }
  stream_ending_ = false;
  return true;
}

Awaitable<bool> CallContext::check_stream_data(std::string& data, std::optional<Error>& stopped,
                                               bool ending) {
  for (Filter* filter : chain_->at(FilterHook::kStreamCheck)) {
    const FilterStatus status = co_await filter->check_stream_data(*this, data, ending);
    if (!status.proceeds()) {
      stopped = stream_stop(status);
      data.clear();  // nothing from the checked text on goes out
      ctx_.ingress->append_stream_error(*stopped, data);
      co_return false;
    }
  }
  co_return true;
}

void CallContext::end_filters() {
  if (ended_filters_ || chain_ == nullptr) {
    return;
  }
  ended_filters_ = true;
  for (Filter* filter : chain_->at(FilterHook::kEnd)) {
    filter->on_end(*this);
  }
}

}  // namespace sluice::pipeline
