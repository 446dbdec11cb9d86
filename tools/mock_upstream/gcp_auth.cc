#include "gcp_auth.h"

#include <boost/json/value.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "codec/base64.h"
#include "codec/json_read.h"
#include "codec/percent.h"
#include "core/result.h"
#include "core/text_file.h"
#include "gcp/google_credentials.h"

namespace sluice::mock {
namespace json = boost::json;
using std::chrono::system_clock;

struct GcpAuth::Key {
  EVP_PKEY* pkey = nullptr;
  ~Key() { EVP_PKEY_free(pkey); }
};

namespace {

constexpr std::string_view kJwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer";

Reply json_reply(int status, std::string body) {
  Reply r = body_reply(std::move(body));
  r.status = status;
  return r;
}

Reply refusal(std::string_view description) {
  std::string body = R"({"error":"invalid_grant","error_description":")";
  body.append(description).append("\"}");
  return json_reply(400, std::move(body));
}

std::int64_t unix_now(system_clock::time_point now) {
  return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
}

std::optional<std::int64_t> int_member(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr || !v->is_number()) {
    return std::nullopt;
  }
  return v->is_int64() ? v->get_int64() : static_cast<std::int64_t>(v->to_number<double>());
}

std::string string_member(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

GcpAuth::GcpAuth(GcpAuthConfig config, std::string client_email, std::unique_ptr<Key> key)
    : config_(std::move(config)), client_email_(std::move(client_email)), key_(std::move(key)) {}
GcpAuth::~GcpAuth() = default;

Result<std::unique_ptr<GcpAuth>> GcpAuth::load(const GcpAuthConfig& config) {
  auto text = read_text_file(config.service_account_file);
  if (!text) {
    return std::move(text).error();
  }
  auto credentials = gcp::parse_credentials(*text, config.service_account_file);
  if (!credentials) {
    return std::move(credentials).error();
  }
  const auto* account = std::get_if<gcp::ServiceAccountKey>(&credentials->identity);
  if (account == nullptr) {
    return Error(ErrorKind::kBadRequest, "--gcp-service-account: not a service account key");
  }
  auto key = std::make_unique<Key>();
  BIO* bio =
      BIO_new_mem_buf(account->private_key.data(), static_cast<int>(account->private_key.size()));
  key->pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key->pkey == nullptr) {
    return Error(ErrorKind::kBadRequest, "--gcp-service-account: unreadable private_key");
  }
  return std::unique_ptr<GcpAuth>(new GcpAuth(config, account->client_email, std::move(key)));
}

std::optional<std::string> GcpAuth::refuse_assertion(const MockRequest& request,
                                                     std::string_view assertion,
                                                     system_clock::time_point now) const {
  const std::size_t dot1 = assertion.find('.');
  const std::size_t dot2 = dot1 == std::string_view::npos ? dot1 : assertion.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) {
    return "Invalid JWT: not a compact JWS.";
  }
  auto header = codec::decode_base64(assertion.substr(0, dot1));
  auto claims = codec::decode_base64(assertion.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = codec::decode_base64(assertion.substr(dot2 + 1));
  if (!header || !claims || !signature) {
    return "Invalid JWT: bad base64url.";
  }
  boost::system::error_code ec;
  json::value h = codec::parse_json(*header, ec);
  if (ec || !h.is_object() || string_member(h.get_object(), "alg") != "RS256") {
    return "Invalid JWT: alg must be RS256.";
  }
  const std::string_view signed_part = assertion.substr(0, dot2);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool valid =
      ctx != nullptr &&
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key_->pkey) == 1 &&
      EVP_DigestVerify(
          ctx, reinterpret_cast<const unsigned char*>(signature->data()), signature->size(),
          reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!valid) {
    return "Invalid JWT Signature.";
  }
  json::value c = codec::parse_json(*claims, ec);
  if (ec || !c.is_object()) {
    return "Invalid JWT: claims are not an object.";
  }
  const json::object& o = c.get_object();
  if (string_member(o, "iss") != client_email_) {
    return "Invalid JWT: iss is not the service account.";
  }
  const std::string expected_aud = "http://" +
                                   std::string(find_header(request.headers, "host").value_or("")) +
                                   std::string(path_of(request.target));
  if (string_member(o, "aud") != expected_aud) {
    return "Invalid JWT: aud must be " + expected_aud + ".";
  }
  if (string_member(o, "scope").find(gcp::kCloudPlatformScope) == std::string::npos) {
    return "Invalid JWT: scope lacks cloud-platform.";
  }
  const auto iat = int_member(o, "iat");
  const auto exp = int_member(o, "exp");
  const std::int64_t t = unix_now(now);
  if (!iat || !exp || *iat > t + 300 || *iat < t - 300) {
    return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
           "timeframe. Check your iat and exp values in the JWT claim.";
  }
  if (*exp <= t || *exp - *iat > 3600) {
    return "Invalid JWT: exp must be within an hour of iat and in the future.";
  }
  return std::nullopt;
}

