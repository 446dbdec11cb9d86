#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "config/config.h"
#include "core/result.h"
#include "http/fields_arena.h"
#include "http/net.h"
#include "http/upstream_pool.h"
#include "providers/exchange.h"

namespace sluice::http {

// One request for an upstream: the complete head, written by the provider's adapter (request
// line, Host, every field including Content-Length, the blank line), and the body. Referenced
// while the request is written, never copied.
struct UpstreamRequestBytes {
  const std::string& head;
  const std::string& body;
};

// One HTTP exchange with an upstream on a pooled connection: start() writes the request and
// reads the final response head (interim 1xx heads are read and skipped); the body is then
// pulled with read_some()/read_all(). All calls run on the worker's io_context. The connection
// goes back to the pool when the call is destroyed, and is reused only if the body was read to
// its end, the upstream allowed keep-alive and no byte is left in its buffer.
class UpstreamCall final : public providers::Exchange {
 public:
  // A request is sent at most once on a connection that may have processed it: only when the
  // write itself fails on a reused keep-alive connection (the server closed it while idle, so
  // it cannot have received the whole request) is it written again, once, on a fresh one. A
  // connection that breaks after the request was fully written is an error
  // (upstream_reset_after_send), never a silent re-send that could pay for a generation twice.
  // `cancel` aborts the call from the disconnect watch at any point.
  static Awaitable<Result<std::unique_ptr<UpstreamCall>>> start(std::shared_ptr<UpstreamPool> pool,
                                                                UpstreamRequestBytes request,
                                                                const config::Timeouts& timeouts,
                                                                providers::Cancellation& cancel);

  ~UpstreamCall() override;
  UpstreamCall(const UpstreamCall&) = delete;
  UpstreamCall& operator=(const UpstreamCall&) = delete;

  int status() const override { return parser_->get().result_int(); }
  std::string_view header(std::string_view name) const override;
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)> visit) const override;
  const providers::ExchangeTimings& timings() const override { return timings_; }

  // Fails with kUpstreamTimeout past the idle deadline (nothing read for timeouts.idle, code
  // upstream_idle_timeout) or the total deadline (upstream_total_timeout), kClientGone after
  // abort(), and kUpstreamProtocol when the connection breaks mid-body.
  Awaitable<Result<std::size_t>> read_some(std::string& out) override;
  Awaitable<Result<std::string>> read_all(std::size_t limit) override;
  // Closes the connection at once (the caller went away). A pending read completes with
  // kClientGone. Safe to call from another coroutine on the same executor.
  void abort() override;
  bool done() const { return parser_->is_done(); }

 private:
  using Parser = beast::http::response_parser<beast::http::buffer_body, FieldsAllocator>;
  enum class Phase : std::uint8_t { kWrite, kReadHead };

  UpstreamCall(std::shared_ptr<UpstreamPool> pool, std::unique_ptr<UpstreamConnection> conn);
  void new_parser();
  // Writes the request and reads heads until a final one. On failure, `phase` says whether
  // the request had been written completely.
  Awaitable<boost::system::error_code> send_and_read_head(UpstreamRequestBytes request,
                                                          const config::Timeouts& timeouts,
                                                          Phase& phase);
  Error timeout_error() const;

  std::shared_ptr<UpstreamPool> pool_;
  std::unique_ptr<UpstreamConnection> conn_;
  FieldsArena fields_arena_;  // declared before the parser that allocates from it
  std::optional<Parser> parser_;
  std::chrono::steady_clock::time_point total_deadline_;
  std::chrono::milliseconds idle_{0};
  std::chrono::milliseconds total_{0};
  providers::ExchangeTimings timings_;
  bool aborted_ = false;
  bool failed_ = false;
  std::string provider_id_;
};

}  // namespace sluice::http
