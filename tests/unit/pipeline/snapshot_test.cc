#include "pipeline/snapshot.h"

#include <gtest/gtest.h>

#include "providers/registry.h"

namespace sluice::pipeline {
namespace {

std::shared_ptr<const Snapshot> build(const std::string& yaml) {
  config::LoadOptions opts;
  opts.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto cfg = providers::load_config_string(yaml, "test.yaml", opts);
  EXPECT_TRUE(cfg.has_value()) << (cfg ? "" : cfg.error().message());
  auto snap = Snapshot::build(*cfg);
  EXPECT_TRUE(snap.has_value());
  return *snap;
}

constexpr const char* kConfig = R"(
version: 3
listen: 127.0.0.1:0
providers:
  - id: mock
    adapter: mock
  - id: up
    adapter: openai
    base_url: http://127.0.0.1:9/v1
    api_key: sk-provider-secret-1234
routes:
  - alias: [a, b]
    provider: mock
    model: mock-1
  - alias: c
    provider: up
    model: gpt-x
    timeout: { first_byte_ms: 5 }
keys:
  - name: all
    key: sk-test-all-0000000000
  - name: only-a
    key: sk-test-only-a-00000000
    models: [a]
)";

TEST(Snapshot, AuthenticatesByHashedKey) {
  auto snap = build(kConfig);
  ASSERT_NE(snap->authenticate("sk-test-all-0000000000"), nullptr);
  EXPECT_EQ(snap->authenticate("sk-test-all-0000000000")->name, "all");
  EXPECT_EQ(snap->authenticate("sk-test-all-0000000001"), nullptr);
  EXPECT_EQ(snap->authenticate(""), nullptr);
  EXPECT_EQ(snap->authenticate(std::string(5000, 'x')), nullptr);
  const auto hash = sha256_hex("abc");
  EXPECT_EQ(std::string_view(hash.data(), hash.size()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Snapshot, KeyAllowListsLimitAliases) {
  auto snap = build(kConfig);
  const config::Key* only_a = snap->authenticate("sk-test-only-a-00000000");
  ASSERT_NE(only_a, nullptr);
  EXPECT_TRUE(Snapshot::key_allows(only_a, "a"));
  EXPECT_FALSE(Snapshot::key_allows(only_a, "b"));
  auto aliases = snap->aliases_for(only_a);
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0], "a");
  EXPECT_EQ(snap->aliases_for(snap->authenticate("sk-test-all-0000000000")).size(), 3u);
}

TEST(Snapshot, RoutesCarryProviderHeadersAndMergedTimeouts) {
  auto snap = build(kConfig);
  const RouteRuntime* c = snap->find_route("c");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->targets.size(), 1u);
  const TargetRuntime& t = c->targets.front();
  EXPECT_EQ(t.model, "gpt-x");
  EXPECT_EQ(t.timeouts.first_byte.count(), 5);
  EXPECT_EQ(t.timeouts.connect.count(), 2000);  // inherited from the provider defaults
  EXPECT_EQ(t.path, "");                        // the whole tree
  ASSERT_NE(t.health, nullptr);
  const providers::ProviderAdapter& adapter = *t.provider->adapter;
  ASSERT_NE(adapter.endpoint(), nullptr);
  EXPECT_EQ(adapter.endpoint()->port, 9);
  std::string head;
  codec::HeadWriter writer(head);
  providers::RequestSpec spec;
  spec.model = "gpt-x";
  spec.content_length = 2;
  adapter.write_request_head(spec, "{}", writer);
  EXPECT_NE(head.find("\r\nAuthorization: Bearer sk-provider-secret-1234\r\n"), std::string::npos)
      << head;
  EXPECT_EQ(head.rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_EQ(snap->find_route("a")->targets.front().provider->adapter->endpoint(),
            nullptr);  // in-process
  EXPECT_EQ(snap->find_route("missing"), nullptr);
  EXPECT_EQ(snap->version(), 3u);
}

}  // namespace
}  // namespace sluice::pipeline
