#include "aws/instance_metadata.h"

#include <gtest/gtest.h>

namespace sluice::aws {
namespace {

TEST(InstanceMetadata, TheRoleIsTheListingsFirstLine) {
  EXPECT_EQ(first_role("sluice-bedrock\n"), "sluice-bedrock");
  EXPECT_EQ(first_role("a-role \r\nanother"), "a-role");
  EXPECT_EQ(first_role(""), "");
}

TEST(InstanceMetadata, ARoleAnswerOtherThanSuccessIsARefusal) {
  auto keys = parse_instance_answer(
      200, R"({"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIA1","SecretAccessKey":"s",
               "Token":"t","Expiration":"2026-12-04T20:00:00Z"})");
  ASSERT_TRUE(keys) << keys.error().message();
  EXPECT_EQ(keys->credentials.access_key_id, "ASIA1");
  auto refused = parse_instance_answer(
      200, R"({"Code":"AssumeRoleUnauthorizedAccess","AccessKeyId":"","SecretAccessKey":""})");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "AssumeRoleUnauthorizedAccess");
}

TEST(InstanceMetadata, DisabledSkipsTheStep) {
  const auto env = [](std::string_view name) -> std::optional<std::string> {
    return name == "AWS_EC2_METADATA_DISABLED" ? std::optional<std::string>("true") : std::nullopt;
  };
  EXPECT_FALSE(instance_metadata(env));
}

}  // namespace
}  // namespace sluice::aws
