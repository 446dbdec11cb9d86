#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include <boost/container/static_vector.hpp>

#include "limits/limiter.h"

namespace sluice::limits {

class LimitPlan;

// What admission holds for one request until it ends: the concurrency slots (released exactly
// once, by settle time or, on paths that never get there, by the destructor), the tokens
// reserved for settlement, and the figures of the x-ratelimit-* headers. Lives in the request's
// context, on its worker; move-only.
class Ticket {
 public:
  Ticket() = default;
  ~Ticket() { release(); }
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;
  Ticket(Ticket&& other) noexcept { *this = std::move(other); }
  Ticket& operator=(Ticket&& other) noexcept {
    if (this != &other) {
      release();
      limiter = other.limiter;
      lease = other.lease;
      plan = std::move(other.plan);
      reserved = other.reserved;
      providers = other.providers;
      requests = other.requests;
      tokens = other.tokens;
      other.limiter = nullptr;
      other.lease.slots.clear();
    }
    return *this;
  }

  // Frees the slots (idempotent).
  void release() {
    if (limiter != nullptr && !lease.empty()) {
      limiter->release(lease);
    }
  }

  Limiter* limiter = nullptr;  // who took the charges; null when admission did not run
  Lease lease;
  std::shared_ptr<const LimitPlan> plan;  // the buckets charged (settlement asks it again)
  std::uint64_t reserved = 0;             // tokens taken at entry (estimate + max output)
  // Each attempt's charge on its provider's capacity (requests 1, `reserved` tokens), in
  // attempt order; settled with the usage for the one that answered, refunded for the others.
  struct ProviderCharge {
    std::string_view provider;  // view into the snapshot
    std::uint64_t reserved = 0;
    std::size_t attempt = 0;  // the index of its attempt in the request's attempts
  };
  boost::container::static_vector<ProviderCharge, 8> providers;
  Figures requests;
  Figures tokens;
  // Where the header values of `requests` and `tokens` are written (header_values), so their
  // views live as long as the request.
  std::array<std::array<char, 64>, 2> header_text{};
};

// The x-ratelimit-* header values of `figures` in OpenAI's format, written into `buffer`:
// limit and remaining in decimal, reset as a duration ("12ms", "1s", "6m0s").
struct HeaderValues {
  std::string_view limit;
  std::string_view remaining;
  std::string_view reset;
};
HeaderValues header_values(const Figures& figures, std::array<char, 64>& buffer);

}  // namespace sluice::limits
