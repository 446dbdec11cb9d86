#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "config/config.h"
#include "core/result.h"
#include "http/fields_arena.h"
#include "http/net.h"
#include "http/upstream_pool.h"

namespace sluice::http {

// One request for an upstream: the complete head, written by the caller with HeadWriter
// (request line, Host, every field including Content-Length, the blank line), and the
// body. Both are written as they are, and again unchanged if a stale keep-alive
// connection forces a retry.
struct UpstreamRequest {
  std::string head;
  std::string body;
};

class UpstreamCall;

// Lets another coroutine on the same executor (the client-disconnect watch) cancel a call
// that is still being set up or already streaming. Lives in the caller's frame.
struct CancelToken {
  bool cancelled = false;
  UpstreamCall* call = nullptr;  // set while a call is in progress
  void cancel();
};

// Timings of one upstream exchange, for logs and (later) latency-aware routing.
struct UpstreamTimings {
  std::chrono::microseconds acquire{0};     // pool wait + connect (+ TLS)
  std::chrono::microseconds first_byte{0};  // request written -> response head read
  bool reused_connection = false;
};

// One HTTP exchange with an upstream on a pooled connection: start() writes the request and
// reads the response head; the body is then pulled with read_some()/read_all(). All calls
// run on the worker's io_context. The connection goes back to the pool when the call is
// destroyed, and only if the body was read to its end and the upstream allowed keep-alive.
class UpstreamCall {
 public:
  // Retries once on a fresh connection when a reused keep-alive connection turns out to be
  // dead before any response byte arrived (the request cannot have been processed).
  static Awaitable<Result<std::unique_ptr<UpstreamCall>>> start(std::shared_ptr<UpstreamPool> pool,
                                                                const UpstreamRequest& request,
                                                                const config::Timeouts& timeouts,
                                                                CancelToken* cancel = nullptr);

  ~UpstreamCall();
  UpstreamCall(const UpstreamCall&) = delete;
  UpstreamCall& operator=(const UpstreamCall&) = delete;

  int status() const { return parser_.get().result_int(); }
  std::string_view header(std::string_view name) const;
  const UpstreamTimings& timings() const { return timings_; }

  // Appends the next body bytes to `out`; returns the count, 0 at the end of the body.
  // Fails with kUpstreamTimeout past the total deadline, kClientGone after abort(), and
  // kUpstreamProtocol when the connection breaks mid-body.
  Awaitable<Result<std::size_t>> read_some(std::string& out);
  // Reads the rest of the body; fails with kUpstreamProtocol beyond `limit` bytes.
  Awaitable<Result<std::string>> read_all(std::size_t limit);
  // Closes the connection at once (the caller went away). A pending read completes with
  // kClientGone. Safe to call from another coroutine on the same executor.
  void abort();
  bool done() const { return parser_.is_done(); }

 private:
  UpstreamCall(std::shared_ptr<UpstreamPool> pool, std::unique_ptr<UpstreamConnection> conn);
  Awaitable<boost::system::error_code> send_and_read_head(const UpstreamRequest& request,
                                                          const config::Timeouts& timeouts);

  std::shared_ptr<UpstreamPool> pool_;
  std::unique_ptr<UpstreamConnection> conn_;
  FieldsArena fields_arena_;  // declared before the parser that allocates from it
  beast::http::response_parser<beast::http::buffer_body, FieldsAllocator> parser_;
  std::chrono::steady_clock::time_point total_deadline_;
  UpstreamTimings timings_;
  bool aborted_ = false;
  bool failed_ = false;
  std::string provider_id_;
  CancelToken* cancel_ = nullptr;
};

}  // namespace sluice::http
