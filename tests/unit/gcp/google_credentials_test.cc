#include "gcp/google_credentials.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "codec/base64.h"
#include "codec/percent.h"

namespace sluice::gcp {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

// A fresh 2048-bit RSA key pair, PEM: {private (PKCS#8), public (SPKI)}.
std::pair<std::string, std::string> make_rsa_key() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  auto pem = [](auto write) {
    BIO* bio = BIO_new(BIO_s_mem());
    write(bio);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return out;
  };
  std::string priv =
      pem([&](BIO* b) { PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
  std::string pub = pem([&](BIO* b) { PEM_write_bio_PUBKEY(b, key); });
  EVP_PKEY_free(key);
  return {priv, pub};
}

bool verifies(std::string_view public_pem, std::string_view jws) {
  const std::size_t dot = jws.rfind('.');
  const auto signature = codec::decode_base64(jws.substr(dot + 1));
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = signature && key != nullptr &&
                  EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
                  EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature->data()),
                                   signature->size(),
                                   reinterpret_cast<const unsigned char*>(jws.data()), dot) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

boost::json::object part(std::string_view jws, int index) {
  std::size_t begin = 0;
  for (int i = 0; i < index; ++i) {
    begin = jws.find('.', begin) + 1;
  }
  const std::size_t end = jws.find('.', begin);
  return boost::json::parse(*codec::decode_base64(jws.substr(begin, end - begin))).as_object();
}

std::string form_value(std::string_view form, std::string_view name) {
  const std::string key = std::string(name) + "=";
  std::size_t at = form.starts_with(key) ? 0 : form.find("&" + key);
  if (at == std::string_view::npos) {
    return {};
  }
  at = form.find('=', at) + 1;
  return codec::percent_decode(form.substr(at, form.find('&', at) - at), true);
}

std::string service_account_json(const std::string& private_key) {
  boost::json::object o{{"type", "service_account"},
                        {"project_id", "p-1"},
                        {"private_key_id", "kid-7"},
                        {"private_key", private_key},
                        {"client_email", "gw@p-1.iam.gserviceaccount.com"},
                        {"token_uri", "https://oauth2.example.test/token"}};
  return boost::json::serialize(o);
}

TEST(GoogleCredentialsTest, AServiceAccountsAssertionIsSignedRs256WithGooglesClaims) {
  const auto [priv, pub] = make_rsa_key();
  auto credentials = parse_credentials(service_account_json(priv), "sa.json");
  ASSERT_TRUE(credentials) << credentials.error().message();
  EXPECT_EQ(credentials->project_id(), "p-1");
  auto requester = TokenRequester::make(std::move(*credentials));
  ASSERT_TRUE(requester);
  const system_clock::time_point now{seconds(1'700'000'000)};
  auto request = requester->request(now);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->url, "https://oauth2.example.test/token");
  EXPECT_EQ(form_value(request->form, "grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
  const std::string jws = form_value(request->form, "assertion");
  EXPECT_TRUE(verifies(pub, jws));
  const auto header = part(jws, 0);
  EXPECT_EQ(header.at("alg"), "RS256");
  EXPECT_EQ(header.at("typ"), "JWT");
  EXPECT_EQ(header.at("kid"), "kid-7");
  const auto claims = part(jws, 1);
  EXPECT_EQ(claims.at("iss"), "gw@p-1.iam.gserviceaccount.com");
  EXPECT_EQ(claims.at("aud"), "https://oauth2.example.test/token");
  EXPECT_EQ(claims.at("scope").as_string(), kCloudPlatformScope);
  EXPECT_EQ(claims.at("iat").as_int64(), 1'700'000'000);
  EXPECT_EQ(claims.at("exp").as_int64(), 1'700'003'600);

  // Another key's public half does not verify it: the signature is the key's, not a checksum.
  EXPECT_FALSE(verifies(make_rsa_key().second, jws));
}

TEST(GoogleCredentialsTest, AnAuthorizedUserSendsItsRefreshToken) {
  auto credentials = parse_credentials(
      R"({"type":"authorized_user","client_id":"cid","client_secret":"cs&=","refresh_token":"1//rt"})",
      "adc.json");
  ASSERT_TRUE(credentials) << credentials.error().message();
  auto request = TokenRequester::make(std::move(*credentials))->request(system_clock::now());
  ASSERT_TRUE(request);
  EXPECT_EQ(request->url, kDefaultTokenUri);
  EXPECT_EQ(form_value(request->form, "grant_type"), "refresh_token");
  EXPECT_EQ(form_value(request->form, "client_secret"), "cs&=");  // encoded, read back whole
  EXPECT_EQ(form_value(request->form, "refresh_token"), "1//rt");
}

TEST(GoogleCredentialsTest, UnusableFilesSayWhyAndWhere) {
  auto other = parse_credentials(R"({"type":"external_account"})", "wif.json");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message().find("wif.json"), std::string::npos);
  EXPECT_NE(other.error().message().find("external_account"), std::string::npos);
  auto bad_key = parse_credentials(
      R"({"type":"service_account","client_email":"a@b","private_key":"not a key"})", "sa.json");
  ASSERT_FALSE(bad_key);
  EXPECT_NE(bad_key.error().message().find("private_key"), std::string::npos);
  auto none = find_credentials("", [](std::string_view) { return std::nullopt; });
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("GOOGLE_APPLICATION_CREDENTIALS"), std::string::npos);
}

TEST(GoogleCredentialsTest, TheMetadataServerIsAGetOfTheWorkloadsOwnToken) {
  const auto no_env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  auto named = find_credentials("", no_env, "metadata.google.internal");
  ASSERT_TRUE(named) << named.error().message();
  auto request = TokenRequester::make(std::move(*named))->request(system_clock::now());
  ASSERT_TRUE(request);
  EXPECT_TRUE(request->metadata);
  EXPECT_EQ(request->url,
            "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/"
            "default/token");
  EXPECT_EQ(request->form, "") << "nothing of the workload's is sent";

  // GCE_METADATA_HOST (Google's client libraries' variable) is the last resort of ADC.
  const auto env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "GCE_METADATA_HOST") {
      return std::string("127.0.0.1:8080");
    }
    return std::nullopt;
  };
  auto from_env = find_credentials("", env);
  ASSERT_TRUE(from_env) << from_env.error().message();
  EXPECT_EQ(from_env->token_uri(),
            "http://127.0.0.1:8080/computeMetadata/v1/instance/service-accounts/default/token");
  EXPECT_EQ(from_env->project_id(), "");
  // A configured file wins over the metadata server.
  auto file = find_credentials("/nonexistent/sa.json", env, "metadata.google.internal");
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message().find("/nonexistent/sa.json"), std::string::npos);
}

TEST(GoogleCredentialsTest, TokenAnswersAndRefusals) {
  const system_clock::time_point now{seconds(100)};
  auto token = parse_token_answer(
      200, R"({"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"})", now);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->token, "ya29.x");
  EXPECT_EQ(token->expires, now + seconds(3599));
  auto refused = parse_token_answer(
      400, R"({"error":"invalid_grant","error_description":"Invalid JWT Signature."})", now);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "token_refused");
  EXPECT_NE(refused.error().message().find("invalid_grant: Invalid JWT Signature."),
            std::string::npos);
  EXPECT_FALSE(parse_token_answer(200, R"({"expires_in":3599})", now));
  EXPECT_FALSE(parse_token_answer(200, R"({"access_token":"t","expires_in":0})", now));
}

}  // namespace
}  // namespace sluice::gcp
