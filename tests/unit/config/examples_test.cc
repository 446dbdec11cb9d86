// Every file in examples/ must load. The environment is empty, so providers guarded by
// requires_env are skipped and every ${VAR:-default} takes its default: an example must
// work for someone who has set nothing.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "providers/registry.h"

namespace sluice::config {
namespace {

LoadOptions empty_env() {
  LoadOptions options;
  options.adapters = providers::adapter_schemas();
  options.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  return options;
}

std::vector<std::filesystem::path> example_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(SLUICE_SOURCE_DIR "/examples")) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ExamplesTest, EveryExampleLoadsWithAnEmptyEnvironment) {
  const std::vector<std::filesystem::path> files = example_files();
  ASSERT_GE(files.size(), 3u) << "expected quickstart, openai-compatible and production";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    auto result = load_from_file(path.string(), empty_env());
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_FALSE((*result)->providers.empty());
    EXPECT_FALSE((*result)->routes.empty());
  }
}

TEST(ExamplesTest, QuickstartSkipsRealProvidersWithoutKeys) {
  auto result = load_from_file(SLUICE_SOURCE_DIR "/examples/quickstart.yaml", empty_env());
  ASSERT_TRUE(result) << result.error().message();
  const Config& config = **result;
  EXPECT_EQ(config.listen.host, "127.0.0.1");
  EXPECT_EQ(config.listen.port, 8080);
  std::vector<std::string> provider_ids;
  for (const auto& provider : config.providers) {
    provider_ids.push_back(provider.id);
    EXPECT_EQ(provider.adapter, "mock") << provider.id;
  }
  EXPECT_EQ(provider_ids, (std::vector<std::string>{"mock", "mock-anthropic", "mock-gemini"}));
  ASSERT_EQ(config.routes.size(), 4u);
  EXPECT_EQ(config.routes[0].aliases, (std::vector<std::string>{"mock-chat", "gpt-mock"}));
  EXPECT_EQ(config.routes[3].kind, RouteKind::kEmbeddings);
  EXPECT_EQ(config.notes,
            (std::vector<std::string>{
                "provider openai skipped: OPENAI_API_KEY is not set",
                "provider anthropic skipped: ANTHROPIC_API_KEY is not set",
                "provider gemini skipped: GEMINI_API_KEY is not set",
                "provider bedrock skipped: AWS_ACCESS_KEY_ID is not set, AWS_REGION is not set",
                "provider vertex skipped: GOOGLE_APPLICATION_CREDENTIALS is not set, "
                "GOOGLE_CLOUD_PROJECT is not set",
                "route gpt-4o-mini skipped: provider openai disabled (OPENAI_API_KEY not set)",
                "route text-embedding-3-small skipped: provider openai disabled (OPENAI_API_KEY "
                "not set)",
                "route claude-sonnet-4-5 skipped: provider anthropic disabled (ANTHROPIC_API_KEY "
                "not set)",
                "route gemini-2.5-flash skipped: provider gemini disabled (GEMINI_API_KEY not "
                "set)",
                "route bedrock-claude-sonnet-4 skipped: provider bedrock disabled "
                "(AWS_ACCESS_KEY_ID not set, AWS_REGION not set)",
                "route vertex-gemini-2.5-flash skipped: provider vertex disabled "
                "(GOOGLE_APPLICATION_CREDENTIALS not set, GOOGLE_CLOUD_PROJECT not set)"}));
  ASSERT_EQ(config.keys.size(), 1u);
  // printf %s sk-sluice-dev-0000000000 | sha256sum
  EXPECT_EQ(config.keys[0].sha256_hex,
            "28e1582fa5996de81aead655a4dc796e1ca056aa5be0dc7e7c22e9c090787942");
}

TEST(ExamplesTest, QuickstartWithKeyEnablesOpenAIOnly) {
  LoadOptions options;
  options.adapters = providers::adapter_schemas();
  options.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "OPENAI_API_KEY") {
      return "sk-test";
    }
    return std::nullopt;
  };
  auto result = load_from_file(SLUICE_SOURCE_DIR "/examples/quickstart.yaml", options);
  ASSERT_TRUE(result) << result.error().message();
  const Config& config = **result;
  ASSERT_EQ(config.providers.size(), 4u);
  EXPECT_EQ(config.providers[3].adapter, "openai");
  EXPECT_EQ(config.providers[3].base_url, "");  // the adapter's default
  EXPECT_EQ(config.providers[3].api_key, "sk-test");
  EXPECT_EQ(config.routes.size(), 6u);
  // anthropic, gemini, bedrock and vertex, and their routes
  EXPECT_EQ(config.notes.size(), 8u);
}

}  // namespace
}  // namespace sluice::config
