#include "pipeline/filters/cache_filter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/container/small_vector.hpp>

#include "cache/entry_codec.h"
#include "cache/key.h"
#include "cache/replay.h"
#include "codec/http_tokens.h"
#include "pipeline/call_context.h"
#include "pipeline/error_reply.h"
#include "pipeline/filters/answer_keeper.h"
#include "pipeline/filters/cache_follower.h"
#include "pipeline/filters/shared_flight.h"
#include "pipeline/filters/told_answer.h"
#include "pipeline/internal_call.h"
#include "pipeline/pipeline.h"
#include "protocol/registry.h"

namespace sluice::pipeline {

using std::chrono::milliseconds;

// What the cache keeps for one request.
struct CacheFilter::Call final : FilterState {
  cache::Key key{};
  std::string tenant;
  milliseconds ttl{0};
  // A miss or a refresh (leading a shared call, unless no-cache): its answer read back.
  AnswerKeeper keeper;
  // A hit: the entry that answered (ctx.cached_provider and cached_model view it).
  std::shared_ptr<const cache::Entry> served;
  // A follower: the flight it followed (holds the target's name for the record).
  std::shared_ptr<cache::Flight> followed;
  // The semantic cache: whether to look this request up (keyed), then its question's
  // embedding (a leader that looked it up), kept with the answer when it is stored; a hit's
  // similarity.
  bool semantic = false;
  std::optional<SemanticLookup::Probe> probe;
  float similarity = 0;
  std::string similarity_text;  // the header's value, alive until the head is written
  bool finished = false;        // stored and landed (finish): once
  // This call holds the instances' claim on its key (claim_shared_flight): released when
  // it is over, after its answer went to the shared store.
  bool shared_claim = false;
};

// The caller's say in the matter (RFC 9111 request directives the cache honours, and ours).
struct CacheFilter::Directives {
  bool no_store = false;  // neither served from nor stored in the cache
  bool no_cache = false;  // not served from the cache; the fresh answer is stored
  std::optional<milliseconds> ttl;
};

namespace {

CacheFilter::Directives read_directives(const CallContext& call) {
  CacheFilter::Directives d;
  if (auto value = call.header("cache-control")) {
    std::string_view rest = *value;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view token = codec::trim_ows(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (codec::equals_lower(token, "no-store")) {
        d.no_store = true;
      } else if (codec::equals_lower(token, "no-cache") ||
                 codec::equals_lower(token, "max-age=0")) {
        d.no_cache = true;
      }
    }
  }
  if (auto value = call.header("x-sluice-cache-ttl")) {
    const std::string_view text = codec::trim_ows(*value);
    std::uint64_t seconds = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec == std::errc() && end == text.data() + text.size() && seconds > 0 &&
        seconds < 100'000'000) {
      d.ttl = milliseconds(seconds * 1000);
    }
  }
  return d;
}

std::string tenant_of(const CallContext& call, config::CacheSettings::Scope scope) {
  const config::Key* key = call.ctx().key;
  if (scope == config::CacheSettings::Scope::kShared) {
    return "*";
  }
  if (key == nullptr) {
    return "-";  // auth is off: there are no tenants to keep apart
  }
  if (scope == config::CacheSettings::Scope::kKeyGroup && !key->group.empty()) {
    return "g:" + key->group;
  }
  return "k:" + key->id;
}

// The route's vary_headers and each one's value in the request (cache/key.h KeyScope::vary).
using VaryValues = boost::container::small_vector<std::pair<std::string_view, std::string_view>, 4>;
VaryValues vary_values(const CallContext& call, const std::vector<std::string>& names) {
  VaryValues vary;
  for (const std::string& name : names) {
    vary.emplace_back(name, call.header(name).value_or(""));
  }
  return vary;
}

std::string route_scope(const config::Route& route) {
  std::string scope = route.aliases.front();
  for (const config::Target& t : route.targets) {
    scope += '|';
    scope += t.provider;
    scope += '/';
    scope += t.model;
  }
  return scope;
}

// Entries of one burst should not expire together: each lives up to `jitter` of its TTL less,
// drawn from its key (uniform bytes), so no generator state is shared between workers.
milliseconds jittered(milliseconds ttl, double jitter, const cache::Key& key) {
  const double draw = static_cast<double>((key[0] << 8) | key[1]) / 65536.0;
  return milliseconds(
      static_cast<milliseconds::rep>(static_cast<double>(ttl.count()) * (1.0 - jitter * draw)));
}

// The route's semantic cache, when it has one and this worker can make internal calls.
std::unique_ptr<SemanticLookup> semantic_lookup(const FilterSetup& setup,
                                                cache::CacheState& cache) {
  const std::optional<config::SemanticSettings>& semantic = setup.route.config->cache.semantic;
  if (!semantic || setup.parts.internal_calls == nullptr) {
    return nullptr;
  }
  const RouteRuntime* embedder = setup.snapshot.find_route(semantic->embeddings);
  if (embedder == nullptr) {
    return nullptr;  // the config checks it; a skipped route turned it off
  }
  return std::make_unique<SemanticLookup>(*semantic, cache.semantic,
                                          cache.embedding_breaker(semantic->embeddings),
                                          route_scope(*embedder->config));
}

}  // namespace

