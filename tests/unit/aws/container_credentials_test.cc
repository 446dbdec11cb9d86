#include "aws/container_credentials.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace sluice::aws {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(ContainerCredentials, TheEnvironmentNamesTheEndpointAndItsToken) {
  auto ecs =
      container_endpoint(env_of({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds/x"}}));
  ASSERT_TRUE(ecs && *ecs);
  EXPECT_EQ((*ecs)->url, "http://169.254.170.2/v2/creds/x");
  auto pod_identity = container_endpoint(
      env_of({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.23/v1/credentials"},
              {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/var/run/token"}}));
  ASSERT_TRUE(pod_identity && *pod_identity);
  EXPECT_EQ((*pod_identity)->url, "http://169.254.170.23/v1/credentials");
  EXPECT_EQ((*pod_identity)->authorization_file, "/var/run/token");
  auto token =
      container_endpoint(env_of({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/c"},
                                 {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "t0k"}}));
  ASSERT_TRUE(token && *token);
  EXPECT_EQ((*token)->authorization, "t0k");
  auto none = container_endpoint(env_of({}));
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST(ContainerCredentials, PlainHttpToAnyOtherHostIsRefusedSoTheTokenStaysHome) {
  for (std::string url : {"http://evil.example.com/creds", "http://169.254.170.24/creds",
                          "http://127.0.0.1.evil.example/x", "ftp://127.0.0.1/x"}) {
    auto refused = container_endpoint(env_of({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", url}}));
    EXPECT_FALSE(refused) << url;
  }
  for (std::string url : {"https://creds.example.com/x", "http://localhost:8080/x",
                          "http://[fd00:ec2::23]/v1/credentials", "http://[::1]:9/x"}) {
    auto accepted = container_endpoint(env_of({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", url}}));
    EXPECT_TRUE(accepted && *accepted) << url;
  }
}

TEST(ContainerCredentials, ReadsTheKeysAndWhenTheyExpire) {
  auto keys = parse_container_answer(
      200,
      R"({"AccessKeyId":"ASIAX","SecretAccessKey":"s","Token":"t","Expiration":"2026-12-04T20:00:00Z","RoleArn":"r"})");
  ASSERT_TRUE(keys) << keys.error().message();
  EXPECT_EQ(keys->credentials.access_key_id, "ASIAX");
  EXPECT_EQ(keys->credentials.secret_access_key, "s");
  EXPECT_EQ(keys->credentials.session_token, "t");
  EXPECT_EQ(std::chrono::system_clock::to_time_t(keys->expires), 1796414400);
  auto refused = parse_container_answer(403, R"({"Code":"AccessDeniedException","Message":"no"})");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "AccessDeniedException");
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUpstreamStatus);
  for (std::string_view body : {R"({"AccessKeyId":"A","SecretAccessKey":"s"})", "[]", "x"}) {
    auto bad = parse_container_answer(200, body);
    ASSERT_FALSE(bad) << body;
    EXPECT_EQ(bad.error().kind(), ErrorKind::kUpstreamProtocol) << body;
  }
}

}  // namespace
}  // namespace sluice::aws
