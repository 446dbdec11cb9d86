#include <gtest/gtest.h>

#include "config/config.h"
#include "providers/registry.h"

// The `guardrails:` section and a route's `guardrails:`: what loads, and each mistake refused
// with its place in the file.
namespace sluice::config {
namespace {

Result<std::shared_ptr<const Config>> load(const std::string& top, const std::string& route) {
  const std::string yaml = "version: 1\nauth: none\n" + top +
                           "providers:\n  - { id: p, adapter: mock }\n"
                           "routes:\n  - { alias: a, provider: p, model: m" +
                           route + " }\n";
  LoadOptions options;
  options.adapters = providers::adapter_schemas();
  options.getenv = [](const std::string&) { return std::optional<std::string>(); };
  return load_from_string(yaml, "test.yaml", options);
}

std::string error_of(const std::string& top, const std::string& route) {
  auto config = load(top, route);
  return config ? "" : config.error().message();
}

TEST(GuardrailsConfigTest, PoliciesAndWhereTheyApply) {
  auto config = load(
      "guardrails:\n"
      "  apply: [secrets]\n"
      "  key_groups: { contractors: [pii, secrets] }\n"
      "  policies:\n"
      "    - name: secrets\n"
      "      detectors: [{ builtin: secrets }]\n"
      "    - name: pii\n"
      "      direction: both\n"
      "      hold_back_chars: 32\n"
      "      hold_back_ms: 150\n"
      "      block_status: 446\n"
      "      uninspected: block\n"
      "      detectors:\n"
      "        - { builtin: email, action: redact }\n"
      "        - { regex: 'INC-\\d+', name: incident, action: flag, case_insensitive: true }\n"
      "        - { keywords: [falcon, 'project x'], name: codename }\n",
      ", guardrails: pii");
  ASSERT_TRUE(config) << config.error().message();
  const GuardrailsConfig& g = (*config)->guardrails;
  ASSERT_EQ(g.policies.size(), 2u);
  EXPECT_EQ(g.apply, std::vector<std::string>{"secrets"});
  EXPECT_EQ(g.policies[0].detectors[0].action, GuardrailAction::kBlock) << "the default";
  const GuardrailPolicy& pii = g.policies[1];
  EXPECT_EQ(pii.block_status, 446);
  EXPECT_TRUE(pii.input && pii.output);
  EXPECT_EQ(pii.hold_back_chars, 32u);
  EXPECT_EQ(pii.hold_back_ms, 150u);
  EXPECT_EQ(g.policies[0].hold_back_ms, 0u) << "no time bound by default";
  EXPECT_TRUE(g.policies[0].input && !g.policies[0].output) << "input by default";
  EXPECT_EQ(pii.uninspected, GuardrailAction::kBlock);
  ASSERT_EQ(pii.detectors.size(), 3u);
  EXPECT_EQ(pii.detectors[1].kind, GuardrailDetector::Kind::kRegex);
  EXPECT_EQ(pii.detectors[1].pattern, "INC-\\d+");
  EXPECT_TRUE(pii.detectors[1].case_insensitive);
  EXPECT_EQ(pii.detectors[2].words, (std::vector<std::string>{"falcon", "project x"}));
  EXPECT_EQ((*config)->routes[0].guardrails, std::vector<std::string>{"pii"});
  ASSERT_EQ(g.key_groups.size(), 1u);
  auto checked = load(
      "guardrails:\n"
      "  policies:\n"
      "    - name: ext\n"
      "      detectors:\n"
      "        - name: presidio\n"
      "          external: { provider: p, format: presidio, path: /v2/analyze, min_score: 70,\n"
      "                      timeout_ms: 250, on_error: allow, language: de }\n",
      "");
  ASSERT_TRUE(checked) << checked.error().message();
  const GuardrailDetector& ext = (*checked)->guardrails.policies[0].detectors[0];
  EXPECT_EQ(ext.kind, GuardrailDetector::Kind::kExternal);
  EXPECT_EQ(ext.external.provider, "p");
  EXPECT_EQ(ext.external.format, ExternalChecker::Format::kPresidio);
  EXPECT_EQ(ext.external.path, "/v2/analyze");
  EXPECT_DOUBLE_EQ(ext.external.min_score, 0.7);
  EXPECT_EQ(ext.external.timeout, std::chrono::milliseconds(250));
  EXPECT_TRUE(ext.external.fail_open);
  EXPECT_EQ(ext.external.language, "de");
  EXPECT_EQ(ext.action, GuardrailAction::kBlock);
  EXPECT_EQ(g.key_groups[0].first, "contractors");
  EXPECT_EQ(g.key_groups[0].second, (std::vector<std::string>{"pii", "secrets"}));
}

TEST(GuardrailsConfigTest, MistakesAreRefusedWhereTheyAre) {
  const std::string policies = "guardrails:\n  policies:\n    - { name: p, detectors: [";
  EXPECT_NE(error_of("", ", guardrails: [nope]").find("no guardrail policy named \"nope\""),
            std::string::npos);
  EXPECT_NE(
      error_of(policies + "{ builtin: email, regex: x, name: y }] }\n", "").find("exactly one of"),
      std::string::npos);
  EXPECT_NE(error_of(policies + "{ regex: x }] }\n", "").find("needs a `name:`"),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ builtin: email, action: mask }] }\n", "")
                .find("expected \"block\", \"redact\", \"pseudonymise\" or \"flag\""),
            std::string::npos);
  EXPECT_NE(
      error_of(policies + "{ builtin: email }], block_status: 500 }\n", "").find("test.yaml:"),
      std::string::npos);
  EXPECT_NE(error_of(policies + "{ keywords: [] , name: k }] }\n", "").find("empty"),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ builtin: email }] }\n    - { name: p, detectors: [{ builtin: "
                                "jwt }] }\n",
                     "")
                .find("a second policy named \"p\""),
            std::string::npos);
  EXPECT_NE(error_of("guardrails: { apply: [missing] }\n", "").find("missing"), std::string::npos);
  EXPECT_NE(error_of("guardrails: { key_groups: { g: [missing] } }\n", "")
                .find("no guardrail policy named \"missing\""),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ builtin: email }], direction: out }\n", "")
                .find("expected \"input\", \"output\" or \"both\""),
            std::string::npos);
  EXPECT_NE(
      error_of(policies + "{ builtin: email, action: pseudonymise }], direction: both }\n", "")
          .find("pseudonymise works on requests"),
      std::string::npos);
  EXPECT_NE(error_of(policies + "{ external: { provider: x }, name: c, action: redact }] }\n", "")
                .find("an external checker flags or blocks"),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ external: { provider: x, format: lakera }, name: c }] }\n", "")
                .find("expected \"presidio\", \"openai_moderation\" or \"generic\""),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ external: { provider: x, mode: parallel }, name: c }], "
                                "direction: output }\n",
                     "")
                .find("`mode: parallel` runs beside the upstream call"),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ builtin: email }], hold_back_ms: 100 }\n", "")
                .find("hold_back_ms bounds the hold-back of answers"),
            std::string::npos);
  EXPECT_NE(error_of(policies + "{ external: { provider: x, mode: eager }, name: c }] }\n", "")
                .find("expected \"sequential\""),
            std::string::npos);
  EXPECT_NE(
      error_of(policies + "{ external: { format: generic }, name: c }] }\n", "").find("provider"),
      std::string::npos);
  EXPECT_NE(error_of(policies + "{ builtin: email }], uninspected: pseudonymize }\n", "")
                .find("images and files cannot be redacted"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::config
