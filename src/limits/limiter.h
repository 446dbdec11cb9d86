#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/container/static_vector.hpp>

namespace sluice::limits {

// Which part of the tenancy tree a limit belongs to, and what it counts.
enum class Layer : std::uint8_t { kKey, kGroup, kModel, kProvider, kInstance };
enum class Dimension : std::uint8_t { kRequests, kTokens, kConcurrency };

// "key", "key group", "model", "provider", "instance": the words of a rejection message.
std::string_view to_string(Layer layer);
// "requests per minute", "tokens per minute", "concurrent requests".
std::string_view to_string(Dimension dimension);
// Short forms for metric labels: "rpm", "tpm", "concurrency".
std::string_view label(Dimension dimension);
std::string_view label(Layer layer);

class LocalState;

// One limit of one layer, compiled from the config (LimitPlan). Requests and tokens are token
// buckets of `limit` that refill continuously at `limit` a minute; concurrency is `limit` slots.
// Immutable; lives as long as the plan that made it.
struct Bucket {
  Layer layer = Layer::kKey;
  Dimension dimension = Dimension::kRequests;
  std::string name;  // the key, group, alias or provider id ("" for the instance)
  std::uint64_t limit = 0;
  std::string redis_key;                   // "<prefix>{<tenant>}:<dimension>:<layer>:<name>"
  std::chrono::milliseconds lease_ttl{0};  // kConcurrency: a slot frees itself after this
  LocalState* local = nullptr;  // this instance's state (LocalLimiter), kept across reloads
};

// What a request takes from one bucket: requests 1, tokens the estimate (or, in correct(), the
// difference between real usage and the estimate: negative gives tokens back), slots 1.
struct Charge {
  const Bucket* bucket = nullptr;
  std::int64_t cost = 0;
};

// At most: key, group, model, provider x (rpm, tpm), plus group and instance slots.
inline constexpr std::size_t kMaxCharges = 10;
using Charges = boost::container::static_vector<Charge, kMaxCharges>;

// A dimension's state for the x-ratelimit-* headers: the tightest bucket (least remaining).
struct Figures {
  std::uint64_t limit = 0;  // 0 = no bucket of this dimension applied
  std::uint64_t remaining = 0;
  std::chrono::milliseconds reset{0};  // until the bucket is full again
};

// The answer of Limiter::check, in the shape of Envoy's rate-limit client: kOk, kOverLimit, or
// kError when the backend could not decide in time (what then happens is a policy, chosen by
// the caller: fail open or closed).
struct Decision {
  enum class Status : std::uint8_t { kOk, kOverLimit, kError };
  Status status = Status::kOk;
  const Bucket* limited = nullptr;  // kOverLimit: the bucket that refused
  bool never = false;  // kOverLimit: the cost exceeds the bucket's whole size; waiting won't help
  std::chrono::milliseconds retry_after{0};
  Figures requests;
  Figures tokens;
  std::string_view error;  // kError: why (static text)
};

// The concurrency slots an admitted request holds. Release them with Limiter::release on every
// exit path; the pipeline does it from the request's finish (and its destructor, for paths that
// never finish normally).
struct Lease {
  boost::container::static_vector<const Bucket*, 2> slots;
  std::uint64_t id = 0;  // unique on this instance (the Redis sorted-set member)
  bool empty() const { return slots.empty(); }
};

// Token buckets and concurrency slots. One instance per worker or shared by all (see each
// implementation); every call runs on the calling worker's thread.
class Limiter {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Limiter() = default;

  // Takes every charge, all or none: a refusal by any bucket takes nothing from the others.
  // Slot buckets (kConcurrency) taken are recorded in `lease`. Completes by `deadline` whatever
  // the backend does (then kError). `now` drives the local buckets (a SimulatedClock in tests).
  // May complete inline (LocalLimiter always does).
  virtual boost::asio::awaitable<Decision> check(std::span<const Charge> charges,
                                                 Clock::time_point now, Clock::time_point deadline,
                                                 Lease& lease) = 0;
  // Settles token buckets with real usage: adds each charge's cost (negative gives back).
  // Fire and forget: never waits, never fails the request.
  virtual void correct(std::span<const Charge> charges, Clock::time_point now) = 0;
  // Frees the lease's slots (idempotent: the lease is emptied). Fire and forget.
  virtual void release(Lease& lease) = 0;
};

}  // namespace sluice::limits
