#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "codec/request_head.h"
#include "core/clock.h"
#include "ir/request.h"
#include "pipeline/caller_stream.h"
#include "pipeline/downstream.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"
#include "pipeline/held_downstream.h"
#include "pipeline/provider_options.h"
#include "pipeline/request_context.h"
#include "pipeline/snapshot.h"
#include "protocol/ingress.h"
#include "providers/exchange.h"
#include "routing/plan.h"

namespace sluice::pipeline {

class Pipeline;
class UpstreamRequest;
struct PipelineParts;

// One model call as its filters and stages see it: the request as decoded (and as filters
// rewrote it), its route and filter chain, the IR when something asks for it, the caller's side
// (a plain answer or a stream), and per-filter state. Lives in the model call's frame; one worker
// thread. The answers it writes go through the chain's response-side filters.
class CallContext final : public routing::RequestFacts {
 public:
  CallContext(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
              Downstream& downstream);

  RequestContext& ctx() { return ctx_; }
  const RequestContext& ctx() const { return ctx_; }
  const codec::RequestHead& head() const { return head_; }
  Downstream& downstream() { return *downstream_; }
  const PipelineParts& parts() const;
  const Pipeline& pipeline() const { return pipeline_; }
  const Clock& clock() const;
  const config::Config& config() const;
  const protocol::IngressCodec& ingress() const { return *ctx_.ingress; }
  const protocol::IngressRequest& request() const { return request_; }
  // For the stages that annotate the request (estimated_input_tokens); filters change a request
  // through replace_body.
  protocol::IngressRequest& mutable_request() { return request_; }
  // Set once the route is resolved (before any filter runs).
  const RouteRuntime& route() const { return *route_; }
  const FilterChain& chain() const { return *chain_; }
  // Stops whatever waits on an upstream (the exchange, a retry backoff): the caller went away.
  providers::Cancellation& cancel() { return cancel_; }

  // Decodes the caller's body: the request, its stream flag and ignored fields, or the error to
  // answer (400 in the caller's protocol).
  std::optional<Error> decode(std::string_view body);
  // The route for the decoded model and the key's allow-list (404 / 403), and its filter chain
  // from `chains` (held until the call ends).
  std::optional<Error> resolve_route(std::shared_ptr<const RouteChains> chains);

  // The request as IR, decoded from the caller's body on first use and kept: translation needs
  // it anyway, and a filter looking at a passed-through request pays for the decode only when it
  // asks. Errors are the codec's (content the IR cannot carry).
  Result<ir::Request*> ir();
  // The IR to translate from: ir() under the config's strict_fields (a field the translation
  // would drop is refused); counts the fields it ignores into the context.
  Result<ir::Request*> ir_for_translation();
  // The caller's provider_options (provider_options.h), read from its body on first use and
  // checked (400 for what is not allowed); null when the body has no such member.
  Result<const ProviderOptions*> provider_options();
  // Replaces the caller's body with one a filter rewrote, and decodes it again so that the
  // envelope facts and every later stage see the new request; an IR already built is dropped.
  std::optional<Error> replace_body(std::string body);

  // The most output the request may produce as far as the gateway knows: what a filter set
  // (the route's max_output_tokens cap), else what the request asks for; nullopt when the
  // request sets no limit. Admission reserves tokens for it.
  std::optional<std::uint64_t> output_limit() const;
  void set_output_limit(std::uint64_t tokens) { output_limit_ = tokens; }

  // The one target this call may go to (Responses affinity: the provider that stored what it
  // continues): the attempt loop then makes that single attempt, with nothing to fail over to.
  void pin_target(std::size_t index) { pinned_ = index; }
  std::optional<std::size_t> pinned_target() const { return pinned_; }

