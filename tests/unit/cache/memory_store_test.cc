#include "cache/memory_store.h"

#include <gtest/gtest.h>

namespace sluice::cache {
namespace {

using namespace std::chrono_literals;
using Time = MemoryStore::SteadyTime;

const Time kT0 = Time() + 1000h;

Key key(std::uint32_t n, std::uint8_t shard = 0) {
  Key k{};
  k[0] = static_cast<std::uint8_t>(n);
  k[1] = static_cast<std::uint8_t>(n >> 8);
  k[2] = static_cast<std::uint8_t>(n >> 16);
  k[31] = shard;  // the shard byte: tests of eviction keep everything in one shard
  return k;
}

std::shared_ptr<const Entry> entry(std::string text, std::chrono::seconds fresh = 60s,
                                   std::chrono::seconds stale = 0s, std::string route = "r",
                                   std::string tenant = "g:a") {
  auto e = std::make_shared<Entry>();
  e->answer.content.push_back(ir::ContentPart::make_text(std::move(text)));
  e->alias = std::move(route);
  e->tenant = std::move(tenant);
  e->fresh_until = kT0 + fresh;
  e->stale_until = e->fresh_until + stale;
  e->bytes = entry_bytes(*e);
  return e;
}

TEST(MemoryStoreTest, FindsWhatWasPutUntilItExpires) {
  MemoryStore store(64 << 20);
  ASSERT_TRUE(store.put(key(1), entry("one")));
  auto found = store.find(key(1), kT0 + 59s);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->entry->answer.content[0].text, "one");
  EXPECT_EQ(found->freshness, MemoryStore::Freshness::kFresh);
  EXPECT_FALSE(store.find(key(2), kT0));
  EXPECT_FALSE(store.find(key(1), kT0 + 60s));
  EXPECT_EQ(store.stats().entries, 0u);  // the expired entry went with the lookup
  EXPECT_EQ(store.stats().expirations, 1u);
}

TEST(MemoryStoreTest, AStaleEntryIsRefreshedByOneFinderAtATime) {
  MemoryStore store(64 << 20);
  store.put(key(1), entry("one", 10s, 60s));
  auto first = store.find(key(1), kT0 + 11s, 30s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->freshness, MemoryStore::Freshness::kStale);
  EXPECT_TRUE(first->refresh);
  auto second = store.find(key(1), kT0 + 12s, 30s);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->refresh);  // served stale while the first refreshes
  // A refresh that never stored anything lapses: someone else gets to try.
  auto later = store.find(key(1), kT0 + 42s, 30s);
  ASSERT_TRUE(later);
  EXPECT_TRUE(later->refresh);
  EXPECT_FALSE(store.find(key(1), kT0 + 71s));
}

TEST(MemoryStoreTest, StaysWithinItsMemoryAndEvictsTheLeastRecent) {
  // One shard holds capacity / 16.
  const std::size_t one = entry(std::string(1000, 'x'))->bytes;
  MemoryStore store(16 * one * 10);
  for (std::uint32_t i = 0; i < 30; ++i) {
    ASSERT_TRUE(store.put(key(i), entry(std::string(1000, 'x'))));
  }
  const MemoryStore::Stats stats = store.stats();
  EXPECT_LE(stats.bytes, one * 10);
  EXPECT_EQ(stats.entries, 10u);
  EXPECT_EQ(stats.evictions, 20u);
  EXPECT_TRUE(store.find(key(29), kT0));
  EXPECT_FALSE(store.find(key(0), kT0));
}

// Segmented LRU: answers asked again survive a scan of one-off questions larger than the
// whole store.
TEST(MemoryStoreTest, AScanOfOneOffEntriesDoesNotEvictTheHotOnes) {
  const std::size_t one = entry(std::string(1000, 'x'))->bytes;
  MemoryStore store(16 * one * 10);
  for (std::uint32_t hot = 0; hot < 5; ++hot) {
    store.put(key(hot), entry(std::string(1000, 'x')));
    ASSERT_TRUE(store.find(key(hot), kT0));  // a second use: protected
  }
  for (std::uint32_t scan = 100; scan < 200; ++scan) {
    store.put(key(scan), entry(std::string(1000, 'x')));
  }
  for (std::uint32_t hot = 0; hot < 5; ++hot) {
    EXPECT_TRUE(store.find(key(hot), kT0)) << "hot entry " << hot;
  }
}

TEST(MemoryStoreTest, RefusesAnEntryLargerThanAShard) {
  MemoryStore store(16 * 4096);
  EXPECT_FALSE(store.put(key(1), entry(std::string(8192, 'x'))));
  EXPECT_EQ(store.stats().entries, 0u);
}

TEST(MemoryStoreTest, ReplacingAnEntryKeepsTheAccounting) {
  MemoryStore store(64 << 20);
  store.put(key(1), entry("one"));
  store.put(key(1), entry("uno, longer"));
  EXPECT_EQ(store.stats().entries, 1u);
  EXPECT_EQ(store.stats().bytes, entry("uno, longer")->bytes);
  EXPECT_EQ(store.find(key(1), kT0)->entry->answer.content[0].text, "uno, longer");
}

TEST(MemoryStoreTest, PurgesByRouteTenantOrKey) {
  MemoryStore store(64 << 20);
  store.put(key(1, 1), entry("a", 60s, 0s, "r1", "g:a"));
  store.put(key(2, 2), entry("b", 60s, 0s, "r1", "g:b"));
  store.put(key(3, 3), entry("c", 60s, 0s, "r2", "g:a"));
  EXPECT_EQ(store.purge("", "g:a"), 2u);
  EXPECT_FALSE(store.find(key(1, 1), kT0));
  EXPECT_TRUE(store.find(key(2, 2), kT0));
  EXPECT_EQ(store.purge("r1", ""), 1u);
  EXPECT_EQ(store.stats().entries, 0u);
  // By the key's hex start: key(n) begins with n's low byte.
  ASSERT_TRUE(store.put(key(0xab), entry("by key")));
  ASSERT_TRUE(store.put(key(0xac), entry("kept")));
  EXPECT_EQ(store.purge("", "", "ab"), 1u);
  EXPECT_FALSE(store.find(key(0xab), kT0));
  EXPECT_TRUE(store.find(key(0xac), kT0));
}

TEST(MemoryStoreTest, ASmallerCapacityEvictsAtOnce) {
  const std::size_t one = entry("x")->bytes;
  MemoryStore store(64 << 20);
  for (std::uint32_t i = 0; i < 8; ++i) {
    store.put(key(i), entry("x"));
  }
  store.set_capacity(16 * one * 3);
  EXPECT_EQ(store.stats().entries, 3u);
}

}  // namespace
}  // namespace sluice::cache