Reply GcpAuth::handle_token(const MockRequest& request, system_clock::time_point now) {
  if (path_of(request.target) == kMetadataTokenPath) {
    // The metadata server: a GET that says it is one (Metadata-Flavor: Google) and was not
    // forwarded by a proxy, as the real one demands; its text answers are plain.
    const auto flavor = find_header(request.headers, "metadata-flavor");
    if (request.method != "GET" || !flavor || *flavor != "Google" ||
        find_header(request.headers, "x-forwarded-for")) {
      Reply r = body_reply("Missing required header: Metadata-Flavor: Google", "text/html");
      r.status = 403;
      return r;
    }
    return issue(now);
  }
  if (request.method != "POST") {
    return json_reply(405, R"({"error":"invalid_request"})");
  }
  std::string grant_type;
  std::string assertion;
  std::string_view form = request.body;
  while (!form.empty()) {
    const std::size_t amp = form.find('&');
    const std::string_view pair = form.substr(0, amp);
    form = amp == std::string_view::npos ? std::string_view() : form.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const std::string name = codec::percent_decode(pair.substr(0, eq), true);
    const std::string value = eq == std::string_view::npos
                                  ? std::string()
                                  : codec::percent_decode(pair.substr(eq + 1), true);
    if (name == "grant_type") {
      grant_type = value;
    } else if (name == "assertion") {
      assertion = value;
    }
  }
  if (grant_type != kJwtBearer) {
    return json_reply(
        400, R"({"error":"unsupported_grant_type","error_description":"Invalid grant_type."})");
  }
  if (auto refused = refuse_assertion(request, assertion, now)) {
    return refusal(*refused);
  }
  return issue(now);
}

Reply GcpAuth::issue(system_clock::time_point now) {
  std::lock_guard lock(mutex_);
  // Expired tokens are forgotten as new ones are issued.
  std::erase_if(tokens_, [&](const auto& entry) { return entry.second <= now; });
  const std::string token = "ya29.mock-" + std::to_string(++issued_);
  tokens_.emplace(token, now + std::chrono::seconds(config_.token_lifetime_s));
  return json_reply(200, R"({"access_token":")" + token + R"(","expires_in":)" +
                             std::to_string(config_.token_lifetime_s) +
                             R"(,"token_type":"Bearer"})");
}

std::optional<Error> GcpAuth::check(const MockRequest& request,
                                    system_clock::time_point now) const {
  const std::string_view authorization = find_header(request.headers, "authorization").value_or("");
  std::string_view token;
  if (authorization.size() > 7 && authorization.substr(0, 7) == "Bearer ") {
    token = authorization.substr(7);
  }
  {
    std::lock_guard lock(mutex_);
    if (auto it = tokens_.find(token); !token.empty() && it != tokens_.end() && it->second > now) {
      return std::nullopt;
    }
  }
  return Error(ErrorKind::kUnauthorized,
               "Request had invalid authentication credentials. Expected OAuth 2 access token, "
               "login cookie or other valid authentication credential.")
      .with_code("UNAUTHENTICATED");
}

std::uint64_t GcpAuth::issued() const {
  std::lock_guard lock(mutex_);
  return issued_;
}

}  // namespace sluice::mock