  // The id under which an upstream stored the answer this call relayed verbatim (a Responses
  // answer; IngressCodec::stored_id_of_body, StreamSniffer::stored_id), and the provider that
  // holds it; set by the relay, "" when nothing was stored.
  void set_stored_answer(std::string id, std::string_view provider) {
    stored_id_ = std::move(id);
    stored_by_ = provider;
  }
  const std::string& stored_answer_id() const { return stored_id_; }
  std::string_view stored_answer_provider() const { return stored_by_; }

  // `filter`'s state for this request, made on first use (T derives from FilterState).
  template <class T>
  T& state(const Filter& filter) {
    return shared_state<T>(&filter);
  }
  template <class T>
  T* find_state(const Filter& filter) const {
    return find_shared_state<T>(&filter);
  }
  // State that two filters share, keyed by an address both know (the guardrails' pseudonyms,
  // which the restorer at the end of the chain reads back).
  template <class T>
  T& shared_state(const void* key) {
    if (T* found = find_shared_state<T>(key)) {
      return *found;
    }
    auto made = std::make_unique<T>();
    T& ref = *made;
    states_.emplace_back(key, std::move(made));
    return ref;
  }
  template <class T>
  T* find_shared_state(const void* key) const {
    for (const auto& [owner, state] : states_) {
      if (owner == key) {
        return static_cast<T*>(state.get());
      }
    }
    return nullptr;
  }

  // The caller's stream, once the attempt loop of a streamed call (or a follower of a shared
  // call) has made it; null otherwise.
  CallerStream* stream() { return stream_ ? &*stream_ : nullptr; }
  // Makes the caller's stream, or keeps the one already made (a follower's, whose keep-alive
  // may have sent the head) with `heartbeat` from now on.
  CallerStream& open_stream(std::chrono::milliseconds heartbeat);

  // --- answering the caller -------------------------------------------------------------
  // A complete answer: the response-side filters see the head and the body first (a filter
  // stopping it answers its error instead). `head` comes from downstream().new_head().
  Awaitable<void> send_answer(ResponseHead& head, std::string body);
  // A whole stream the gateway already holds (a cached answer told as events): the head and
  // the events go through the response-side filters, then out in one write, and the stream
  // ends. `head` comes from downstream().new_head().
  Awaitable<void> send_stream(ResponseHead& head, std::string events);
  // A stream the gateway writes itself, piece by piece (a follower of a shared call): the head
  // through the head filters, then the stream opened (or the one already open kept) and begun
  // (no keep-alive coroutine: the writer beats itself); false when a
  // filter stopped it (its error was answered) or the caller is gone (recorded).
  Awaitable<bool> begin_own_stream(ResponseHead& head);
  // Bytes of that stream through the stream-data filters, then written; false when a filter
  // ended the stream (its error event went out, the outcome says so) or the caller is gone
  // (recorded). The stream's end: stream()->end().
  Awaitable<bool> write_own_stream(std::string& data, bool ending = false);

