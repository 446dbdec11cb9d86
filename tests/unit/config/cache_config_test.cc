#include <gtest/gtest.h>

#include "config/config.h"
#include "providers/registry.h"

namespace sluice::config {
namespace {

Result<std::shared_ptr<const Config>> load(const std::string& cache_top, const std::string& route) {
  const std::string yaml = "version: 1\nauth: none\n" + cache_top +
                           "providers:\n  - { id: p, adapter: mock }\n"
                           "routes:\n  - { alias: a, provider: p, model: m" +
                           route +
                           " }\n  - { alias: e, kind: embeddings, provider: p, model: m }\n";
  LoadOptions options;
  options.adapters = providers::adapter_schemas();
  options.getenv = [](const std::string&) { return std::optional<std::string>(); };
  return load_from_string(yaml, "test.yaml", options);
}

TEST(CacheConfigTest, OffUnlessARouteTurnsItOn) {
  auto config = load("", "");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_FALSE((*config)->routes[0].cache.enabled);
  EXPECT_EQ((*config)->cache.memory_bytes, 64u << 20);
}

TEST(CacheConfigTest, RoutesTakeTheDefaultsAndOverrideThem) {
  auto config = load("cache: { memory_bytes: 8MiB, ttl_ms: 60000, scope: key }\n",
                     ", cache: { ttl_ms: 5000, vary_headers: [Accept-Language] }");
  ASSERT_TRUE(config) << config.error().message();
  const CacheSettings& s = (*config)->routes[0].cache;
  EXPECT_TRUE(s.enabled);  // a mapping turns it on
  EXPECT_EQ(s.ttl.count(), 5000);
  EXPECT_EQ(s.scope, CacheSettings::Scope::kKey);  // from the top
  ASSERT_EQ(s.vary_headers.size(), 1u);
  EXPECT_EQ(s.vary_headers[0], "accept-language");
  EXPECT_EQ((*config)->cache.memory_bytes, 8u << 20);
  EXPECT_FALSE((*config)->routes[1].cache.enabled);  // embeddings never cache

  auto on = load("cache: { enabled: true }\n", "");
  ASSERT_TRUE(on);
  EXPECT_TRUE((*on)->routes[0].cache.enabled);
  auto off = load("cache: { enabled: true }\n", ", cache: false");
  ASSERT_TRUE(off);
  EXPECT_FALSE((*off)->routes[0].cache.enabled);
}

TEST(CacheConfigTest, ASemanticCacheNamesAnEmbeddingsRoute) {
  auto config =
      load("", ", cache: { semantic: { embeddings: e, threshold: 0.95, dimensions: 256 } }");
  ASSERT_TRUE(config) << config.error().message();
  const std::optional<SemanticSettings>& s = (*config)->routes[0].cache.semantic;
  ASSERT_TRUE(s);
  EXPECT_EQ(s->embeddings, "e");
  EXPECT_DOUBLE_EQ(s->threshold, 0.95);
  EXPECT_EQ(s->max_turns, 1u);
  EXPECT_EQ(s->dimensions, 256u);
  EXPECT_EQ(s->timeout.count(), 1000);

  auto unknown = load("", ", cache: { semantic: { embeddings: nope } }");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown alias \"nope\""), std::string::npos)
      << unknown.error().message();
  auto chat = load("", ", cache: { semantic: { embeddings: a } }");
  ASSERT_FALSE(chat);
  EXPECT_NE(chat.error().message().find("is a chat route"), std::string::npos);
  EXPECT_FALSE(load("", ", cache: { semantic: { embeddings: e, threshold: 0.2 } }"));
  EXPECT_FALSE(load("", ", cache: { semantic: true }"));
  EXPECT_FALSE(load("", ", cache: { semantic: { threshold: 0.99 } }"));  // embeddings required
}

TEST(CacheConfigTest, RefusesWhatCouldLeakOrMakesNoSense) {
  auto credential = load("", ", cache: { vary_headers: [authorization] }");
  ASSERT_FALSE(credential);
  EXPECT_NE(credential.error().message().find("credential header"), std::string::npos);
  auto scope = load("", ", cache: { scope: everyone }");
  ASSERT_FALSE(scope);
  EXPECT_NE(scope.error().message().find("key_group"), std::string::npos);
  EXPECT_FALSE(load("", ", cache: { ttl_jitter: 90 }"));
  EXPECT_FALSE(load("", ", cache: { ttl_ms: 10 }"));
  EXPECT_FALSE(load("", ", cache: { memory_bytes: 8MiB }"));  // top level only
  EXPECT_FALSE(load("cache: { memory_bytes: 1KiB }\n", ""));
}

}  // namespace
}  // namespace sluice::config
