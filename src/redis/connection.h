#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"

struct redisAsyncContext;
struct redisReply;

namespace sluice::redis {

// One hiredis asynchronous connection driven by a worker's io_context: hiredis parses and
// formats, Asio waits for the socket (a posix::stream_descriptor over hiredis's fd; hiredis
// keeps owning the fd). Reconnects on its own after a failure, with backoff from 50 ms to 1 s.
// Everything runs on the io_context's thread; nothing blocks: a host name is resolved before
// each (re)connection by the Resolver (hiredis would call getaddrinfo on this thread), and
// hiredis is given the address.
class RedisConnection {
 public:
  // Receives an IP address in text, or "" and why not. Called once, on the io_context's thread.
  using Resolved = std::function<void(std::string address, std::string error)>;
  // Looks `host` up off the io_context's thread and calls `done` on it, later (never inline).
  // Outlives nothing: a connection destroyed meanwhile ignores the answer.
  using Resolver = std::function<void(const std::string& host, Resolved done)>;
  // The default: Asio's resolver on `ioc`, whose getaddrinfo runs on a thread of its own.
  static Resolver asio_resolver(boost::asio::io_context& ioc);

  // Receives a command's reply (a redisReply*, valid during the call) on the worker's thread, or
  // null when the connection was lost before it arrived. Called exactly once per command sent.
  // hiredis's own callback type, so nothing is allocated per command.
  using ReplyFn = void (*)(redisAsyncContext* ac, void* reply, void* privdata);

  // `on_ready` runs after each (re)connection with the connection usable (to load scripts);
  // `on_lost` when a connection fails or closes, with the reason (static text or hiredis's).
  // `resolver` (default: asio_resolver(ioc)) is asked only when settings.redis_host is not an
  // IP address.
  RedisConnection(boost::asio::io_context& ioc, const config::StateSettings& settings,
                  std::function<void()> on_ready, std::function<void(std::string_view)> on_lost,
                  Resolver resolver = {});
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Starts connecting (returns at once).
  void start();
  // Whether a connection is established (commands sent now are written at once).
  bool connected() const { return connected_; }
  // Queues a command; false (and `fn` is not called) when there is no connection. `fn` may be
  // null for fire-and-forget commands.
  bool command(std::span<const std::string_view> args, ReplyFn fn, void* privdata);

 private:
  static void on_connect(const redisAsyncContext* ac, int status);
  static void on_disconnect(const redisAsyncContext* ac, int status);
  static void add_read(void* self);
  static void del_read(void* self);
  static void add_write(void* self);
  static void del_write(void* self);
  static void cleanup(void* self);

  void connect();
  void connect_to(const std::string& address);
  void arm_read();
  void arm_write();
  void arm(boost::asio::posix::descriptor_base::wait_type what, bool& armed, const bool& wanted,
           void (*handle)(redisAsyncContext*));
  void lost(std::string_view why);
  void schedule_reconnect();

  boost::asio::io_context& ioc_;
  const config::StateSettings settings_;
  std::function<void()> on_ready_;
  std::function<void(std::string_view)> on_lost_;
  Resolver resolver_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // resolver answers check it
  bool resolving_ = false;
  redisAsyncContext* ac_ = nullptr;
  std::optional<boost::asio::posix::stream_descriptor> fd_;
  std::uint64_t generation_ = 0;  // handlers of a closed connection see a newer one and return
  bool connected_ = false;
  bool reading_ = false;
  bool writing_ = false;
  bool read_armed_ = false;
  bool write_armed_ = false;
  bool stopping_ = false;
  boost::asio::steady_timer reconnect_timer_;
  std::chrono::milliseconds backoff_{50};
};

}  // namespace sluice::redis
