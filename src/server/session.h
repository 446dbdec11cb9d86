#pragma once

#include <functional>
#include <list>
#include <memory>
#include <optional>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "core/error.h"
#include "http/fields_arena.h"
#include "http/net.h"
#include "server/request_context.h"

namespace sluice::http {
class HeadWriter;
}

namespace sluice::server {

class Worker;
namespace bhttp = boost::beast::http;

// Caller requests: header fields allocated from a per-request arena (http/fields_arena.h).
using RequestHeader = bhttp::request_header<http::Fields>;
using Request = bhttp::request<bhttp::string_body, http::Fields>;
using Response = bhttp::response<bhttp::string_body>;

// One client connection: reads requests one after another (keep-alive, pipelining),
// dispatches them, writes responses. Runs as one coroutine on its worker's io_context.
class Session {
 public:
  Session(Worker& worker, http::tcp::socket socket);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  http::Awaitable<void> run();

  // --- for request handlers (same thread) ---
  Worker& worker() { return worker_; }
  // Adds the standard headers (request id, served-by, Connection) and writes the response.
  // Returns false when the client is gone.
  http::Awaitable<bool> send(RequestContext& ctx, Response& res);
  http::Awaitable<bool> send_error(RequestContext& ctx, const Error& error);
  // Streaming: head (chunked), body chunks, terminating chunk.
  http::Awaitable<bool> send_stream_head(RequestContext& ctx,
                                         bhttp::response<bhttp::empty_body>& res);
  http::Awaitable<bool> send_chunk(RequestContext& ctx, std::string_view data);
  http::Awaitable<bool> send_last_chunk(RequestContext& ctx);

  // Watches the client socket while a handler waits on an upstream; `on_gone` runs (on
  // this thread) as soon as the client closes or resets the connection. Pipelined bytes
  // from a live client end the watch without calling `on_gone`. The watch ends when the
  // returned guard is destroyed.
  class Watch {
   public:
    explicit Watch(Session* s) : session_(s) {}
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    Session* session_;
  };
  [[nodiscard]] Watch watch_disconnect(std::function<void()> on_gone);
  bool client_gone() const { return client_gone_; }

  // --- for the worker (same thread) ---
  bool idle() const { return idle_; }
  void close_if_idle();
  void force_close();

 private:
  struct WatchState;
  http::Awaitable<void> handle(RequestContext& ctx, Request& req);
  // The fields every response carries (request id, served-by, Server); records the status.
  void standard_fields(RequestContext& ctx, http::HeadWriter& head, unsigned status);
  void unwatch();
  void arm_write_deadline();
  // Accounts a finished write; on failure marks the client gone. Returns !ec.
  bool wrote(RequestContext& ctx, const boost::system::error_code& ec, std::size_t n);

  Worker& worker_;
  http::beast::tcp_stream stream_;
  http::beast::flat_buffer buffer_;
  std::list<Session*>::iterator registration_;
  bool idle_ = true;
  bool keep_alive_ = true;
  bool http10_ = false;
  bool client_gone_ = false;
  std::shared_ptr<WatchState> watch_;
  std::string head_;     // reused for every response head written on this connection
  char chunk_size_[20];  // chunk-size line of the chunk being written
};

}  // namespace sluice::server
