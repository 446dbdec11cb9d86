#include "pipeline/filters/idempotency_filter.h"

#include "cache/entry_codec.h"
#include "codec/http_tokens.h"
#include "config/scalars.h"
#include "pipeline/call_context.h"
#include "pipeline/error_reply.h"
#include "pipeline/filters/answer_keeper.h"
#include "pipeline/filters/cache_follower.h"
#include "pipeline/filters/told_answer.h"
#include "pipeline/pipeline.h"
#include "protocol/registry.h"

namespace sluice::pipeline {

// What the filter keeps for one request that carries a key.
struct IdempotencyFilter::Call final : FilterState {
  cache::Key key{};
  cache::Key digest{};
  AnswerKeeper keeper;  // the first call under the key
  std::shared_ptr<cache::Flight> followed;
  std::shared_ptr<const cache::Entry> replayed;
  bool joining = false;    // following the first call: its head says it is a replay
  bool claimed = false;    // the key is this call's in the shared store: finish_claim at the end
  bool held_here = false;  // the store says a call of this instance holds the key
};

namespace {

constexpr std::size_t kMaxKeyLength = 255;

Error bad_key() {
  return Error(ErrorKind::kBadRequest,
               "The Idempotency-Key header must be 1 to 255 visible "
               "ASCII characters.")
      .with_code("invalid_idempotency_key")
      .with_param("Idempotency-Key");
}

Error reused(int status, std::string_view why) {
  return Error(ErrorKind::kBadRequest, status,
               "This Idempotency-Key was used for a different request" + std::string(why) +
                   "; send a new key for a new request.")
      .with_code("idempotency_key_reused")
      .with_param("Idempotency-Key");
}

Error in_use_elsewhere() {
  return Error(ErrorKind::kBadRequest, 409,
               "A request with this Idempotency-Key is still under way; retry it after it "
               "completes to get its answer.")
      .with_code("idempotency_key_in_use")
      .with_param("Idempotency-Key")
      .with_retry_after(1);
}

// How long a claim in the shared store outlives a call that never finishes it (its instance
// died): retries meanwhile are told to wait, then the next one goes upstream.
constexpr std::chrono::minutes kClaimHold{10};

std::string tenant_of(const CallContext& call) {
  const config::Key* key = call.ctx().key;
  if (key == nullptr) {
    return "-";
  }
  return key->group.empty() ? "k:" + key->id : "g:" + key->group;
}

}  // namespace

std::unique_ptr<Filter> IdempotencyFilter::make(const FilterSetup& setup) {
  const config::IdempotencySettings& settings = setup.snapshot.config().idempotency;
  cache::CacheState* cache = setup.parts.cache;
  if (!settings.enabled || cache == nullptr || setup.ingress.output_limit_fields().empty()) {
    return nullptr;
  }
  const protocol::UpstreamCodec* codec =
      protocol::find_upstream(setup.ingress.protocol(), setup.ingress.operation());
  if (codec == nullptr) {
    return nullptr;
  }
  return std::make_unique<IdempotencyFilter>(settings, *cache, setup.parts.shared_replays,
                                             setup.route.config->aliases.front(), *codec);
}

IdempotencyFilter::IdempotencyFilter(config::IdempotencySettings settings, cache::CacheState& cache,
                                     cache::SharedStore* shared, std::string alias,
                                     const protocol::UpstreamCodec& codec)
    : settings_(std::move(settings)),
      replays_(cache.replays),
      flights_(cache.replay_flights),
      shared_(shared),
      alias_(std::move(alias)),
      codec_(codec) {}

Awaitable<FilterStatus> IdempotencyFilter::before_plan(CallContext& call) {
  const std::optional<std::string_view> header = call.header("idempotency-key");
  if (!header) {
    co_return FilterStatus::proceed();
  }
  const std::string_view value = codec::trim_ows(*header);
  if (value.empty() || value.size() > kMaxKeyLength || !config::is_visible_ascii(value)) {
    co_return FilterStatus::stop(bad_key());
  }
  Call& state = call.state<Call>(*this);
  state.key = cache::idempotency_key(tenant_of(call), alias_, value);
  state.digest =
      cache::request_digest(call.ingress().protocol(), call.ctx().path, call.request().body);
  if (auto found = replays_.find(state.key, call.clock().now())) {
    if (found->entry->request_digest != state.digest) {
      co_return FilterStatus::stop(reused(422, ""));
    }
    state.replayed = found->entry;
    call.ctx().cached_owner = found->entry;
    co_return co_await replay(call, *found->entry);
  }
  if (shared_ != nullptr) {
    if (std::optional<FilterStatus> decided = co_await ask_shared(call, state)) {
      co_return std::move(*decided);
    }
  }
  co_return co_await board(call, state);
}

Awaitable<std::optional<FilterStatus>> IdempotencyFilter::ask_shared(CallContext& call,
                                                                     Call& state) {
  cache::SharedStore::Claim claim = co_await shared_->claim(state.key, state.digest, kClaimHold);
  using Result = cache::SharedStore::Claim::Result;
  switch (claim.result) {
    case Result::kClaimed:
      state.claimed = true;
      co_return std::nullopt;
    case Result::kUnavailable:
      co_return std::nullopt;  // each instance on its own until the store answers
    case Result::kHeld:
      if (claim.holder_digest != cache::to_hex(state.digest)) {
        co_return FilterStatus::stop(reused(409, ", which is still under way"));
      }
      if (claim.held_here) {
        state.held_here = true;
        co_return std::nullopt;  // this instance's call: board joins its flight
      }
      co_return FilterStatus::stop(in_use_elsewhere());
    case Result::kDone:
      break;
  }
  std::optional<cache::Entry> entry = cache::decode_entry(
      claim.record, {call.clock().wall_now(), call.clock().now()}, settings_.max_entry_bytes);
  if (!entry) {
    co_return std::nullopt;  // a record this version cannot read: treated as absent
  }
  if (entry->request_digest != state.digest) {
    co_return FilterStatus::stop(reused(422, ""));
  }
  auto kept = std::make_shared<const cache::Entry>(std::move(*entry));
  replays_.put(state.key, kept);
  state.replayed = kept;
  call.ctx().cached_owner = kept;
  co_return co_await replay(call, *kept);
}

Awaitable<FilterStatus> IdempotencyFilter::replay(CallContext& call, const cache::Entry& entry) {
  std::optional<std::string> told = tell_answer(call, entry.answer);
  if (!told) {
    co_return FilterStatus::stop(reused(422, " in another protocol or mode"));
  }
  RequestContext& ctx = call.ctx();
  ctx.outcome = Outcome::kReplayed;
  ctx.finish_reason = std::string(ir::to_string(entry.answer.finish));
  ctx.cached_provider = entry.provider;
  ctx.cached_model = entry.model;
  ctx.saved(entry.answer.usage);
  ResponseHead& head = call.downstream().new_head();
  add_standard_fields(ctx, head);
  head.headers.add("Idempotent-Replayed", "true");
  co_await send_told_answer(call, head, std::move(*told));
  co_return FilterStatus::answered();
}

Awaitable<FilterStatus> IdempotencyFilter::board(CallContext& call, Call& state) {
  cache::Flights::Boarding boarding =
      flights_.board(state.key, settings_.max_entry_bytes, state.digest);
  if (!boarding.leader) {
    if (boarding.flight->digest() != state.digest) {
      boarding.flight->leave();
      co_return FilterStatus::stop(reused(409, ", which is still under way"));
    }
    state.joining = true;
    const bool followed = co_await follow_flight(call, *boarding.flight);
    state.joining = false;
    boarding.flight->leave();
    if (followed) {
      state.followed = std::move(boarding.flight);
      if (state.claimed) {
        // This call claimed the key while a call of this instance that could not reach the
        // store led it: the answer that call kept here goes to the store with the claim.
        std::optional<std::string> record;
        if (auto kept = replays_.find(state.key, call.clock().now());
            kept && kept->entry->request_digest == state.digest) {
          record = cache::encode_entry(*kept->entry, {call.clock().wall_now(), call.clock().now()},
                                       settings_.compress_above_bytes);
        }
        shared_->finish_claim(state.key, state.digest, std::move(record), settings_.ttl);
        state.claimed = false;
      }
      co_return FilterStatus::answered();
    }
    co_return FilterStatus::proceed();  // the first call failed: this retry is a new try
  }
  if (state.held_here) {
    // The store said this instance holds the key, but its call has landed since: its answer
    // is kept here now (it is remembered before its flight lands), or it failed and this retry
    // is a new try.
    if (auto found = replays_.find(state.key, call.clock().now());
        found && found->entry->request_digest == state.digest) {
      flights_.land(state.key, *boarding.flight);
      boarding.flight->finish(false, {}, {});
      state.replayed = found->entry;
      call.ctx().cached_owner = found->entry;
      co_return co_await replay(call, *found->entry);
    }
  }
  state.keeper.lead(call, flights_, state.key, std::move(boarding.flight), codec_,
                    settings_.max_entry_bytes);
  co_return FilterStatus::proceed();
}

FilterStatus IdempotencyFilter::on_response_head(CallContext& call, ResponseHead& head) {
  if (Call* state = call.find_state<Call>(*this)) {
    if (state->joining) {
      head.headers.add("Idempotent-Replayed", "true");  // the first call's answer, live
    }
    state->keeper.on_head(head.status);
  }
  return FilterStatus::proceed();
}

FilterStatus IdempotencyFilter::on_response_body(CallContext& call, std::string& body) {
  if (Call* state = call.find_state<Call>(*this)) {
    state->keeper.on_body(body);
  }
  return FilterStatus::proceed();
}

FilterStatus IdempotencyFilter::on_stream_data(CallContext& call, std::string& data) {
  if (Call* state = call.find_state<Call>(*this)) {
    state->keeper.on_stream(data);
  }
  return FilterStatus::proceed();
}

void IdempotencyFilter::on_end(CallContext& call) {
  Call* state = call.find_state<Call>(*this);
  if (state == nullptr) {
    return;
  }
  if (!state->keeper.keeping()) {
    if (state->claimed) {
      shared_->finish_claim(state->key, state->digest, std::nullopt, settings_.ttl);
    }
    return;
  }
  std::optional<ir::Response> answer = state->keeper.answer(call);
  const bool whole = answer.has_value();
  std::shared_ptr<const cache::Entry> kept;
  if (whole) {
    kept = remember(call, *state, std::move(*answer));
  }
  if (state->claimed) {
    std::optional<std::string> record;
    if (kept != nullptr) {
      record = cache::encode_entry(*kept, {call.clock().wall_now(), call.clock().now()},
                                   settings_.compress_above_bytes);
    }
    shared_->finish_claim(state->key, state->digest, std::move(record), settings_.ttl);
  }
  state->keeper.land(call, whole);
}

std::shared_ptr<const cache::Entry> IdempotencyFilter::remember(CallContext& call, Call& state,
                                                                ir::Response answer) {
  const Attempt& answered = *call.ctx().last_attempt();
  auto entry = std::make_shared<cache::Entry>();
  entry->answer = std::move(answer);
  entry->alias = alias_;
  entry->provider = std::string(answered.provider);
  entry->model = std::string(answered.model);
  entry->request_digest = state.digest;
  entry->stored_at = call.clock().wall_now();
  entry->fresh_until = call.clock().now() + settings_.ttl;
  entry->stale_until = entry->fresh_until;
  entry->bytes = cache::entry_bytes(*entry);
  if (entry->bytes > settings_.max_entry_bytes) {
    return nullptr;
  }
  replays_.put(state.key, entry);
  return entry;
}

}  // namespace sluice::pipeline