std::unique_ptr<Filter> CacheFilter::make(const FilterSetup& setup) {
  const config::Route& route = *setup.route.config;
  cache::CacheState* cache = setup.parts.cache;
  if (!route.cache.enabled || cache == nullptr || setup.ingress.output_limit_fields().empty()) {
    return nullptr;  // off, or an endpoint that produces no answer (count_tokens, embeddings)
  }
  const protocol::UpstreamCodec* codec =
      protocol::find_upstream(setup.ingress.protocol(), setup.ingress.operation());
  if (codec == nullptr) {
    return nullptr;
  }
  return std::make_unique<CacheFilter>(
      route.cache, *cache,
      Shared{setup.parts.shared_answers, setup.snapshot.config().cache.compress_above_bytes},
      route.aliases.front(), route_scope(route), *codec, semantic_lookup(setup, *cache));
}

CacheFilter::CacheFilter(config::CacheSettings settings, cache::CacheState& cache, Shared shared,
                         std::string alias, std::string route_scope,
                         const protocol::UpstreamCodec& codec,
                         std::unique_ptr<SemanticLookup> semantic)
    : settings_(std::move(settings)),
      store_(cache.answers),
      key_aliases_(cache.key_aliases),
      flights_(cache.flights),
      shared_(shared),
      alias_(std::move(alias)),
      route_scope_(std::move(route_scope)),
      codec_(codec),
      semantic_(std::move(semantic)) {}

CacheFilter::Call* CacheFilter::keyed(CallContext& call, const Directives& directives) {
  RequestContext& ctx = call.ctx();
  ctx.cache = "bypass";
  if (directives.no_store || !call.request().continues.empty()) {
    return nullptr;
  }
  std::string tenant = tenant_of(call, settings_.scope);
  const VaryValues vary = vary_values(call, settings_.vary_headers);
  const cache::KeyScope scope{route_scope_, tenant, {vary.data(), vary.size()}};
  // Bytes seen before have their key remembered: a hit on a long prompt is then not decoded.
  const cache::Key alias =
      cache::body_alias(scope, call.ingress().api_name(), call.head().path(), call.request().body);
  std::optional<cache::Key> key = key_aliases_.find(alias);
  if (!key) {
    Result<ir::Request*> request = call.ir();
    if (!request || call.request().ignored_fields > 0) {
      return nullptr;  // the IR is not the whole request: no key for it
    }
    key = cache::answer_key(**request, scope);
    key_aliases_.remember(alias, *key);
  }
  Call& state = call.state<Call>(*this);
  state.tenant = std::move(tenant);
  state.key = *key;
  state.semantic = semantic_ != nullptr && !directives.no_cache;
  state.ttl = std::min(directives.ttl.value_or(settings_.ttl), settings_.ttl);
  ctx.cache = "miss";
  ctx.cache_key = state.key;
  return &state;
}

