#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "core/function_ref.h"
#include "core/result.h"

namespace sluice::providers {

template <class T = void>
using Awaitable = boost::asio::awaitable<T>;

// Lets the pipeline stop an upstream exchange from another coroutine on the same executor
// (the client-disconnect watch, a drain deadline): cancel() runs the current handler at once,
// which closes the connection or stops an in-process reply, so a pending read completes with
// kClientGone. Lives in the pipeline's frame for one model call; not thread-safe.
class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  bool cancelled() const { return cancelled_; }
  void cancel() {
    if (cancelled_) {
      return;
    }
    cancelled_ = true;
    if (handler_) {
      auto handler = std::move(handler_);
      handler_ = nullptr;
      handler();
    }
  }
  // Installs what cancel() runs (replacing any earlier handler). Keep the capture small (a
  // pointer): std::function then stores it without allocating.
  void on_cancel(std::function<void()> handler) { handler_ = std::move(handler); }
  void clear() { handler_ = nullptr; }

 private:
  bool cancelled_ = false;
  std::function<void()> handler_;
};

// What one upstream exchange cost, for the attempt record and latency-aware routing.
struct ExchangeTimings {
  std::chrono::microseconds acquire{0};     // pool wait + connect (+ TLS)
  std::chrono::microseconds first_byte{0};  // request written -> response head read
  bool reused_connection = false;
};

// One upstream response being received: its head is known, its body is pulled. Implemented by
// the HTTP client (http/upstream_call.h) and by in-process adapters (the mock). All calls run on
// the worker's executor; one read at a time.
class Exchange {
 public:
  virtual ~Exchange() = default;

  // Final status of the response (1xx interim heads are never seen here).
  virtual int status() const = 0;
  // The first value of header `name` (case-insensitive), "" when absent.
  virtual std::string_view header(std::string_view name) const = 0;
  virtual void for_each_header(
      FunctionRef<void(std::string_view name, std::string_view value)> visit) const = 0;
  virtual const ExchangeTimings& timings() const = 0;

  // Appends the next body bytes to `out`; returns how many, 0 at the end of the body.
  // Errors: kUpstreamTimeout (idle or total deadline, code upstream_idle_timeout /
  // upstream_total_timeout), kClientGone after cancellation, kUpstreamProtocol when the
  // connection breaks mid-body.
  virtual Awaitable<Result<std::size_t>> read_some(std::string& out) = 0;
  // The rest of the body; kUpstreamProtocol beyond `limit` bytes.
  virtual Awaitable<Result<std::string>> read_all(std::size_t limit) = 0;
  // Stops the exchange at once; a pending read completes with kClientGone.
  virtual void abort() = 0;
};

}  // namespace sluice::providers