  // Keeps the call going when its caller leaves, while `wanted()` says others wait for its
  // answer (the leader of a shared call): from here on the call writes to a HeldDownstream.
  // Before anything was written or watched (a before_plan filter).
  void hold_caller(std::function<bool()> wanted);
  // The caller itself has gone, whether or not the call goes on for others.
  bool caller_left() const;
  // An upstream error relayed as the provider wrote it (passthrough): the head filters run.
  // Only after plain_answer() said yes.
  Awaitable<void> send_upstream_error(ResponseHead& head, std::string_view body);
  // Whether the call may still answer with a plain response: always, unless it is a stream
  // whose head went out (CallerStream::claim_plain; the keep-alive stops either way).
  Awaitable<bool> plain_answer();
  // `error` in the caller's protocol, and the call's outcome: a status and an error body, or
  // the protocol's error event and the stream's end when a stream has already begun. With
  // `upstream`, the upstream's relayable headers (rate-limit state) go along.
  Awaitable<void> fail(const Error& error, Outcome outcome, UpstreamRequest* upstream = nullptr);
  // The caller went away (or the upstream read says so): recorded, nothing written.
  void client_gone(const Error& error);
  // Stream bytes through the stream-data filters; false (and `stopped` set) when one stopped
  // the stream, whose error event is then appended to `data`. `ending`: the stream's last
  // write (a filter holding bytes back releases them now; stream_ending() tells it).
  bool filter_stream_data(std::string& data, std::optional<Error>& stopped, bool ending = false);
  // Whether stream bytes go through awaited checks first (check_stream_data): only a chain with
  // a kStreamCheck filter (an external checker of streamed answers) makes a write await them.
  bool checks_stream() const {
    return chain_ != nullptr && !chain_->at(FilterHook::kStreamCheck).empty();
  }
  // Stream bytes through the kStreamCheck hooks, before filter_stream_data; false (and
  // `stopped` set) when one stopped the stream: `data` is then only its error event.
  Awaitable<bool> check_stream_data(std::string& data, std::optional<Error>& stopped, bool ending);
  bool stream_ending() const { return stream_ending_; }
  // A stream-data filter holding bytes until `due` (a time bound) runs again then, even if
  // the upstream sends nothing more (CallerStream::rerun_filters_at). No-op outside a stream.
  void rerun_stream_filters_at(Clock::Monotonic::time_point due);
  // Runs every on_end hook (once; the driver calls it on every way out).
  void end_filters();
  // Whether the before_release hooks are still to run: each way of answering the caller
  // checks this before it awaits release() (so a chain without such hooks pays no coroutine).
  bool must_release() const {
    return !released_ && chain_ != nullptr && !chain_->at(FilterHook::kBeforeRelease).empty();
  }
  // Runs the before_release hooks (once per call) before the first byte of `answer` (a
  // complete answer's body; null for a stream's head or an error): the error a filter stopped
  // the release with, to be answered instead.
  Awaitable<std::optional<Error>> release(const std::string* answer);
  // The alongside hooks run (ModelCall): a before_release hook may wait for what they find.
  bool alongside_running() const { return alongside_running_; }
  void set_alongside_running(bool running) { alongside_running_ = running; }

  // routing::RequestFacts, for conditional policy nodes.
  std::string_view key() const override;
  std::string_view key_group() const override;
  std::optional<std::string_view> header(std::string_view lower_name) const override;
  bool stream() const override { return request_.stream; }
  std::optional<std::uint64_t> max_tokens() const override;
  std::uint64_t affinity() const override;
  bool guardrails_found(std::string_view name) const override;

 private:
  const Pipeline& pipeline_;
  RequestContext& ctx_;
  const codec::RequestHead& head_;
  Downstream* downstream_;
  std::unique_ptr<HeldDownstream> held_;  // hold_caller's; downstream_ points to it then
  providers::Cancellation cancel_;
  protocol::IngressRequest request_;
  const RouteRuntime* route_ = nullptr;
  std::shared_ptr<const RouteChains> chains_;  // holds chain_ alive
  const FilterChain* chain_ = nullptr;
  std::unique_ptr<std::string> rewritten_body_;  // replace_body's; request_.body views it
  std::unique_ptr<ir::Request> ir_;
  bool ir_strict_ = false;  // ir_ was decoded under strict_fields
  std::optional<ProviderOptions> provider_options_;
  std::optional<std::uint64_t> output_limit_;
  // What the body asks for, read once from the codec's output_limit_fields.
  mutable std::optional<std::optional<std::uint64_t>> requested_limit_;
  std::optional<std::size_t> pinned_;
  std::string stored_id_;
  std::string_view stored_by_;  // a provider id, owned by the snapshot
  std::optional<CallerStream> stream_;
  bool ended_filters_ = false;
  bool stream_ending_ = false;  // filter_stream_data's `ending`, while the filters run
  bool released_ = false;       // release() ran
  bool alongside_running_ = false;
  boost::container::small_vector<std::pair<const void*, std::unique_ptr<FilterState>>, 2> states_;
};

}  // namespace sluice::pipeline