Awaitable<FilterStatus> CacheFilter::before_plan(CallContext& call) {
  const Directives directives = read_directives(call);
  Call* state = keyed(call, directives);
  if (state == nullptr) {
    co_return FilterStatus::proceed();
  }
  if (directives.no_cache) {
    state->keeper.keep(codec_, settings_.max_entry_bytes);
    co_return FilterStatus::proceed();  // fresh from the origin: neither the store nor a flight
  }
  std::optional<cache::MemoryStore::Found> found = store_.find(state->key, call.clock().now());
  if (!found && shared_.store != nullptr) {
    found = co_await find_shared(call, *state, state->key);
  }
  if (found) {
    if (!found->refresh) {
      const bool served = co_await serve(
          call, *state, *found,
          found->freshness == cache::MemoryStore::Freshness::kStale ? "stale" : "hit");
      if (served) {
        co_return FilterStatus::answered();
      }
    } else {
      // This request claimed the refresh: made behind its back, it gets the stale answer now;
      // with no room for another internal call, it refreshes the entry itself.
      // (co_await stays out of conditions: GCC 12 miscompiles some of those.)
      auto executor = co_await boost::asio::this_coro::executor;
      call.ctx().cache = "refresh";
      if (refresh_in_background(call, std::move(executor))) {
        const bool served = co_await serve(call, *state, *found, "stale");
        if (served) {
          co_return FilterStatus::answered();
        }
      }
    }
  }
  co_return co_await board(call, *state);
}

// A local miss asks the instances' shared store; an answer found there is kept here too. Only a
// fresh one serves: refreshing a stale entry is the business of the instance that finds it in
// its own store.
Awaitable<std::optional<cache::MemoryStore::Found>> CacheFilter::find_shared(
    CallContext& call, const Call& state, const cache::Key& key) {
  std::optional<std::string> record =
      co_await shared_.store->find_answer(alias_, state.tenant, key);
  if (!record) {
    co_return std::nullopt;
  }
  co_return adopt_shared(call, state, key, *record);
}

std::optional<cache::MemoryStore::Found> CacheFilter::adopt_shared(CallContext& call,
                                                                   const Call& state,
                                                                   const cache::Key& key,
                                                                   std::string_view record) {
  const auto now = call.clock().now();
  std::optional<cache::Entry> entry =
      cache::decode_entry(record, {call.clock().wall_now(), now}, settings_.max_entry_bytes);
  // The name holds the key, and the key the scope; the record must say the same scope, or it is
  // not this request's answer (a record written under another name).
  if (!entry || entry->route != route_scope_ || entry->tenant != state.tenant ||
      entry->fresh_until <= now) {
    return std::nullopt;
  }
  auto kept = std::make_shared<const cache::Entry>(std::move(*entry));
  store_.put(key, kept);
  return cache::MemoryStore::Found{std::move(kept), cache::MemoryStore::Freshness::kFresh, false};
}

// The request again, as an internal call of the same caller that skips the lookup and stores
// the fresh answer (Cache-Control: no-cache). Its caller's credentials stay behind (the call
// runs as its key without them), and so does its Idempotency-Key (the refresh is a new call).
bool CacheFilter::refresh_in_background(CallContext& call,
                                        boost::asio::any_io_executor executor) const {
  InternalRequest refresh;
  refresh.purpose = "refresh";
  const std::string_view target = call.head().target();
  refresh.target = std::string(call.head().path());
  if (target.find("alt=sse") != std::string_view::npos) {
    refresh.target += "?alt=sse";  // a Gemini stream; the query's other fields (a key) stay
  }
  call.head().for_each_header([&](std::string_view name, std::string_view value) {
    for (std::string_view dropped :
         {"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "cache-control",
          "idempotency-key", "content-length", "transfer-encoding", "host", "connection"}) {
      if (codec::equals_lower(name, dropped)) {
        return;
      }
    }
    refresh.headers.emplace_back(std::string(name), std::string(value));
  });
  refresh.headers.emplace_back("cache-control", "no-cache");
  refresh.body = std::string(call.request().body);
  refresh.max_answer_bytes = 0;  // its answer is stored by its own cache filter, not read here
  return InternalCall::start(call.pipeline(), call.ctx(), std::move(refresh),
                             std::move(executor)) != nullptr;
}

