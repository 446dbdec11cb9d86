#include "cache/flight.h"

#include <thread>

#include <gtest/gtest.h>

namespace sluice::cache {
namespace {

ir::StreamEvent text(std::string t) {
  ir::StreamEvent e;
  e.kind = ir::StreamEventKind::kTextDelta;
  e.text = std::move(t);
  return e;
}

Key key(std::uint8_t n) {
  Key k{};
  k[0] = n;
  return k;
}

TEST(FlightTest, FollowersReadWhatWasPublishedThenTheRest) {
  Flight flight(1 << 20);
  const ir::StreamEvent first[] = {text("a"), text("b")};
  flight.publish(first);
  std::size_t cursor = 0;
  std::vector<ir::StreamEvent> got;
  EXPECT_EQ(flight.read(cursor, got), Flight::State::kLive);
  ASSERT_EQ(got.size(), 2u);
  int woken = 0;
  EXPECT_TRUE(flight.wait(cursor, &cursor, [&] { ++woken; }));
  const ir::StreamEvent second[] = {text("c")};
  flight.publish(second);
  EXPECT_EQ(woken, 1);
  got.clear();
  flight.finish(true, "p", "m");
  EXPECT_EQ(flight.read(cursor, got), Flight::State::kDone);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].text, "c");
  ASSERT_NE(flight.origin(), nullptr);
  EXPECT_EQ(flight.origin()->provider, "p");
  // Nothing more to wait for.
  EXPECT_FALSE(flight.wait(cursor, &cursor, [&] { ++woken; }));
}

// A follower whose encoder has seen the end of the answer finishes before the leader's call
// does: the origin it names was set before those events were published, and the copy it holds
// stays as it was while the leader finishes (the race TSan found on the strings themselves).
TEST(FlightTest, TheOriginIsKnownBeforeTheLeaderFinishes) {
  Flight flight(1 << 20);
  EXPECT_EQ(flight.origin(), nullptr);
  flight.set_origin("oa", "gpt-x", std::nullopt);
  const ir::StreamEvent events[] = {text("a")};
  flight.publish(events);
  flight.set_origin("oa", "gpt-x", ir::Usage{10, 5});
  std::shared_ptr<const Flight::Origin> held = flight.origin();
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->provider, "oa");
  EXPECT_EQ(held->usage, (ir::Usage{10, 5}));
  std::thread leader([&] { flight.finish(true, "oa", "gpt-x-final", ir::Usage{10, 6}); });
  leader.join();
  EXPECT_EQ(held->model, "gpt-x") << "a follower's copy is never written under it";
  EXPECT_EQ(flight.origin()->model, "gpt-x-final");
  EXPECT_EQ(flight.origin()->usage, (ir::Usage{10, 6}));
}

TEST(FlightTest, AFollowerAskingAgainIsWokenOnce) {
  Flight flight(1 << 20);
  int first = 0;
  int latest = 0;
  const int follower = 0;
  for (int i = 0; i < 100; ++i) {  // a quiet leader: the follower's timer fires again and again
    EXPECT_TRUE(flight.wait(0, &follower, [&] { ++first; }));
  }
  EXPECT_TRUE(flight.wait(0, &follower, [&] { ++latest; }));
  flight.finish(false, {}, {});
  EXPECT_EQ(first, 0);
  EXPECT_EQ(latest, 1);
}

TEST(FlightTest, AnAnswerLargerThanTheBufferFailsTheFlight) {
  Flight flight(64);
  const ir::StreamEvent big[] = {text(std::string(1000, 'x'))};
  flight.publish(big);
  std::size_t cursor = 0;
  std::vector<ir::StreamEvent> got;
  EXPECT_EQ(flight.read(cursor, got), Flight::State::kFailed);
  EXPECT_TRUE(got.empty());
}

TEST(FlightsTest, TheFirstLeadsTheRestFollowUntilItLands) {
  Flights flights;
  Flights::Boarding leader = flights.board(key(1), 1 << 20);
  EXPECT_TRUE(leader.leader);
  Flights::Boarding follower = flights.board(key(1), 1 << 20);
  EXPECT_FALSE(follower.leader);
  EXPECT_EQ(follower.flight, leader.flight);
  EXPECT_TRUE(leader.flight->followed());
  EXPECT_TRUE(flights.board(key(2), 1 << 20).leader);  // another key
  flights.land(key(1), *leader.flight);
  EXPECT_TRUE(flights.board(key(1), 1 << 20).leader);  // a new flight after the landing
  // A flight that is no longer the one in the air does not remove its successor.
  flights.land(key(1), *leader.flight);
  EXPECT_FALSE(flights.board(key(1), 1 << 20).leader);
}

}  // namespace
}  // namespace sluice::cache
