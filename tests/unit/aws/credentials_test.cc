#include "aws/credentials.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <unistd.h>

// The credential chain in its order (config, environment, the profile's shared files), each
// step all or nothing, and errors that say where they looked without a secret in them.
namespace sluice::aws {
namespace {

struct Env {
  std::map<std::string, std::string, std::less<>> vars;
  EnvLookup lookup() const {
    return [this](std::string_view name) -> std::optional<std::string> {
      auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  }
};

class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice-aws-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    env_.vars["HOME"] = dir_.string();  // no ~/.aws of the machine's own user
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
  Env env_;
};

TEST_F(CredentialsTest, TheProvidersConfigComesFirstThenTheEnvironment) {
  env_.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env_.vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  env_.vars["AWS_SESSION_TOKEN"] = "envtoken";
  Result<FoundCredentials> configured = find_credentials(
      {.access_key_id = "AKIDCONF", .secret_access_key = "confsecret"}, env_.lookup());
  ASSERT_TRUE(configured.has_value());
  EXPECT_EQ(configured->source, "config");
  EXPECT_EQ(configured->credentials.access_key_id, "AKIDCONF");
  EXPECT_EQ(configured->credentials.session_token, "");

  Result<FoundCredentials> environment = find_credentials({}, env_.lookup());
  ASSERT_TRUE(environment.has_value());
  EXPECT_EQ(environment->source, "environment");
  EXPECT_EQ(environment->credentials.secret_access_key, "envsecret");
  EXPECT_EQ(environment->credentials.session_token, "envtoken");
}

TEST_F(CredentialsTest, HalfASetIsAnErrorThatNamesItsPlaceNeverTheNextPlacesKeys) {
  env_.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env_.vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  Result<FoundCredentials> half = find_credentials({.access_key_id = "AKIDCONF"}, env_.lookup());
  ASSERT_FALSE(half.has_value());
  EXPECT_NE(half.error().message().find("provider's config"), std::string::npos);

  env_.vars.erase("AWS_SECRET_ACCESS_KEY");
  Result<FoundCredentials> env_half = find_credentials({}, env_.lookup());
  ASSERT_FALSE(env_half.has_value());
  EXPECT_NE(env_half.error().message().find("environment"), std::string::npos);
}

TEST_F(CredentialsTest, AProfileIsReadFromTheCredentialsFileThenTheConfigFile) {
  write(".aws/credentials",
        "# comment\n[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = defsecret\n"
        "\n[prod]\n aws_access_key_id=AKIDPROD \r\naws_secret_access_key=prodsecret\n"
        "aws_session_token = prodtoken\n");
  write(".aws/config",
        "[profile staging]\naws_access_key_id = AKIDSTG\n"
        "aws_secret_access_key = stgsecret\nregion = eu-west-1\n");
  Result<FoundCredentials> def = find_credentials({}, env_.lookup());
  ASSERT_TRUE(def.has_value()) << def.error().message();
  EXPECT_EQ(def->credentials.access_key_id, "AKIDDEF");

  env_.vars["AWS_PROFILE"] = "prod";
  Result<FoundCredentials> prod = find_credentials({}, env_.lookup());
  ASSERT_TRUE(prod.has_value());
  EXPECT_EQ(prod->credentials.access_key_id, "AKIDPROD");
  EXPECT_EQ(prod->credentials.session_token, "prodtoken");
  EXPECT_NE(prod->source.find("[prod]"), std::string::npos);

  // The provider's own profile wins over AWS_PROFILE; the config file's "profile " section.
  Result<FoundCredentials> staging = find_credentials({.profile = "staging"}, env_.lookup());
  ASSERT_TRUE(staging.has_value());
  EXPECT_EQ(staging->credentials.access_key_id, "AKIDSTG");
  EXPECT_NE(staging->source.find("[profile staging]"), std::string::npos);
}

TEST_F(CredentialsTest, TheFilesMayBeElsewhereAndARoleOnlyProfileIsReported) {
  env_.vars["AWS_SHARED_CREDENTIALS_FILE"] = write("elsewhere/creds", "[default]\nrole_arn = x\n");
  Result<FoundCredentials> role = find_credentials({}, env_.lookup());
  ASSERT_FALSE(role.has_value());
  EXPECT_NE(role.error().message().find("role_arn"), std::string::npos);
}

TEST_F(CredentialsTest, TheInstanceMetadataServiceIsTheLastResort) {
  Result<FoundCredentials> imds = find_credentials({.profile = "nope"}, env_.lookup());
  ASSERT_TRUE(imds.has_value()) << imds.error().message();
  ASSERT_TRUE(imds->instance.has_value());
  EXPECT_EQ(imds->instance->endpoint, "http://169.254.169.254");
  env_.vars["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = "http://127.0.0.1:9/";
  imds = find_credentials({.profile = "nope"}, env_.lookup());
  ASSERT_TRUE(imds.has_value());
  EXPECT_EQ(imds->instance->endpoint, "http://127.0.0.1:9");
  env_.vars["AWS_ACCESS_KEY_ID"] = "AKID";
  env_.vars["AWS_SECRET_ACCESS_KEY"] = "secret";
  imds = find_credentials({}, env_.lookup());
  ASSERT_TRUE(imds.has_value());
  EXPECT_FALSE(imds->instance.has_value()) << "keys found earlier in the chain win";
}

TEST_F(CredentialsTest, NothingFoundSaysWhereItLooked) {
  env_.vars["AWS_EC2_METADATA_DISABLED"] = "TRUE";
  Result<FoundCredentials> none = find_credentials({.profile = "nope"}, env_.lookup());
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_NE(none.error().message().find("'nope'"), std::string::npos);
  EXPECT_NE(none.error().message().find(".aws/credentials"), std::string::npos);
  EXPECT_NE(none.error().message().find("AWS_EC2_METADATA_DISABLED"), std::string::npos);
}

TEST(ReadProfileTest, SectionsAndKeysAsWritten) {
  const std::string text =
      "[a]\naws_access_key_id=1\n[b]\n;c\naws_access_key_id = 2\n[a]\n"
      "aws_secret_access_key=3\n";
  std::optional<ProfileKeys> a = read_profile(text, "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->access_key_id, "1");
  EXPECT_EQ(a->secret_access_key, "3") << "a section given twice is one";
  EXPECT_EQ(read_profile(text, "b")->access_key_id, "2");
  EXPECT_FALSE(read_profile(text, "c").has_value());
  EXPECT_FALSE(read_profile(text, "A").has_value()) << "names are case-sensitive";
}

TEST_F(CredentialsTest, AWebIdentityRoleComesAfterTheEnvironmentsKeysAndBeforeProfiles) {
  env_.vars["AWS_ROLE_ARN"] = "arn:aws:iam::1:role/r";
  env_.vars["AWS_WEB_IDENTITY_TOKEN_FILE"] = "/var/run/secrets/token";
  env_.vars["AWS_SHARED_CREDENTIALS_FILE"] =
      write("creds", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = s\n");
  Result<FoundCredentials> role = find_credentials({}, env_.lookup());
  ASSERT_TRUE(role) << role.error().message();
  ASSERT_TRUE(role->web_identity);
  EXPECT_EQ(role->web_identity->role_arn, "arn:aws:iam::1:role/r");
  EXPECT_EQ(role->web_identity->token_file, "/var/run/secrets/token");
  EXPECT_EQ(role->web_identity->session_name, "sluice");
  EXPECT_TRUE(role->credentials.access_key_id.empty());

  // Keys in the environment win over the role, as in the AWS SDKs.
  env_.vars["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env_.vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  Result<FoundCredentials> keys = find_credentials({}, env_.lookup());
  ASSERT_TRUE(keys);
  EXPECT_FALSE(keys->web_identity);
  EXPECT_EQ(keys->credentials.access_key_id, "AKIDENV");

  // The provider's own role comes before both, with the environment's token file.
  Result<FoundCredentials> configured = find_credentials(
      {.role_arn = "arn:aws:iam::1:role/mine", .role_session_name = "gw"}, env_.lookup());
  ASSERT_TRUE(configured && configured->web_identity);
  EXPECT_EQ(configured->web_identity->role_arn, "arn:aws:iam::1:role/mine");
  EXPECT_EQ(configured->web_identity->session_name, "gw");
}

TEST_F(CredentialsTest, AProfilesRoleWithATokenFileIsAWebIdentity) {
  env_.vars["AWS_CONFIG_FILE"] = write("config",
                                       "[profile eks]\nrole_arn = arn:aws:iam::1:role/p\n"
                                       "web_identity_token_file = /t\nrole_session_name = s1\n");
  Result<FoundCredentials> found = find_credentials({.profile = "eks"}, env_.lookup());
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(found->web_identity);
  EXPECT_EQ(found->web_identity->token_file, "/t");
  EXPECT_EQ(found->web_identity->session_name, "s1");
  EXPECT_NE(found->source.find("web identity"), std::string::npos);
}

}  // namespace
}  // namespace sluice::aws