// A miss: follows the identical call already in the air, or leads a new one whose answer
// feeds whoever follows.
Awaitable<FilterStatus> CacheFilter::board(CallContext& call, Call& state) {
  cache::Flights::Boarding boarding = flights_.board(state.key, settings_.max_entry_bytes);
  if (!boarding.leader) {
    const bool followed = co_await follow_and_leave(call, boarding.flight);
    co_return co_await followed_or_own(call, state, std::move(boarding.flight), followed);
  }
  if (state.semantic) {
    std::optional<cache::MemoryStore::Found> found = co_await find_semantic(call, state);
    if (found) {
      co_return co_await answer_unflown(call, state, *boarding.flight, *found, "semantic");
    }
  }
  if (shared_.store != nullptr && settings_.shared_flight_wait.count() > 0) {
    SharedFlightWait waited = co_await claim_shared_flight(*shared_.store, alias_, state.tenant,
                                                           state.key, settings_.shared_flight_wait);
    if (waited.result == SharedFlightWait::Result::kElsewhere) {
      co_return co_await follow_elsewhere(call, state, std::move(boarding.flight));
    }
    if (waited.result == SharedFlightWait::Result::kAnswered) {
      if (std::optional<cache::MemoryStore::Found> found =
              adopt_shared(call, state, state.key, waited.record)) {
        call.ctx().saved_bill_percent = settings_.bill_percent;
        co_return co_await answer_unflown(call, state, *boarding.flight, *found, "coalesced");
      }
    }
    state.shared_claim = waited.claimed;
  }
  std::unique_ptr<LiveMirror> mirror;
  if (state.shared_claim) {  // waiters on other instances follow this call's live log
    mirror = std::make_unique<LiveMirror>(*shared_.store, alias_, state.tenant, state.key,
                                          settings_.shared_flight_wait, settings_.max_entry_bytes);
  }
  state.keeper.lead(call, flights_, state.key, std::move(boarding.flight), codec_,
                    settings_.max_entry_bytes, std::move(mirror));
  co_return FilterStatus::proceed();
}

Awaitable<bool> CacheFilter::follow_and_leave(CallContext& call,
                                              std::shared_ptr<cache::Flight> flight) {
  const bool followed = co_await follow_flight(call, *flight);
  flight->leave();
  co_return followed;
}

Awaitable<FilterStatus> CacheFilter::followed_or_own(CallContext& call, Call& state,
                                                     std::shared_ptr<cache::Flight> flight,
                                                     bool followed) {
  if (followed) {
    call.ctx().saved_bill_percent = settings_.bill_percent;
    state.followed = std::move(flight);
    co_return FilterStatus::answered();
  }
  // The shared call failed first, or its leader found the answer another way (a semantic
  // hit, stored under this key): the store once more, then a call of its own.
  if (std::optional<cache::MemoryStore::Found> found = store_.find(state.key, call.clock().now());
      found && found->freshness == cache::MemoryStore::Freshness::kFresh) {
    const bool served = co_await serve(call, state, *found, "hit");
    if (served) {
      co_return FilterStatus::answered();
    }
  }
  call.ctx().cache = "miss";
  state.keeper.keep(codec_, settings_.max_entry_bytes);
  co_return FilterStatus::proceed();
}

// Another instance makes this call: its live log is relayed into this instance's flight of the
// key (led by this request), and this request follows that flight like any local follower,
// both at once; the flight's other followers are this instance's identical requests.
Awaitable<FilterStatus> CacheFilter::follow_elsewhere(CallContext& call, Call& state,
                                                      std::shared_ptr<cache::Flight> flight) {
  using boost::asio::experimental::awaitable_operators::operator&&;
  SharedFlightRelay relay{*shared_.store,
                          alias_,
                          state.tenant,
                          state.key,
                          settings_.shared_flight_wait,
                          settings_.max_entry_bytes,
                          [this, &call, &state](std::string_view record) {
                            adopt_shared(call, state, state.key, record);
                          }};
  flight->join();  // this request follows the flight it leads
  const bool followed = co_await (relay_shared_flight(std::move(relay), flight, flights_) &&
                                  follow_and_leave(call, flight));
  co_return co_await followed_or_own(call, state, std::move(flight), followed);
}

