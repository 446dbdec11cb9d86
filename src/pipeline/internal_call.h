#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "codec/request_head.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"

namespace sluice::pipeline {

class Pipeline;
class InternalCall;

// A request the gateway makes of itself on a caller's behalf: the embedding a semantic cache
// looks an answer up by, the refresh of a stale entry in the background. It goes through the
// whole pipeline as any caller's request does (its route's chain, breakers, retries, limits
// and budgets, metering: its own usage record under the caller's key), and its answer is
// collected in memory instead of written to a socket.
struct InternalRequest {
  std::string_view purpose;  // static text: "embedding", "refresh" (the access log's `internal`)
  std::string target;        // an ingress codec's path: "/v1/embeddings"
  std::vector<std::pair<std::string, std::string>> headers;  // names in any case
  std::string body;
  // A plain answer larger than this is not kept (status and completion still are).
  std::uint64_t max_answer_bytes = 4 * 1024 * 1024;
};

struct InternalAnswer {
  int status = 0;
  std::string body;       // a plain answer's body; a stream's bytes are counted, not kept
  bool complete = false;  // the answer was written whole (a plain body, or a stream's end)
};

// The internal calls of one worker: at most `limit` at once (a burst of stale entries or
// embeddings cannot grow the process), counted for the drain, cut when the worker must stop.
// Worker thread only, but in_flight() may be read from any thread.
class InternalCalls {
 public:
  explicit InternalCalls(std::size_t limit) : limit_(limit) {}
  InternalCalls(const InternalCalls&) = delete;
  InternalCalls& operator=(const InternalCalls&) = delete;

  std::size_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  std::size_t limit() const { return limit_; }
  // The drain deadline passed: every call still running is told its caller left (its upstream
  // call is cancelled, as a leaving caller's is).
  void cut_all();

 private:
  friend class InternalCall;
  std::size_t limit_;
  std::list<InternalCall*> live_;
  std::atomic<std::size_t> in_flight_{0};
};

// One internal call: its request, its context and the downstream that collects its answer.
// start() runs it on the current worker, detached; whoever needs the answer awaits it, for at
// most a time after which the call is cancelled. Nobody waiting is fine: the call runs to its
// end (a background refresh), still bounded by the route's own timeouts.
class InternalCall final : public Downstream,
                           public codec::RequestHead,
                           public std::enable_shared_from_this<InternalCall> {
 public:
  // Starts `request` as the caller of `on_behalf_of` would have sent it (its key, snapshot,
  // feature and trace); null when this worker runs as many internal calls as it may, or has
  // no room for them at all. Must be called from a coroutine on the worker.
  static std::shared_ptr<InternalCall> start(const Pipeline& pipeline,
                                             const RequestContext& on_behalf_of,
                                             InternalRequest request,
                                             boost::asio::any_io_executor executor);

  // The answer once the call is over, or nullopt when `timeout` passed first: the call is then
  // cancelled (its caller "left").
  Awaitable<std::optional<InternalAnswer>> answer_within(std::chrono::milliseconds timeout);
  // The caller's part ends: the upstream call is cancelled.
  void cancel();
  bool done() const { return done_; }

  // Downstream
  ResponseHead& new_head() override;
  Awaitable<bool> send(RequestContext& ctx, const ResponseHead& head,
                       std::string_view body) override;
  Awaitable<bool> begin_stream(RequestContext& ctx, const ResponseHead& head) override;
  Awaitable<bool> write(RequestContext& ctx, std::string_view bytes) override;
  Awaitable<bool> end_stream(RequestContext& ctx) override;
  void watch_disconnect(std::function<void()> on_gone) override;
  void unwatch() override { on_gone_ = nullptr; }
  bool client_gone() const override { return gone_; }

  // codec::RequestHead
  std::string_view method() const override { return "POST"; }
  std::string_view target() const override { return request_.target; }
  std::string_view header(std::string_view name) const override;
  bool has_header(std::string_view name) const override;
  void for_each_header(
      FunctionRef<void(std::string_view name, std::string_view value)> visit) const override;

  InternalCall(InternalCalls& calls, InternalRequest request,
               boost::asio::any_io_executor executor);
  ~InternalCall() override;

 private:
  static Awaitable<void> run(const Pipeline& pipeline, std::shared_ptr<InternalCall> self);
  void finish();

  InternalCalls& calls_;
  std::list<InternalCall*>::iterator registered_;
  InternalRequest request_;
  boost::asio::any_io_executor executor_;
  RequestContext ctx_;
  ResponseHead head_;
  InternalAnswer answer_;
  std::function<void()> on_gone_;  // the pipeline's disconnect watch
  std::function<void()> on_done_;  // wakes a waiter
  bool gone_ = false;
  bool done_ = false;
};

}  // namespace sluice::pipeline
