#include "redis/commands.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace sluice::redis {

// One awaited command: the reply lands here, and the timer wakes the waiting coroutine on the
// reply or at the deadline. Pooled: a warm worker allocates nothing per command.
struct Commands::Pending {
  enum class State : std::uint8_t { kFree, kWaiting, kDone, kAbandoned };
  explicit Pending(Commands& o) : owner(o), timer(o.ioc_) {}

  Commands& owner;
  boost::asio::steady_timer timer;
  State state = State::kFree;
  Reply reply;
};

Commands::Commands(boost::asio::io_context& ioc, const config::StateSettings& settings,
                   Health& health)
    : ioc_(ioc),
      health_(health),
      connection_(
          ioc, settings, [] {}, [this](std::string_view why) { health_.failed(why); }) {}

Commands::~Commands() = default;

Commands::Pending* Commands::acquire() {
  if (waiting_ >= kMaxWaiting) {
    return nullptr;
  }
  if (!free_.empty()) {
    Pending* p = free_.back();
    free_.pop_back();
    return p;
  }
  pool_.push_back(std::make_unique<Pending>(*this));
  return pool_.back().get();
}

void Commands::release(Pending* p) {
  p->state = Pending::State::kFree;
  p->reply = Reply{};
  free_.push_back(p);
}

namespace {

Reply copy_reply(const redisReply* r) {
  Reply out;
  if (r == nullptr) {
    out.kind = Reply::Kind::kLost;
    return out;
  }
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out.kind = Reply::Kind::kNil;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.kind = Reply::Kind::kString;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = Reply::Kind::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ERROR:
      out.kind = Reply::Kind::kError;
      out.text.assign(r->str, r->len);
      break;
    default:
      out.kind = Reply::Kind::kOther;
      break;
  }
  return out;
}

}  // namespace

void Commands::on_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto& p = *static_cast<Pending*>(privdata);
  Commands& self = p.owner;
  --self.waiting_;
  const auto* r = static_cast<const redisReply*>(reply);
  if (r != nullptr) {
    self.health_.answered();
  }
  if (p.state == Pending::State::kAbandoned) {
    self.release(&p);  // its request went on without it
    return;
  }
  p.reply = copy_reply(r);
  p.state = Pending::State::kDone;
  p.timer.cancel();
}

void Commands::on_sent_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto& self = *static_cast<Commands*>(privdata);
  --self.waiting_;
  if (reply != nullptr) {
    self.health_.answered();
  }
}

boost::asio::awaitable<Reply> Commands::call(std::span<const std::string_view> args,
                                             std::chrono::steady_clock::time_point deadline) {
  Reply failed;
  failed.kind = Reply::Kind::kUnavailable;
  if (!connection_.connected()) {
    health_.failed("not connected");
    co_return failed;
  }
  Pending* p = acquire();
  if (p == nullptr) {
    health_.failed("too many commands waiting");
    co_return failed;
  }
  p->state = Pending::State::kWaiting;
  if (!connection_.command(args, &Commands::on_reply, p)) {
    release(p);
    health_.failed("not connected");
    co_return failed;
  }
  ++waiting_;
  p->timer.expires_at(deadline);
  boost::system::error_code ec;
  co_await p->timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  if (p->state != Pending::State::kDone) {
    p->state = Pending::State::kAbandoned;  // on_reply frees it, with a reply or a null
    health_.failed("timed out");
    failed.kind = Reply::Kind::kTimeout;
    co_return failed;
  }
  Reply reply = std::move(p->reply);
  release(p);
  co_return reply;
}

// A fire-and-forget command whose reply someone wants to know about.
struct Commands::Noted {
  Commands& owner;
  std::function<void(const Reply&)> on_reply;
};

void Commands::on_noted_reply(redisAsyncContext*, void* reply, void* privdata) {
  std::unique_ptr<Noted> noted(static_cast<Noted*>(privdata));
  Commands& self = noted->owner;
  --self.waiting_;
  const auto* r = static_cast<const redisReply*>(reply);
  Reply out;
  if (r != nullptr) {
    self.health_.answered();
    out = copy_reply(r);
  } else {
    out.kind = Reply::Kind::kLost;
  }
  noted->on_reply(out);
}

bool Commands::send(std::span<const std::string_view> args,
                    std::function<void(const Reply&)> on_reply) {
  if (!connection_.connected() || waiting_ >= kMaxWaiting) {
    health_.failed(connection_.connected() ? "too many commands waiting" : "not connected");
    return false;
  }
  auto noted = std::make_unique<Noted>(Noted{*this, std::move(on_reply)});
  if (!connection_.command(args, &Commands::on_noted_reply, noted.get())) {
    return false;
  }
  noted.release();  // on_noted_reply owns it now
  ++waiting_;
  return true;
}

bool Commands::send(std::span<const std::string_view> args) {
  if (!connection_.connected() || waiting_ >= kMaxWaiting) {
    health_.failed(connection_.connected() ? "too many commands waiting" : "not connected");
    return false;
  }
  if (!connection_.command(args, &Commands::on_sent_reply, this)) {
    return false;
  }
  ++waiting_;
  return true;
}

}  // namespace sluice::redis
