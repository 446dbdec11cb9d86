#include "aws/web_identity.h"

#include <gtest/gtest.h>

// STS's AssumeRoleWithWebIdentity: the form the gateway posts, and the XML answers it reads.
namespace sluice::aws {
namespace {

using std::chrono::system_clock;

// The shape of STS's answer as its API reference shows it (values made up here).
constexpr std::string_view kAnswer =
    "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
    "  <AssumeRoleWithWebIdentityResult>\n"
    "    "
    "<SubjectFromWebIdentityToken>system:serviceaccount:ai:sluice</SubjectFromWebIdentityToken>\n"
    "    <Credentials>\n"
    "      <SessionToken>FwoGZXIvYXdzE&amp;token/+=</SessionToken>\n"
    "      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>\n"
    "      <Expiration>2026-12-04T13:34:41Z</Expiration>\n"
    "      <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>\n"
    "    </Credentials>\n"
    "  </AssumeRoleWithWebIdentityResult>\n"
    "</AssumeRoleWithWebIdentityResponse>\n";

TEST(WebIdentityTest, TheFormNamesTheRoleSessionAndTokenEncoded) {
  const WebIdentity identity{"arn:aws:iam::123456789012:role/r", "/t", "sluice gw"};
  EXPECT_EQ(assume_role_form(identity, "a.b+c/d"),
            "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A"
            "123456789012%3Arole%2Fr&RoleSessionName=sluice%20gw&WebIdentityToken=a.b%2Bc%2Fd&"
            "DurationSeconds=3600");
  EXPECT_EQ(sts_endpoint("eu-west-1", ""), "https://sts.eu-west-1.amazonaws.com/");
  EXPECT_EQ(sts_endpoint("eu-west-1", "http://127.0.0.1:9/"), "http://127.0.0.1:9/");
}

TEST(WebIdentityTest, TheAnswersKeysAndExpiry) {
  auto keys = parse_assume_role_answer(200, kAnswer);
  ASSERT_TRUE(keys) << keys.error().message();
  EXPECT_EQ(keys->credentials.access_key_id, "ASIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(keys->credentials.secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY");
  EXPECT_EQ(keys->credentials.session_token, "FwoGZXIvYXdzE&token/+=");
  EXPECT_EQ(system_clock::to_time_t(keys->expires), 1796391281);  // 2026-12-04T13:34:41Z
}

TEST(WebIdentityTest, ARefusalKeepsStssCodeAndMessage) {
  auto refused = parse_assume_role_answer(
      400,
      "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
      "<Message>No OpenIDConnect provider found</Message></Error></ErrorResponse>");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "InvalidIdentityToken");
  EXPECT_NE(refused.error().message().find("No OpenIDConnect provider found"), std::string::npos);
  EXPECT_FALSE(parse_assume_role_answer(200, "<AssumeRoleWithWebIdentityResponse/>"));
}

}  // namespace
}  // namespace sluice::aws
