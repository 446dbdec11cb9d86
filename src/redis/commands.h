#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/state.h"
#include "redis/connection.h"
#include "redis/health.h"

namespace sluice::redis {

// A reply copied out of hiredis's (which lives only during its callback), or why there is none.
struct Reply {
  enum class Kind : std::uint8_t {
    kNil,
    kString,       // a bulk or status string: `text`
    kInteger,      // `integer`
    kError,        // Redis refused the command: `text`
    kOther,        // an array or another type this client does not read
    kTimeout,      // no reply before the deadline (it is dropped when it comes)
    kUnavailable,  // not sent: no connection, or too many commands waiting
    kLost,         // sent, then the connection closed before the reply
  };
  Kind kind = Kind::kNil;
  std::string text;
  long long integer = 0;

  // Redis answered (whatever it said).
  bool answered() const { return kind <= Kind::kOther; }
};

// Commands on one worker's Redis connection, each awaited with a hard deadline, the way the
// limiter bounds its checks: a slow or absent Redis costs a request at most the deadline, and a
// reply that comes later is dropped. At most kMaxWaiting commands wait at once (awaited and
// fire-and-forget together); beyond it a command is not sent (kUnavailable), so a Redis that
// stops reading cannot grow this process's buffers. Every outcome reports to `health`. One per
// worker, on that worker's io_context; all calls on its thread.
class Commands {
 public:
  static constexpr std::size_t kMaxWaiting = 1024;

  Commands(boost::asio::io_context& ioc, const config::StateSettings& settings, Health& health);
  ~Commands();
  Commands(const Commands&) = delete;
  Commands& operator=(const Commands&) = delete;

  void start() { connection_.start(); }
  bool connected() const { return connection_.connected(); }

  // Sends `args` (copied before it returns) and waits for the reply until `deadline`.
  boost::asio::awaitable<Reply> call(std::span<const std::string_view> args,
                                     std::chrono::steady_clock::time_point deadline);
  // Sends `args` without waiting for the reply (a write whose outcome changes nothing for the
  // request); false when it was not sent.
  bool send(std::span<const std::string_view> args);
  // The same, and `on_reply` is called with the reply when it comes (on this worker's thread;
  // with a kLost reply when the connection closes first, this object's destruction included).
  // Nothing waits for it: what it captures must look after its own lifetime.
  bool send(std::span<const std::string_view> args, std::function<void(const Reply&)> on_reply);

  std::size_t waiting_for_test() const { return waiting_; }

 private:
  struct Pending;
  static void on_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_sent_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_noted_reply(redisAsyncContext* ac, void* reply, void* privdata);
  struct Noted;
  Pending* acquire();
  void release(Pending* p);

  boost::asio::io_context& ioc_;
  Health& health_;
  std::size_t waiting_ = 0;  // sent, reply not back yet (abandoned and fire-and-forget too)
  std::vector<std::unique_ptr<Pending>> pool_;
  std::vector<Pending*> free_;
  RedisConnection connection_;  // last: destroyed first, answering what still waits as lost
};

}  // namespace sluice::redis
