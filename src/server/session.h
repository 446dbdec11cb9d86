#pragma once

#include <functional>
#include <list>
#include <memory>
#include <optional>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "core/error.h"
#include "http/fields_arena.h"
#include "http/net.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"

namespace sluice::pipeline {
class Pipeline;
}

namespace sluice::server {

class Worker;
namespace bhttp = boost::beast::http;

// Caller requests: header fields allocated from a per-request arena (http/fields_arena.h).
using RequestHeader = bhttp::request_header<http::Fields>;
using Request = bhttp::request<bhttp::string_body, http::Fields>;

// One client connection: the transport. Reads requests one after another (keep-alive,
// pipelining, Expect: 100-continue, size limits, idle and request timeouts, framing checks),
// hands each to the worker's Pipeline, and writes what the pipeline gives it as bytes
// (pipeline::Downstream). It never interprets a request or encodes a protocol's error: the
// pipeline does both. Runs as one coroutine on its worker's io_context.
class Session final : public pipeline::Downstream {
 public:
  Session(Worker& worker, http::tcp::socket socket);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  http::Awaitable<void> run();

  // --- pipeline::Downstream (same thread) ---
  pipeline::ResponseHead& new_head() override {
    response_head_.clear();
    return response_head_;
  }
  http::Awaitable<bool> send(pipeline::RequestContext& ctx, const pipeline::ResponseHead& head,
                             std::string_view body) override;
  http::Awaitable<bool> begin_stream(pipeline::RequestContext& ctx,
                                     const pipeline::ResponseHead& head) override;
  http::Awaitable<bool> write(pipeline::RequestContext& ctx, std::string_view bytes) override;
  http::Awaitable<bool> end_stream(pipeline::RequestContext& ctx) override;
  void watch_disconnect(std::function<void()> on_gone) override;
  void unwatch() override;
  bool client_gone() const override { return client_gone_; }

  // --- for the worker (same thread) ---
  bool idle() const { return idle_; }
  void close_if_idle();
  void force_close();

 private:
  struct WatchState;
  // Writes the status line, the pipeline's fields and the framing fields into head_.
  void write_head(pipeline::RequestContext& ctx, const pipeline::ResponseHead& head, bool chunked,
                  std::uint64_t content_length);
  void arm_write_deadline(const pipeline::RequestContext& ctx);
  // Accounts a finished write; on failure marks the client gone. Returns !ec.
  bool wrote(pipeline::RequestContext& ctx, const boost::system::error_code& ec, std::size_t n);
  // After an answer sent without reading the request body: stop sending, then read and drop
  // what the client still sends (bounded in time and bytes) so that closing does not reset the
  // connection before the client has read the answer.
  http::Awaitable<void> linger_close();

  Worker& worker_;
  const pipeline::Pipeline& pipeline_;
  http::beast::tcp_stream stream_;
  http::beast::flat_buffer buffer_;
  std::list<Session*>::iterator registration_;
  bool idle_ = true;
  bool keep_alive_ = true;
  bool http10_ = false;
  bool client_gone_ = false;
  std::shared_ptr<WatchState> watch_;
  pipeline::ResponseHead response_head_;  // what the pipeline fills, reused per response
  std::string head_;     // reused for every response head written on this connection
  char chunk_size_[20];  // chunk-size line of the chunk being written
};

}  // namespace sluice::server
