#include "gcp/google_credentials.h"

#include <cstdlib>
#include <filesystem>
#include <memory>

#include <boost/json/value.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "codec/base64.h"
#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "codec/percent.h"
#include "core/text_file.h"

namespace sluice::gcp {
namespace json = boost::json;
using std::chrono::system_clock;

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

Error bad(std::string_view source, std::string message) {
  return Error(ErrorKind::kBadRequest, std::string(source) + ": " + std::move(message));
}

Pkey read_private_key(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) {
    return nullptr;
  }
  return Pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

Result<std::string> sign_with(EVP_PKEY* key, std::string_view key_id, std::string_view claims) {
  std::string header = R"({"alg":"RS256","typ":"JWT")";
  if (!key_id.empty()) {
    codec::JsonWriter(header).next_key("kid").string(key_id);
  }
  header.push_back('}');
  std::string jws = codec::base64(header, codec::Base64Alphabet::kUrlUnpadded);
  jws.push_back('.');
  codec::append_base64(jws, claims, codec::Base64Alphabet::kUrlUnpadded);
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  std::size_t length = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length,
                     reinterpret_cast<const unsigned char*>(jws.data()), jws.size()) != 1) {
    return Error(ErrorKind::kInternal, "RS256 signing failed (is the private key an RSA key?)");
  }
  std::string signature(length, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(jws.data()), jws.size()) != 1) {
    return Error(ErrorKind::kInternal, "RS256 signing failed");
  }
  signature.resize(length);
  jws.push_back('.');
  codec::append_base64(jws, signature, codec::Base64Alphabet::kUrlUnpadded);
  return jws;
}

std::string member(const json::object& object, std::string_view name) {
  const json::value* v = object.if_contains(name);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

void append_form(std::string& form, std::string_view name, std::string_view value) {
  if (!form.empty()) {
    form.push_back('&');
  }
  form.append(name).push_back('=');
  form.append(codec::percent_encode(value));
}

std::int64_t unix_seconds(system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

std::string_view GoogleCredentials::project_id() const {
  if (const auto* key = std::get_if<ServiceAccountKey>(&identity)) {
    return key->project_id;
  }
  if (const auto* user = std::get_if<AuthorizedUser>(&identity)) {
    return user->quota_project_id;
  }
  return {};  // the metadata server knows it, but Vertex's project is configured
}

GoogleCredentials metadata_server(std::string_view host) {
  GoogleCredentials out;
  out.identity =
      MetadataServer{.host = std::string(host),
                     .token_uri = "http://" + std::string(host) +
                                  "/computeMetadata/v1/instance/service-accounts/default/token"};
  out.source = "the metadata server at " + std::string(host);
  return out;
}

const std::string& GoogleCredentials::token_uri() const {
  return std::visit([](const auto& id) -> const std::string& { return id.token_uri; }, identity);
}

Result<GoogleCredentials> parse_credentials(std::string_view text, std::string_view source) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(text, ec, {}, 16);
  if (ec || !doc.is_object()) {
    return bad(source, "not a JSON object");
  }
  const json::object& o = doc.get_object();
  const std::string type = member(o, "type");
  GoogleCredentials out;
  out.source = std::string(source);
  if (type == "service_account") {
    ServiceAccountKey key{.client_email = member(o, "client_email"),
                          .private_key = member(o, "private_key"),
                          .private_key_id = member(o, "private_key_id"),
                          .token_uri = member(o, "token_uri"),
                          .project_id = member(o, "project_id")};
    if (key.client_email.empty() || key.private_key.empty()) {
      return bad(source, "a service account key needs client_email and private_key");
    }
    if (!read_private_key(key.private_key)) {
      return bad(source, "private_key is not a PEM private key");
    }
    if (key.token_uri.empty()) {
      key.token_uri = std::string(kDefaultTokenUri);
    }
    out.identity = std::move(key);
    return out;
  }
  if (type == "authorized_user") {
    AuthorizedUser user{.client_id = member(o, "client_id"),
                        .client_secret = member(o, "client_secret"),
                        .refresh_token = member(o, "refresh_token"),
                        .token_uri = member(o, "token_uri"),
                        .quota_project_id = member(o, "quota_project_id")};
    if (user.client_id.empty() || user.client_secret.empty() || user.refresh_token.empty()) {
      return bad(source,
                 "authorized_user credentials need client_id, client_secret and "
                 "refresh_token");
    }
    if (user.token_uri.empty()) {
      user.token_uri = std::string(kDefaultTokenUri);
    }
    out.identity = std::move(user);
    return out;
  }
  return bad(source, "credentials of type '" + type +
                         "' are not supported (service_account or authorized_user)");
}

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
}