// The leader found its answer without a call: its flight lands empty, so its followers look in
// the store again (the entry is there under their key now), and it is served.
Awaitable<FilterStatus> CacheFilter::answer_unflown(CallContext& call, Call& state,
                                                    cache::Flight& flight,
                                                    const cache::MemoryStore::Found& found,
                                                    std::string_view how) {
  flight.finish(false, {}, {});
  flights_.land(state.key, flight);
  const bool served = co_await serve(call, state, found, how);
  if (served) {
    co_return FilterStatus::answered();
  }
  call.ctx().cache = "miss";
  state.keeper.keep(codec_, settings_.max_entry_bytes);
  co_return FilterStatus::proceed();
}

Awaitable<std::optional<cache::MemoryStore::Found>> CacheFilter::find_semantic(CallContext& call,
                                                                               Call& state) {
  // Only a leader gets here: exact hits and followers never pay for the question's hash.
  Result<ir::Request*> request = call.ir();
  if (!request) {
    co_return std::nullopt;
  }
  const VaryValues vary = vary_values(call, settings_.vary_headers);
  std::optional<cache::SemanticQuestion> question =
      semantic_->question(**request, {route_scope_, state.tenant, {vary.data(), vary.size()}});
  if (!question) {
    co_return std::nullopt;
  }
  state.probe = co_await semantic_->embed(call, *question);
  if (!state.probe) {
    co_return std::nullopt;
  }
  if (shared_.store != nullptr) {
    co_await semantic_->catch_up(*shared_.store, alias_, state.tenant, *state.probe);
  }
  std::optional<cache::SemanticIndex::Match> match = semantic_->nearest(*state.probe);
  if (!match) {
    co_return std::nullopt;
  }
  // Only a fresh entry answers by meaning; a refresh window of 0 claims no refresh of it.
  std::optional<cache::MemoryStore::Found> found =
      store_.find(match->answer, call.clock().now(), milliseconds(0));
  if (!found && shared_.store != nullptr) {
    found = co_await find_shared(call, state, match->answer);  // another instance's answer
  }
  if (!found || found->freshness != cache::MemoryStore::Freshness::kFresh ||
      found->entry->tenant != state.tenant || found->entry->route != route_scope_) {
    if (!found) {
      semantic_->forget(*state.probe, match->answer);  // evicted or purged: the vector too
    }
    co_return std::nullopt;
  }
  state.similarity = match->similarity;
  store_.put(state.key, found->entry);  // this wording is answered now, without an embedding
  co_return found;
}

Awaitable<bool> CacheFilter::serve(CallContext& call, Call& state,
                                   const cache::MemoryStore::Found& found, std::string_view how) {
  const cache::Entry& entry = *found.entry;
  std::optional<std::string> told = tell_answer(call, entry.answer);
  if (!told) {
    co_return false;
  }
  RequestContext& ctx = call.ctx();
  state.served = found.entry;
  ctx.cache = how;
  // Another instance's call that was under way when this one asked is a shared call, not a hit.
  ctx.outcome = how == "coalesced" ? Outcome::kCoalesced : Outcome::kCacheHit;
  ctx.finish_reason = std::string(ir::to_string(entry.answer.finish));
  ctx.cached_owner = found.entry;
  ctx.cached_provider = entry.provider;
  ctx.cached_model = entry.model;
  ctx.saved(entry.answer.usage);
  ctx.saved_bill_percent = settings_.bill_percent;
  ResponseHead& head = call.downstream().new_head();
  add_standard_fields(ctx, head);
  const auto age =
      std::chrono::duration_cast<std::chrono::seconds>(call.clock().wall_now() - entry.stored_at);
  head.headers.add("Age", head.number(static_cast<std::uint64_t>(std::max<long>(0, age.count()))));
  if (state.similarity > 0) {
    std::array<char, 16> text{};
    const int n = std::snprintf(text.data(), text.size(), "%.4f", state.similarity);
    state.similarity_text.assign(text.data(), static_cast<std::size_t>(std::max(n, 0)));
    head.headers.add("x-sluice-cache-similarity", state.similarity_text);
  }
  co_await send_told_answer(call, head, std::move(*told));
  co_return true;
}

