#include "limits/redis_limiter.h"

#include <array>
#include <charconv>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "limits/token_bucket_script.h"
#include "spdlog/spdlog.h"

namespace sluice::limits {

namespace {

// EVALSHA sha numkeys, the keys, n m lease ttl deadline, limit and cost per bucket, limit per
// slot set: every charge adds at most a key and two numbers.
constexpr std::size_t kMaxArgs = 3 + 5 + 3 * kMaxCharges;

// A number's decimal text appended to `out`.
void append_number(std::string& out, std::int64_t value) {
  std::array<char, 24> buf;
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  out.append(buf.data(), end);
}

bool is_error(const redisReply* r, std::string_view prefix) {
  return r != nullptr && r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).starts_with(prefix);
}

// A command's arguments after the script, written back to back into `text` (whose capacity a
// warm caller keeps) and viewed once complete: views taken earlier would dangle on growth.
template <std::size_t N>
class ArgWriter {
 public:
  explicit ArgWriter(std::string& text) : text_(text) { text_.clear(); }

  void number(std::int64_t v) {
    begin();
    append_number(text_, v);
  }
  void word(std::string_view w) {
    begin();
    text_ += w;
  }
  // The word `prefix` followed by `v`'s digits.
  void word(std::string_view prefix, std::int64_t v) {
    word(prefix);
    append_number(text_, v);
  }
  // Writes the views into `out` from `at`; returns the index past the last.
  std::size_t views(std::span<std::string_view> out, std::size_t at) {
    offsets_[count_] = text_.size();
    for (std::size_t i = 0; i < count_; ++i) {
      out[at++] = std::string_view(text_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
    }
    return at;
  }

 private:
  void begin() { offsets_[count_++] = text_.size(); }

  std::string& text_;
  std::array<std::size_t, N + 1> offsets_{};
  std::size_t count_ = 0;
};

std::int64_t steady_ms(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

// One check in flight: its arguments (kept for a NOSCRIPT retry and, after a late reply, for
// giving its charges back; they own copies of the bucket keys, since the request and its plan
// may be gone by then), the timer its coroutine waits on, and the parsed reply. Reused: the
// strings keep their capacity, so a warm worker allocates nothing here per request.
struct RedisLimiter::Pending {
  enum class State : std::uint8_t { kFree, kWaiting, kDone, kAbandoned };
  explicit Pending(RedisLimiter& o) : owner(o), timer(o.ioc_) {}

  RedisLimiter& owner;
  boost::asio::steady_timer timer;
  State state = State::kFree;
  bool retried = false;
  Clock::time_point sent{};
  std::string text;  // every argument after the script, back to back (views point into it)
  std::array<std::string_view, kMaxArgs> args{};
  std::size_t argc = 0;
  // The reply.
  bool ok = false;
  std::string_view error;
  long long allowed = 0;  // 1 taken, 0 refused, -1 past its deadline (nothing taken)
  long long index = 0;
  long long retry_ms = 0;
  boost::container::static_vector<long long, kMaxCharges> levels;
};

RedisLimiter::RedisLimiter(boost::asio::io_context& ioc, const config::StateSettings& settings,
                           LocalLimiter& local, redis::Health& health, std::string lease_prefix)
    : local_(local),
      health_(health),
      lease_prefix_(std::move(lease_prefix)),
      ioc_(ioc),
      connection_(
          ioc, settings,
          [this] {
            // Load both scripts on every (re)connection: a restarted Redis has an empty
            // script cache. Until the SHA is known, checks send the script itself (EVAL).
            static constexpr std::array<std::string_view, 2> kScripts{kCheckScript, kCorrectScript};
            for (std::size_t i = 0; i < kScripts.size(); ++i) {
              const std::array<std::string_view, 3> load{"SCRIPT", "LOAD", kScripts[i]};
              connection_.command(load, &RedisLimiter::on_script_loaded,
                                  i == 0 ? static_cast<void*>(&check_sha_) : &correct_sha_);
            }
            // This Redis may not be the last one: learn its clock before the first check.
            redis_ahead_ms_.reset();
            time_asked_ = Clock::now();
            const std::array<std::string_view, 1> time{"TIME"};
            connection_.command(time, &RedisLimiter::on_time, this);
          },
          [this](std::string_view why) { health_.failed(why); }) {
  pending_.reserve(64);
}

RedisLimiter::~RedisLimiter() = default;

void RedisLimiter::start() { connection_.start(); }

void RedisLimiter::on_script_loaded(redisAsyncContext*, void* reply, void* privdata) {
  const auto* r = static_cast<const redisReply*>(reply);
  if (r != nullptr && r->type == REDIS_REPLY_STRING) {
    static_cast<std::string*>(privdata)->assign(r->str, r->len);
  }
}

void RedisLimiter::on_time(redisAsyncContext*, void* reply, void* privdata) {
  const auto* r = static_cast<const redisReply*>(reply);
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
      r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING) {
    return;
  }
  long long seconds = 0;
  long long micros = 0;
  const std::string_view s(r->element[0]->str, r->element[0]->len);
  const std::string_view us(r->element[1]->str, r->element[1]->len);
  if (std::from_chars(s.data(), s.data() + s.size(), seconds).ec != std::errc() ||
      std::from_chars(us.data(), us.data() + us.size(), micros).ec != std::errc()) {
    return;
  }
  auto& self = *static_cast<RedisLimiter*>(privdata);
  self.learn_clock(seconds * 1000 + micros / 1000, self.time_asked_);
}

void RedisLimiter::learn_clock(long long redis_ms, Clock::time_point asked) {
  redis_ahead_ms_ = redis_ms - steady_ms(asked);
}

std::int64_t RedisLimiter::redis_deadline(Clock::time_point deadline) const {
  if (!redis_ahead_ms_) {
    return 0;  // none: a late reply is still given back
  }
  return std::max<std::int64_t>(
      1, steady_ms(deadline + kScriptDeadlineGrace + deadline_skew_) + *redis_ahead_ms_);
}

RedisLimiter::Pending* RedisLimiter::acquire() {
  if (!free_.empty()) {
    Pending* p = free_.back();
    free_.pop_back();
    return p;
  }
  if (pending_.size() >= kMaxPending) {
    return nullptr;
  }
  pending_.push_back(std::make_unique<Pending>(*this));
  return pending_.back().get();
}

void RedisLimiter::free(Pending* p) {
  p->state = Pending::State::kFree;
  free_.push_back(p);
}

bool RedisLimiter::send(Pending& p) {
  return connection_.command(std::span<const std::string_view>(p.args.data(), p.argc),
                             &RedisLimiter::on_reply, &p);
}

void RedisLimiter::on_reply(redisAsyncContext*, void* reply, void* privdata) {
  auto& p = *static_cast<Pending*>(privdata);
  RedisLimiter& self = p.owner;
  const auto* r = static_cast<const redisReply*>(reply);
  if (p.state == Pending::State::kAbandoned) {
    // Its request went on without us (timeout). A script that still ran in time by Redis's
    // clock took what it was asked for: give it back, or nothing would.
    if (r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer == 1) {
      self.give_back(p);
    }
    self.free(&p);
    return;
  }
  if (is_error(r, "NOSCRIPT") && !p.retried) {
    // The script cache was emptied (restart, SCRIPT FLUSH): send the script itself once,
    // which also caches it again.
    p.retried = true;
    p.args[0] = "EVAL";
    p.args[1] = kCheckScript;
    if (self.send(p)) {
      return;
    }
    r = nullptr;
  }
  p.ok = false;
  p.levels.clear();
  if (r == nullptr) {
    p.error = "connection lost";
  } else if (r->type != REDIS_REPLY_ARRAY || r->elements < 4) {
    p.error = r->type == REDIS_REPLY_ERROR ? "script error" : "unexpected reply";
    spdlog::debug("limits: redis answered {}", r->type == REDIS_REPLY_ERROR
                                                   ? std::string_view(r->str, r->len)
                                                   : std::string_view("a non-array"));
  } else {
    p.ok = true;
    p.allowed = r->element[0]->integer;
    p.index = r->element[1]->integer;
    p.retry_ms = r->element[2]->integer;
    self.learn_clock(r->element[3]->integer, p.sent);
    for (std::size_t i = 4; i < r->elements && p.levels.size() < kMaxCharges; ++i) {
      p.levels.push_back(r->element[i]->integer);
    }
  }
  p.state = Pending::State::kDone;
  p.timer.cancel();
}

void RedisLimiter::give_back(Pending& p) {
  p.args[0] = "EVAL";  // rare: not worth a cached SHA that a flushed cache could lose
  p.args[1] = kGiveBackScript;
  if (!send(p)) {
    spdlog::warn(
        "limits: a check Redis answered late could not be undone (connection lost); "
        "its concurrency slots free themselves after lease_ttl_ms");
  }
}

boost::asio::awaitable<Decision> RedisLimiter::check(std::span<const Charge> charges,
                                                     Clock::time_point now,
                                                     Clock::time_point deadline, Lease& lease) {
  // Instance-wide slots are this instance's business: counted locally, first.
  Charges local_part;
  Charges remote;
  for (const Charge& c : charges) {
    (c.bucket->layer == Layer::kInstance ? local_part : remote).push_back(c);
  }
  Decision d;
  if (!local_part.empty()) {
    d = local_.decide(local_part, now, lease);
    if (d.status != Decision::Status::kOk || remote.empty()) {
      co_return d;
    }
  }
  if (remote.empty()) {
    co_return d;
  }
  const auto error = [&](std::string_view why) {
    local_.release(lease);
    Decision e;
    e.status = Decision::Status::kError;
    e.error = why;
    return e;
  };
  if (!connection_.connected()) {
    health_.failed("not connected");
    co_return error("redis unavailable");
  }
  Pending* p = acquire();
  if (p == nullptr) {
    health_.failed("too many checks waiting");
    co_return error("redis overloaded");
  }
  Charges buckets;
  Charges slots;
  std::chrono::milliseconds ttl{0};
  for (const Charge& c : remote) {
    if (c.bucket->dimension == Dimension::kConcurrency) {
      slots.push_back(c);
      ttl = std::max(ttl, c.bucket->lease_ttl);
    } else {
      buckets.push_back(c);
    }
  }
  const std::uint64_t lease_id = next_lease_++;
  p->text.reserve(2048);  // once: a warm Pending never allocates
  ArgWriter<kMaxArgs> w(p->text);
  w.number(static_cast<std::int64_t>(buckets.size() + slots.size()));  // numkeys
  for (const Charge& c : buckets) {
    w.word(c.bucket->redis_key);
  }
  for (const Charge& c : slots) {
    w.word(c.bucket->redis_key);
  }
  w.number(static_cast<std::int64_t>(buckets.size()));
  w.number(static_cast<std::int64_t>(slots.size()));
  w.word(lease_prefix_, static_cast<std::int64_t>(lease_id));
  w.number(ttl.count());
  w.number(redis_deadline(deadline));
  for (const Charge& c : buckets) {
    w.number(static_cast<std::int64_t>(c.bucket->limit));
    w.number(std::max<std::int64_t>(c.cost, 0));
  }
  for (const Charge& c : slots) {
    w.number(static_cast<std::int64_t>(c.bucket->limit));
  }
  const bool have_sha = !check_sha_.empty();
  p->args[0] = have_sha ? "EVALSHA" : "EVAL";
  p->args[1] = have_sha ? std::string_view(check_sha_) : kCheckScript;
  p->argc = w.views(p->args, 2);
  p->sent = Clock::now();
  p->retried = false;
  p->state = Pending::State::kWaiting;
  if (!send(*p)) {
    free(p);
    health_.failed("not connected");
    co_return error("redis unavailable");
  }
  p->timer.expires_at(deadline);
  boost::system::error_code ec;
  co_await p->timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  if (p->state != Pending::State::kDone) {
    p->state = Pending::State::kAbandoned;  // on_reply frees it when the reply comes
    health_.failed("timeout");
    co_return error("redis timeout");
  }
  if (!p->ok) {
    const std::string_view why = p->error;
    free(p);
    health_.failed(why);
    co_return error("redis error");
  }
  if (p->allowed < 0) {
    // Taken as in time (this worker ran late too, or Redis's clock jumped ahead), yet run past
    // the deadline and its grace by Redis's clock: nothing was taken, and the answer corrected
    // the offset for the next check.
    free(p);
    health_.failed("past the deadline by its clock");
    co_return error("redis timeout");
  }
  health_.answered();
  if (p->allowed == 1) {
    for (const Charge& c : slots) {
      lease.slots.push_back(c.bucket);
    }
    lease.id = lease_id;
  } else {
    local_.release(lease);
    d.status = Decision::Status::kOverLimit;
    const std::size_t at = static_cast<std::size_t>(p->index) - 1;
    d.limited = at < buckets.size() ? buckets[at].bucket
                                    : slots[std::min(at - buckets.size(), slots.size() - 1)].bucket;
    d.never = p->retry_ms < 0;
    d.retry_after = std::chrono::milliseconds(p->retry_ms < 0 ? 60000 : p->retry_ms);
  }
  for (std::size_t i = 0; i < buckets.size() && i < p->levels.size(); ++i) {
    const Bucket& b = *buckets[i].bucket;
    const std::uint64_t remaining =
        std::min<std::uint64_t>(b.limit, static_cast<std::uint64_t>(std::max(0LL, p->levels[i])));
    const Figures f{b.limit, remaining,
                    std::chrono::milliseconds((b.limit - remaining) * 60000 / b.limit)};
    Figures& into = b.dimension == Dimension::kTokens ? d.tokens : d.requests;
    if (into.limit == 0 || f.remaining < into.remaining) {
      into = f;
    }
  }
  free(p);
  co_return d;
}

void RedisLimiter::correct(std::span<const Charge> charges, Clock::time_point /*now*/) {
  if (!connection_.connected() || charges.empty()) {
    return;  // settlement is best effort: a lost correction only makes a bucket drift briefly
  }
  std::array<std::string_view, 3 + 3 * kMaxCharges> args;
  std::string text;
  text.reserve(1024);
  ArgWriter<1 + 3 * kMaxCharges> w(text);
  w.number(static_cast<std::int64_t>(charges.size()));
  for (const Charge& c : charges) {
    w.word(c.bucket->redis_key);
  }
  for (const Charge& c : charges) {
    w.number(static_cast<std::int64_t>(c.bucket->limit));
    w.number(c.cost);
  }
  const bool have_sha = !correct_sha_.empty();
  args[0] = have_sha ? "EVALSHA" : "EVAL";
  args[1] = have_sha ? std::string_view(correct_sha_) : kCorrectScript;
  const std::size_t argc = w.views(args, 2);
  connection_.command(std::span<const std::string_view>(args.data(), argc), nullptr, nullptr);
}

void RedisLimiter::release(Lease& lease) {
  if (lease.slots.empty()) {
    return;
  }
  std::string member = lease_prefix_;
  append_number(member, static_cast<std::int64_t>(lease.id));
  Lease local_slots;
  for (const Bucket* b : lease.slots) {
    if (b->layer == Layer::kInstance) {
      local_slots.slots.push_back(b);
      continue;
    }
    // A lost ZREM (Redis down) only holds the slot until its lease expires.
    const std::array<std::string_view, 3> zrem{"ZREM", b->redis_key, member};
    connection_.command(zrem, nullptr, nullptr);
  }
  local_.release(local_slots);
  lease.slots.clear();
}

}  // namespace sluice::limits
