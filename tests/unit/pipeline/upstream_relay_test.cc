// The forwarding filter (upstream_relay.h add_forwarded_headers): whatever a provider's
// forward_headers say, no header a caller protocol reads a gateway key from reaches the
// upstream.

#include "pipeline/upstream_relay.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../support/fake_head.h"
#include "protocol/registry.h"
#include "providers/registry.h"

namespace sluice::pipeline {
namespace {

// A mock provider with `patterns` as its forward_headers, set past config validation (as loose
// as it gets). The adapter points into `provider`, which must outlive it.
struct Forwarding {
  config::Provider provider;
  std::unique_ptr<providers::ProviderAdapter> adapter;
};

std::unique_ptr<Forwarding> forwarding(std::vector<std::string> patterns) {
  auto f = std::make_unique<Forwarding>();
  f->provider.id = "p";
  f->provider.adapter = "mock";
  f->provider.forward_headers = std::move(patterns);
  auto made = providers::make_adapter(f->provider);
  EXPECT_TRUE(made) << made.error().message();
  f->adapter = made ? std::move(*made) : nullptr;
  return f;
}

TEST(ForwardedHeaders, NoCredentialHeaderOfAnyCallerProtocolLeaves) {
  test::FakeHead::Fields headers = {{"x-goog-user-project", "proj-1"}, {"x-trace-me", "1"}};
  for (std::string_view name : protocol::credential_headers()) {
    headers.emplace_back(std::string(name), "sk-sluice-gateway-key");
    std::string upper(name);
    for (char& c : upper) {
      c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    }
    headers.emplace_back(upper, "sk-sluice-gateway-key");
  }
  const test::FakeHead head("/v1beta/models/m:generateContent", headers);
  for (const std::vector<std::string>& patterns :
       {std::vector<std::string>{"x-goog-*", "x-trace-*"}, std::vector<std::string>{"*"},
        std::vector<std::string>{"x-*", "a*"}}) {
    auto f = forwarding(patterns);
    ASSERT_TRUE(f->adapter);
    HeaderList out;
    add_forwarded_headers(head, *f->adapter, out);
    std::vector<std::string> names;
    for (const auto& [name, value] : out.view()) {
      EXPECT_NE(value, "sk-sluice-gateway-key") << name << " reached the upstream";
      names.emplace_back(name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"x-goog-user-project", "x-trace-me"}))
        << patterns.front();
  }
}

TEST(ForwardedHeaders, NamingACredentialHeaderIsRefusedWhenTheSnapshotIsBuilt) {
  for (std::string_view name : protocol::credential_headers()) {
    config::Provider p;
    p.id = "p";
    p.adapter = "mock";
    p.source = "test.yaml:3";
    p.forward_headers = {std::string(name)};
    auto made = providers::make_adapter(p);
    ASSERT_FALSE(made) << name;
    EXPECT_NE(made.error().message().find("never forwarded"), std::string::npos)
        << made.error().message();
  }
}

}  // namespace
}  // namespace sluice::pipeline