Result<GoogleCredentials> find_credentials(std::string_view configured, const EnvLookup& env,
                                           std::string_view metadata_host) {
  std::string path(configured);
  if (path.empty() && !metadata_host.empty()) {
    return metadata_server(metadata_host);
  }
  if (path.empty()) {
    path = env("GOOGLE_APPLICATION_CREDENTIALS").value_or("");
  }
  if (path.empty()) {
    const std::string home = env("HOME").value_or("");
    const std::string adc = home + "/.config/gcloud/application_default_credentials.json";
    std::error_code ec;
    if (!home.empty() && std::filesystem::exists(adc, ec)) {
      path = adc;
    }
  }
  if (path.empty()) {
    if (const auto host = env("GCE_METADATA_HOST"); host && !host->empty()) {
      return metadata_server(*host);
    }
    return Error(ErrorKind::kBadRequest,
                 "no Google credentials: set vertex.credentials_file or "
                 "GOOGLE_APPLICATION_CREDENTIALS, run `gcloud auth application-default login`, "
                 "or on Google Cloud set vertex.metadata_server: " +
                     std::string(kMetadataHost));
  }
  auto text = read_text_file(path);
  if (!text) {
    return bad(path, "cannot read the credentials file: " + text.error().message());
  }
  return parse_credentials(*text, path);
}

struct TokenRequester::Key {
  Pkey pkey;
};

TokenRequester::TokenRequester(GoogleCredentials credentials, std::string scope,
                               std::unique_ptr<Key> key)
    : credentials_(std::move(credentials)), scope_(std::move(scope)), key_(std::move(key)) {}
TokenRequester::TokenRequester(TokenRequester&&) noexcept = default;
TokenRequester& TokenRequester::operator=(TokenRequester&&) noexcept = default;
TokenRequester::~TokenRequester() = default;

Result<TokenRequester> TokenRequester::make(GoogleCredentials credentials, std::string scope) {
  std::unique_ptr<Key> key;
  if (const auto* account = std::get_if<ServiceAccountKey>(&credentials.identity)) {
    key = std::make_unique<Key>();
    key->pkey = read_private_key(account->private_key);
    if (!key->pkey) {
      return bad(credentials.source, "private_key is not a PEM private key");
    }
  }
  return TokenRequester(std::move(credentials), std::move(scope), std::move(key));
}

Result<TokenRequest> TokenRequester::request(system_clock::time_point now) const {
  TokenRequest out;
  out.url = credentials_.token_uri();
  if (const auto* account = std::get_if<ServiceAccountKey>(&credentials_.identity)) {
    const std::int64_t iat = unix_seconds(now);
    std::string claims;
    codec::JsonWriter w(claims);
    w.ch('{').key("iss").string(account->client_email);
    w.next_key("scope").string(scope_);
    w.next_key("aud").string(account->token_uri);
    w.next_key("iat").number(iat);
    w.next_key("exp").number(iat + 3600);
    w.ch('}');
    auto assertion = sign_with(key_->pkey.get(), account->private_key_id, claims);
    if (!assertion) {
      return std::move(assertion).error();
    }
    append_form(out.form, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
    append_form(out.form, "assertion", *assertion);
    return out;
  }
  if (std::holds_alternative<MetadataServer>(credentials_.identity)) {
    out.metadata = true;  // the workload's own account; the server grants its scopes
    return out;
  }
  const auto& user = std::get<AuthorizedUser>(credentials_.identity);
  append_form(out.form, "grant_type", "refresh_token");
  append_form(out.form, "client_id", user.client_id);
  append_form(out.form, "client_secret", user.client_secret);
  append_form(out.form, "refresh_token", user.refresh_token);
  return out;
}

Result<AccessToken> parse_token_answer(int status, std::string_view body,
                                       system_clock::time_point now) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 16);
  const json::object* o = !ec && doc.is_object() ? &doc.get_object() : nullptr;
  if (status < 200 || status >= 300) {
    std::string message = "the token endpoint answered " + std::to_string(status);
    if (o != nullptr) {
      const std::string code = member(*o, "error");
      const std::string description = member(*o, "error_description");
      if (!code.empty()) {
        message += " " + code;
      }
      if (!description.empty()) {
        message += ": " + description;
      }
    }
    return Error(ErrorKind::kUpstreamStatus, status, std::move(message)).with_code("token_refused");
  }
  const std::string token = o != nullptr ? member(*o, "access_token") : std::string();
  const json::value* expires_in = o != nullptr ? o->if_contains("expires_in") : nullptr;
  const auto seconds = expires_in != nullptr ? codec::as_count(*expires_in) : std::nullopt;
  if (token.empty() || !seconds || *seconds == 0) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "the token endpoint's answer has no access_token and expires_in");
  }
  return AccessToken{
      .token = token,
      .expires = now + std::chrono::seconds(std::min<std::uint64_t>(*seconds, 86400))};
}

Result<std::string> sign_jwt_rs256(std::string_view private_key_pem, std::string_view key_id,
                                   std::string_view claims) {
  Pkey key = read_private_key(private_key_pem);
  if (!key) {
    return Error(ErrorKind::kBadRequest, "not a PEM private key");
  }
  return sign_with(key.get(), key_id, claims);
}

}  // namespace sluice::gcp
