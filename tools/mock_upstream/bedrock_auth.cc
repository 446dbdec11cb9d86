#include "bedrock_auth.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

namespace sluice::mock {
namespace {

constexpr std::string_view kService = "bedrock";
constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

// AWS's wording for each failure, as its SDKs and CLIs print it.
constexpr std::string_view kMismatch =
    "The request signature we calculated does not match the signature you provided. Check your "
    "AWS Secret Access Key and signing method. Consult the service documentation for details.";
constexpr std::string_view kInvalidToken = "The security token included in the request is invalid.";

Error auth_error(std::string_view type, std::string message) {
  Error e(ErrorKind::kForbidden, 403, std::move(message));
  e.with_code(std::string(type));
  return e;
}

Error invalid_signature(std::string message) {
  return auth_error("InvalidSignatureException", std::move(message));
}

Error incomplete_signature(std::string message) {
  return auth_error("IncompleteSignatureException", std::move(message));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) {
      return out;
    }
    s.remove_prefix(at + 1);
  }
}

// The parameters of "AWS4-HMAC-SHA256 Credential=.., SignedHeaders=.., Signature=..".
struct Authorization {
  std::string_view credential;
  std::string_view signed_headers;
  std::string_view signature;
};

Authorization parse_authorization(std::string_view params) {
  Authorization out;
  for (std::string_view part : split(params, ',')) {
    part = trim(part);
    std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    std::string_view name = part.substr(0, eq);
    std::string_view value = part.substr(eq + 1);
    if (name == "Credential") {
      out.credential = value;
    } else if (name == "SignedHeaders") {
      out.signed_headers = value;
    } else if (name == "Signature") {
      out.signature = value;
    }
  }
  return out;
}

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int digits_value(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// "YYYYMMDD'T'HHMMSS'Z'" (ISO 8601 basic format, UTC), or nullopt.
std::optional<std::chrono::system_clock::time_point> parse_amz_date(std::string_view text) {
  using namespace std::chrono;
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z' || !all_digits(text.substr(0, 8)) ||
      !all_digits(text.substr(9, 6))) {
    return std::nullopt;
  }
  const year_month_day ymd{year{digits_value(text.substr(0, 4))},
                           month{static_cast<unsigned>(digits_value(text.substr(4, 2)))},
                           day{static_cast<unsigned>(digits_value(text.substr(6, 2)))}};
  const int h = digits_value(text.substr(9, 2));
  const int m = digits_value(text.substr(11, 2));
  const int s = digits_value(text.substr(13, 2));
  if (!ymd.ok() || h > 23 || m > 59 || s > 60) {
    return std::nullopt;
  }
  return sys_days{ymd} + hours{h} + minutes{m} + seconds{s};
}

std::string amz_date_text(std::chrono::system_clock::time_point t) {
  auto text = aws::amz_date(t);
  return text ? *text : std::string();
}

}  // namespace

BedrockAuth::BedrockAuth(BedrockAuthConfig config, const StsIssuer* sts)
    : config_(std::move(config)),
      sts_(sts),
      signer_(config_.region, std::string(kService)),
      content_sha256_signer_(config_.region, std::string(kService),
                             aws::SignerOptions{.add_content_sha256 = true}) {}

AuthOutcome BedrockAuth::check(const MockRequest& request,
                               std::chrono::system_clock::time_point now) const {
  AuthOutcome out;
  auto authorization = find_header(request.headers, "authorization");
  std::string_view value = authorization ? trim(*authorization) : std::string_view();
  std::string_view params;
  if (!authorization) {
    out.scheme = AuthScheme::kNone;
  } else if (value.starts_with(kAlgorithm) &&
             (value.size() == kAlgorithm.size() || value[kAlgorithm.size()] == ' ')) {
    out.scheme = AuthScheme::kSigV4;
    params = value.substr(kAlgorithm.size());
  } else if (value.size() > 7 && iequals(value.substr(0, 7), "Bearer ")) {
    out.scheme = AuthScheme::kBearer;
  } else {
    out.scheme = AuthScheme::kOther;
  }
  if (!config_.enabled() && sts_ == nullptr) {
    return out;
  }
  out.checked = true;
  switch (out.scheme) {
    case AuthScheme::kNone:
      out.error = auth_error("MissingAuthenticationTokenException", "Missing Authentication Token");
      break;
    case AuthScheme::kBearer:
      if (config_.bearer_token.empty() || trim(value.substr(7)) != config_.bearer_token) {
        out.error = auth_error("UnrecognizedClientException", std::string(kInvalidToken));
      }
      break;
    case AuthScheme::kSigV4:
      out.error = check_sigv4(request, params, now);
      break;
    case AuthScheme::kOther:
      out.error = incomplete_signature(
          "Authorization header requires 'Credential' parameter. Authorization header requires "
          "'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. "
          "Authorization=" +
          std::string(value));
      break;
  }
  return out;
}

