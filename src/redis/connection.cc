#include "redis/connection.h"

#include <array>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace sluice::redis {

namespace {

RedisConnection* self_of(const redisAsyncContext* ac) {
  return static_cast<RedisConnection*>(ac->data);
}

constexpr std::size_t kMaxArgs = 64;

}  // namespace

RedisConnection::Resolver RedisConnection::asio_resolver(boost::asio::io_context& ioc) {
  return [&ioc](const std::string& host, Resolved done) {
    auto resolver = std::make_shared<boost::asio::ip::tcp::resolver>(ioc);
    resolver->async_resolve(
        host, "",
        [resolver, done = std::move(done)](const boost::system::error_code& ec,
                                           const boost::asio::ip::tcp::resolver::results_type& r) {
          if (ec || r.empty()) {
            done("", ec ? ec.message() : "no address");
            return;
          }
          // IPv4 first, as hiredis's own lookup does ("localhost" is often ::1 first, while
          // Redis binds 127.0.0.1 by default).
          auto chosen = r.begin();
          for (auto it = r.begin(); it != r.end(); ++it) {
            if (it->endpoint().address().is_v4()) {
              chosen = it;
              break;
            }
          }
          done(chosen->endpoint().address().to_string(), "");
        });
  };
}

RedisConnection::RedisConnection(boost::asio::io_context& ioc,
                                 const config::StateSettings& settings,
                                 std::function<void()> on_ready,
                                 std::function<void(std::string_view)> on_lost, Resolver resolver)
    : ioc_(ioc),
      settings_(settings),
      on_ready_(std::move(on_ready)),
      on_lost_(std::move(on_lost)),
      resolver_(resolver ? std::move(resolver) : asio_resolver(ioc)),
      reconnect_timer_(ioc) {}

RedisConnection::~RedisConnection() {
  stopping_ = true;
  reconnect_timer_.cancel();
  if (ac_ != nullptr) {
    redisAsyncFree(ac_);  // pending replies get null; cleanup() releases the descriptor
  }
}

void RedisConnection::start() { connect(); }

void RedisConnection::connect() {
  boost::system::error_code not_ip;
  boost::asio::ip::make_address(settings_.redis_host, not_ip);
  if (!not_ip) {
    connect_to(settings_.redis_host);
    return;
  }
  if (resolving_) {
    return;
  }
  resolving_ = true;
  resolver_(settings_.redis_host,
            [this, alive = std::weak_ptr<bool>(alive_)](std::string address, std::string error) {
              if (alive.expired()) {
                return;
              }
              resolving_ = false;
              if (stopping_ || ac_ != nullptr) {
                return;
              }
              if (address.empty()) {
                lost("cannot resolve " + settings_.redis_host + ": " + error);
                schedule_reconnect();
                return;
              }
              connect_to(address);
            });
}

void RedisConnection::connect_to(const std::string& address) {
  redisAsyncContext* ac =
      redisAsyncConnect(address.c_str(), static_cast<int>(settings_.redis_port));
  if (ac == nullptr) {
    lost("out of memory");
    schedule_reconnect();
    return;
  }
  if (ac->err != 0) {
    lost(ac->errstr);
    redisAsyncFree(ac);
    schedule_reconnect();
    return;
  }
  ac_ = ac;
  ++generation_;
  reading_ = writing_ = read_armed_ = write_armed_ = false;
  ac->data = this;
  ac->ev.data = this;
  ac->ev.addRead = &RedisConnection::add_read;
  ac->ev.delRead = &RedisConnection::del_read;
  ac->ev.addWrite = &RedisConnection::add_write;
  ac->ev.delWrite = &RedisConnection::del_write;
  ac->ev.cleanup = &RedisConnection::cleanup;
  fd_.emplace(ioc_, ac->c.fd);
  redisAsyncSetConnectCallback(ac, &RedisConnection::on_connect);
  redisAsyncSetDisconnectCallback(ac, &RedisConnection::on_disconnect);
  // Commands queued before the connection completes are written once it does; the first one
  // also makes hiredis watch for writability, which is how it learns the connect finished.
  if (!settings_.redis_password.empty()) {
    const std::array<std::string_view, 2> auth{"AUTH", settings_.redis_password};
    command(auth, nullptr, nullptr);
  }
  if (settings_.redis_db != 0) {
    const std::string db = std::to_string(settings_.redis_db);
    const std::array<std::string_view, 2> select{"SELECT", db};
    command(select, nullptr, nullptr);
  }
  const std::array<std::string_view, 1> ping{"PING"};
  command(ping, nullptr, nullptr);
}

