#include "pipeline/filters/shared_flight.h"

#include <algorithm>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "pipeline/call_context.h"

namespace sluice::pipeline {

using std::chrono::milliseconds;

Awaitable<SharedFlightWait> wait_for_shared_flight(CallContext& call, cache::SharedStore& store,
                                                   std::string_view alias, std::string_view tenant,
                                                   const cache::Key& key, milliseconds wait) {
  using Claim = cache::SharedStore::Claim;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  milliseconds pause(10);
  for (;;) {
    Claim claim = co_await store.claim_answer(alias, tenant, key, wait);
    switch (claim.result) {
      case Claim::Result::kClaimed:
        co_return SharedFlightWait{SharedFlightWait::Result::kLead, true, {}};
      case Claim::Result::kDone:
        co_return SharedFlightWait{SharedFlightWait::Result::kAnswered, false,
                                   std::move(claim.record)};
      case Claim::Result::kUnavailable:
        co_return SharedFlightWait{};
      case Claim::Result::kHeld:
        // This instance's own claim: an earlier flight of the key whose release has not landed
        // yet (this instance has one flight per key at a time). Nobody else to wait for.
        if (claim.held_here) {
          co_return SharedFlightWait{};
        }
        break;
    }
    if (call.downstream().client_gone()) {
      co_return SharedFlightWait{SharedFlightWait::Result::kCallerGone, false, {}};
    }
    if (std::chrono::steady_clock::now() + pause >= deadline) {
      co_return SharedFlightWait{};  // waited long enough: a call of its own
    }
    timer.expires_after(pause);
    boost::system::error_code ec;
    co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    pause = std::min(pause * 2, milliseconds(200));
  }
}

}  // namespace sluice::pipeline