std::optional<Error> BedrockAuth::check_sigv4(const MockRequest& request, std::string_view params,
                                              std::chrono::system_clock::time_point now) const {
  const Authorization auth = parse_authorization(params);
  auto amz_date = find_header(request.headers, "x-amz-date");
  std::string missing;
  for (auto [part, name] :
       {std::pair{auth.credential, "Credential"}, std::pair{auth.signature, "Signature"},
        std::pair{auth.signed_headers, "SignedHeaders"}}) {
    if (part.empty()) {
      missing += "Authorization header requires '";
      missing += name;
      missing += "' parameter. ";
    }
  }
  if (!amz_date) {
    missing +=
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
        "header. ";
  }
  if (!missing.empty()) {
    return incomplete_signature(missing + "Authorization=" + std::string(kAlgorithm) +
                                std::string(params));
  }

  const std::vector<std::string_view> scope = split(auth.credential, '/');
  if (scope.size() != 5) {
    return incomplete_signature(
        "Credential must have exactly 5 slash-delimited elements, e.g. "
        "keyid/date/region/service/term, got '" +
        std::string(auth.credential) + "'");
  }
  aws::Credentials credentials{config_.access_key_id, config_.secret_access_key, {}};
  const auto token = find_header(request.headers, "x-amz-security-token");
  if (config_.access_key_id.empty() || scope[0] != config_.access_key_id) {
    // Temporary keys STS issued: known, not expired, and with their own session token.
    const auto issued = sts_ != nullptr ? sts_->find(scope[0], now) : std::nullopt;
    if (!issued || !token || trim(*token) != issued->credentials.session_token) {
      return auth_error("UnrecognizedClientException", std::string(kInvalidToken));
    }
    if (issued->expired) {
      return auth_error("ExpiredTokenException",
                        "The security token included in the request is "
                        "expired");
    }
    credentials = issued->credentials;
  }

  const std::string_view date_text = trim(*amz_date);
  const auto signed_at = parse_amz_date(date_text);
  if (!signed_at) {
    return incomplete_signature("Date must be in ISO-8601 'basic format'. Got '" +
                                std::string(date_text) +
                                "'. See http://en.wikipedia.org/wiki/ISO_8601");
  }
  if (scope[1] != date_text.substr(0, 8)) {
    return invalid_signature(
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from "
        "HTTP: '" +
        std::string(scope[1]) + "' != '" + std::string(date_text.substr(0, 8)) + "', from '" +
        std::string(date_text) + "'.");
  }
  if (*signed_at < now - kMaxSkew) {
    return invalid_signature("Signature expired: " + std::string(date_text) +
                             " is now earlier than " + amz_date_text(now - kMaxSkew) + " (" +
                             amz_date_text(now) + " - 15 min.)");
  }
  if (*signed_at > now + kMaxSkew) {
    return invalid_signature("Signature not yet current: " + std::string(date_text) +
                             " is still later than " + amz_date_text(now + kMaxSkew) + " (" +
                             amz_date_text(now) + " + 15 min.)");
  }
  if (scope[2] != config_.region) {
    return invalid_signature("Credential should be scoped to a valid region, not '" +
                             std::string(scope[2]) + "'. ");
  }
  if (scope[3] != kService) {
    return invalid_signature("Credential should be scoped to correct service: '" +
                             std::string(kService) + "'. ");
  }
  if (scope[4] != "aws4_request") {
    return invalid_signature(
        "Credential should be scoped with a valid terminator: 'aws4_request', not '" +
        std::string(scope[4]) + "'. ");
  }

  const std::vector<std::string_view> names = split(auth.signed_headers, ';');
  if (std::find(names.begin(), names.end(), "host") == names.end()) {
    return incomplete_signature(
        "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  }
  // The signer adds (and signs) x-amz-date, x-amz-security-token and x-amz-content-sha256
  // itself; every other signed header is passed as the request carried it, repeats included.
  bool signs_content_sha256 = false;
  std::vector<aws::HeaderView> headers;
  for (std::string_view name : names) {
    if (name == "x-amz-content-sha256") {
      signs_content_sha256 = true;
      continue;
    }
    if (name == "x-amz-date" || name == "x-amz-security-token") {
      continue;
    }
    for (const auto& [header, value] : request.headers) {
      if (iequals(header, name)) {
        headers.push_back({name, value});
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> decoded = query_params(request.target);
  std::vector<aws::QueryParam> query;
  query.reserve(decoded.size());
  for (const auto& [name, value] : decoded) {
    query.push_back({name, value});
  }
  if (token) {
    credentials.session_token = std::string(trim(*token));
  }
  const aws::Request to_sign{request.method, path_of(request.target), query, headers,
                             aws::Payload::bytes(request.body)};
  const aws::Signer& signer = signs_content_sha256 ? content_sha256_signer_ : signer_;
  auto expected = signer.sign(to_sign, credentials, *signed_at);
  if (!expected) {
    return invalid_signature(std::string(kMismatch));
  }
  if (expected->signature != auth.signature) {
    // AWS quotes what it computed, so that a client can find where its canonical request
    // differs.
    return invalid_signature(
        std::string(kMismatch) + "\n\nThe Canonical String for this request should have been\n'" +
        expected->canonical_request + "'\n\nThe String-to-Sign should have been\n'" +
        expected->string_to_sign + "'\n");
  }
  return std::nullopt;
}

}  // namespace sluice::mock