bool RedisConnection::command(std::span<const std::string_view> args, ReplyFn fn, void* privdata) {
  if (ac_ == nullptr || args.size() > kMaxArgs) {
    return false;
  }
  std::array<const char*, kMaxArgs> argv;
  std::array<std::size_t, kMaxArgs> lens;
  for (std::size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lens[i] = args[i].size();
  }
  if (redisAsyncCommandArgv(ac_, fn, privdata, static_cast<int>(args.size()), argv.data(),
                            lens.data()) != REDIS_OK) {
    return false;
  }
  return true;
}

void RedisConnection::on_connect(const redisAsyncContext* ac, int status) {
  RedisConnection* self = self_of(ac);
  if (status != REDIS_OK) {
    // hiredis frees the context after this returns (cleanup() runs then).
    self->lost(ac->errstr);
    self->schedule_reconnect();
    return;
  }
  self->connected_ = true;
  self->backoff_ = std::chrono::milliseconds(50);
  if (self->on_ready_) {
    self->on_ready_();
  }
}

void RedisConnection::on_disconnect(const redisAsyncContext* ac, int status) {
  RedisConnection* self = self_of(ac);
  self->connected_ = false;
  if (self->stopping_) {
    return;
  }
  self->lost(status == REDIS_OK ? "connection closed" : ac->errstr);
  self->schedule_reconnect();
}

void RedisConnection::lost(std::string_view why) {
  connected_ = false;
  if (on_lost_ && !stopping_) {
    on_lost_(why);
  }
}

void RedisConnection::schedule_reconnect() {
  if (stopping_) {
    return;
  }
  reconnect_timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(1000));
  reconnect_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopping_ && ac_ == nullptr) {
      connect();
    }
  });
}

void RedisConnection::add_read(void* p) {
  auto* self = static_cast<RedisConnection*>(p);
  self->reading_ = true;
  self->arm_read();
}

void RedisConnection::del_read(void* p) { static_cast<RedisConnection*>(p)->reading_ = false; }

void RedisConnection::add_write(void* p) {
  auto* self = static_cast<RedisConnection*>(p);
  self->writing_ = true;
  self->arm_write();
}

void RedisConnection::del_write(void* p) { static_cast<RedisConnection*>(p)->writing_ = false; }

void RedisConnection::cleanup(void* p) {
  auto* self = static_cast<RedisConnection*>(p);
  ++self->generation_;
  self->connected_ = false;
  self->reading_ = self->writing_ = false;
  if (self->fd_) {
    self->fd_->release();  // cancels our waits; hiredis closes the fd itself
    self->fd_.reset();
  }
  self->ac_ = nullptr;
}

void RedisConnection::arm_read() {
  arm(boost::asio::posix::descriptor_base::wait_read, read_armed_, reading_, &redisAsyncHandleRead);
}

void RedisConnection::arm_write() {
  arm(boost::asio::posix::descriptor_base::wait_write, write_armed_, writing_,
      &redisAsyncHandleWrite);
}

// Waits once for the socket to be ready in direction `what`, lets hiredis handle it, and waits
// again while hiredis still wants that direction. `armed` keeps one wait per direction.
void RedisConnection::arm(boost::asio::posix::descriptor_base::wait_type what, bool& armed,
                          const bool& wanted, void (*handle)(redisAsyncContext*)) {
  if (armed || !fd_) {
    return;
  }
  armed = true;
  fd_->async_wait(what, [this, what, &armed, &wanted, handle,
                         gen = generation_](const boost::system::error_code& ec) {
    if (gen != generation_) {
      return;  // a closed connection's wait
    }
    armed = false;
    if (ec || !wanted || ac_ == nullptr) {
      return;
    }
    handle(ac_);  // may free the context (cleanup() bumps the generation)
    if (gen == generation_ && wanted) {
      arm(what, armed, wanted, handle);
    }
  });
}

}  // namespace sluice::redis
