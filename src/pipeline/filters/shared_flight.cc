#include "pipeline/filters/shared_flight.h"

#include <algorithm>
#include <optional>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/live_record.h"

namespace sluice::pipeline {

using std::chrono::milliseconds;

Awaitable<SharedFlightWait> claim_shared_flight(cache::SharedStore& store, std::string_view alias,
                                                std::string_view tenant, const cache::Key& key,
                                                milliseconds hold) {
  using Claim = cache::SharedStore::Claim;
  Claim claim = co_await store.claim_answer(alias, tenant, key, hold);
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
      // yet (this instance has one flight per key at a time). Nobody else to follow.
      if (claim.held_here) {
        co_return SharedFlightWait{};
      }
      co_return SharedFlightWait{SharedFlightWait::Result::kElsewhere, false, {}};
  }
  co_return SharedFlightWait{};
}

namespace {

constexpr std::size_t kRecordsPerRead = 256;
constexpr milliseconds kLivePoll(10);
constexpr milliseconds kQuietPoll(50);
constexpr milliseconds kQuietAfter(1000);

// How the relay ends for its flight: the holder's end, or a failure of it.
struct RelayEnd {
  bool whole = false;
  std::string provider;
  std::string model;
  std::optional<ir::Usage> usage;
};

// Reads the log until it ends; the end it found, or nullopt for a failure of the relay.
Awaitable<std::optional<RelayEnd>> read_live_log(const SharedFlightRelay& relay,
                                                 cache::Flight& flight) {
  const auto deadline = std::chrono::steady_clock::now() + relay.wait;
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  cache::LogPosition after{};
  auto last_news = std::chrono::steady_clock::now();
  for (;;) {
    std::optional<cache::SharedStore::LiveLog> log = co_await relay.store.live_after(
        relay.alias, relay.tenant, relay.key, after, kRecordsPerRead);
    if (!log) {
      co_return std::nullopt;  // the store stopped answering: each instance on its own
    }
    for (const std::string& bytes : log->records) {
      std::optional<cache::LiveRecord> record = cache::decode_live(bytes, relay.max_record_bytes);
      if (!record) {
        co_return std::nullopt;
      }
      if (record->kind == cache::LiveRecord::Kind::kEnd) {
        co_return RelayEnd{record->whole, std::move(record->provider), std::move(record->model),
                           record->usage};
      }
      if (!record->provider.empty()) {
        flight.set_origin(record->provider, record->model, record->usage);
      }
      flight.publish(record->events);
    }
    after = log->last;
    const auto now = std::chrono::steady_clock::now();
    if (!log->records.empty()) {
      last_news = now;
    } else if (!log->claimed) {
      co_return std::nullopt;  // no end, and nobody holds the call any more
    }
    if (log->records.size() == kRecordsPerRead) {
      continue;  // more to read at once
    }
    if (!flight.followed() || now >= deadline) {
      co_return std::nullopt;
    }
    timer.expires_after(now - last_news < kQuietAfter ? kLivePoll : kQuietPoll);
    boost::system::error_code ec;
    co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  }
}

}  // namespace

Awaitable<void> relay_shared_flight(SharedFlightRelay relay, std::shared_ptr<cache::Flight> flight,
                                    cache::Flights& flights) {
  std::optional<RelayEnd> end = co_await read_live_log(relay, *flight);
  if (!end || !end->whole) {
    // Whatever answer the store has by now (a holder that wrote none of its call live, an older
    // version): kept here, so a follower that falls back to its own call is a hit instead.
    std::optional<std::string> record =
        co_await relay.store.find_answer(relay.alias, relay.tenant, relay.key);
    if (record && relay.adopt) {
      relay.adopt(*record);
    }
    flight->finish(false, {}, {});
  } else {
    flight->finish(true, std::move(end->provider), std::move(end->model), end->usage);
  }
  flights.land(relay.key, *flight);
}

}  // namespace sluice::pipeline