// Every answer of a cached route says what the cache did: a miss's upstream head, a hit's or a
// follower's own head (serve and follow set ctx.cache before they write), an error.
FilterStatus CacheFilter::on_response_head(CallContext& call, ResponseHead& head) {
  if (!call.ctx().cache.empty()) {
    head.headers.add("x-sluice-cache", call.ctx().cache);
  }
  if (Call* state = call.find_state<Call>(*this)) {
    state->keeper.on_head(head.status);
  }
  return FilterStatus::proceed();
}

FilterStatus CacheFilter::on_response_body(CallContext& call, std::string& body) {
  if (Call* state = call.find_state<Call>(*this)) {
    state->keeper.on_body(body);
    // The whole answer is here before its caller has a byte of it: stored (and the shared call
    // landed) now, so a request the caller sends once it has read the answer finds the entry.
    finish(call, *state);
  }
  return FilterStatus::proceed();
}

FilterStatus CacheFilter::on_stream_data(CallContext& call, std::string& data) {
  if (Call* state = call.find_state<Call>(*this)) {
    state->keeper.on_stream(data);
    if (state->keeper.complete()) {
      // The terminator is in this write: stored now, before the caller reads it, as with a
      // body. A request sent once the caller has its whole stream is then a hit, not a
      // follower of a call that is over for everyone but the store.
      finish(call, *state);
    }
  }
  return FilterStatus::proceed();
}

void CacheFilter::on_end(CallContext& call) {
  if (Call* state = call.find_state<Call>(*this)) {
    finish(call, *state);
    release_shared_claim(*state);
  }
}

void CacheFilter::release_shared_claim(Call& state) {
  if (state.shared_claim) {
    state.shared_claim = false;
    shared_.store->release_answer(alias_, state.tenant, state.key);
  }
}

void CacheFilter::finish(CallContext& call, Call& state) {
  if (!state.keeper.keeping() || state.finished) {
    return;
  }
  state.finished = true;
  std::optional<ir::Response> answer = state.keeper.answer(call);
  const bool whole = answer.has_value();
  if (whole && (answer->finish != ir::FinishReason::kLength || settings_.store_truncated)) {
    store_answer(call, state, std::move(*answer));
  }
  // The live log's end, then the claim: on the same connection, after the answer, so a waiter
  // finds the one or the other.
  state.keeper.land(call, whole);
  release_shared_claim(state);
}

void CacheFilter::store_answer(CallContext& call, Call& state, ir::Response answer) {
  const RequestContext& ctx = call.ctx();
  auto entry = std::make_shared<cache::Entry>();
  entry->answer = std::move(answer);
  entry->alias = alias_;
  entry->route = route_scope_;
  entry->tenant = state.tenant;
  entry->provider = std::string(ctx.last_attempt()->provider);
  entry->model = std::string(ctx.last_attempt()->model);
  entry->stored_at = call.clock().wall_now();
  const auto now = call.clock().now();
  entry->fresh_until = now + jittered(state.ttl, settings_.ttl_jitter, state.key);
  entry->stale_until = entry->fresh_until + settings_.stale_while_revalidate;
  entry->bytes = cache::entry_bytes(*entry);
  if (entry->bytes > settings_.max_entry_bytes) {
    return;
  }
  const cache::Key key = state.key;
  if (shared_.store != nullptr) {
    if (std::optional<std::string> record = cache::encode_entry(
            *entry, {call.clock().wall_now(), now}, shared_.compress_above_bytes)) {
      const auto lives = std::chrono::duration_cast<milliseconds>(entry->stale_until - now);
      if (state.probe) {
        // Before the answer, on the same connection: whoever finds the answer finds its
        // vector too.
        semantic_->share(*shared_.store, alias_, state.tenant, *state.probe, key, lives);
      }
      shared_.store->put_answer(alias_, state.tenant, state.key, std::move(*record), lives);
    }
  }
  if (store_.put(key, std::move(entry)) && state.probe) {
    semantic_->remember(std::move(*state.probe), key);
    state.probe.reset();
  }
}

}  // namespace sluice::pipeline
