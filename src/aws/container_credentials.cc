#include "aws/container_credentials.h"

#include <boost/json/value.hpp>

#include "codec/json_read.h"

namespace sluice::aws {
namespace json = boost::json;

namespace {

constexpr std::string_view kEcsHost = "169.254.170.2";

std::string member(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The host of an http:// or https:// URL ("[fd00:ec2::23]" for IPv6), "" when it is neither.
std::string_view host_of(std::string_view url, bool& tls) {
  tls = url.starts_with("https://");
  if (!tls && !url.starts_with("http://")) {
    return {};
  }
  std::string_view rest = url.substr(tls ? 8 : 7);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (rest.starts_with('[')) {
    return rest.substr(0, rest.find(']') + 1);
  }
  return rest.substr(0, rest.find(':'));
}

// The hosts the SDKs let a plain-http full URI name: loopback and the platforms' own.
bool trusted_http_host(std::string_view host) {
  // 127.0.0.0/8 as an address only: "127.0.0.1.example.com" is a name anyone may own.
  const bool loopback_v4 =
      host.starts_with("127.") && host.find_first_not_of("0123456789.") == std::string_view::npos;
  return host == "localhost" || loopback_v4 || host == "[::1]" || host == kEcsHost ||
         host == "169.254.170.23" || host == "[fd00:ec2::23]";
}

}  // namespace

Result<std::optional<ContainerEndpoint>> container_endpoint(const EnvLookup& env) {
  ContainerEndpoint out;
  const std::string relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").value_or("");
  const std::string full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI").value_or("");
  if (!relative.empty()) {
    out.url = "http://" + std::string(kEcsHost) + (relative.starts_with('/') ? "" : "/") + relative;
  } else if (!full.empty()) {
    bool tls = false;
    const std::string_view host = host_of(full, tls);
    if (host.empty()) {
      return Error(ErrorKind::kBadRequest,
                   "AWS_CONTAINER_CREDENTIALS_FULL_URI is not an http(s) URL: " + full);
    }
    if (!tls && !trusted_http_host(host)) {
      return Error(ErrorKind::kBadRequest,
                   "AWS_CONTAINER_CREDENTIALS_FULL_URI names " + std::string(host) +
                       " over plain http; only loopback and the ECS / EKS link-local addresses "
                       "may be (the authorization token would go there)");
    }
    out.url = full;
  } else {
    return std::optional<ContainerEndpoint>();
  }
  out.authorization = env("AWS_CONTAINER_AUTHORIZATION_TOKEN").value_or("");
  if (out.authorization.empty()) {
    out.authorization_file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").value_or("");
  }
  return std::optional<ContainerEndpoint>(std::move(out));
}

Result<TemporaryCredentials> parse_container_answer(int status, std::string_view body) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 8);
  const json::object* o = !ec ? doc.if_object() : nullptr;
  if (status < 200 || status >= 300) {
    std::string message = "the container credentials endpoint answered " + std::to_string(status);
    std::string code;
    if (o != nullptr) {
      code = member(*o, "Code");
      if (const std::string text = member(*o, "Message"); !text.empty()) {
        message += ": " + text;
      }
    }
    return Error(ErrorKind::kUpstreamStatus, std::move(message))
        .with_code(code.empty() ? "container_credentials_refused" : code);
  }
  if (o == nullptr) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "the container credentials endpoint's answer is not a JSON object");
  }
  TemporaryCredentials out;
  out.credentials.access_key_id = member(*o, "AccessKeyId");
  out.credentials.secret_access_key = member(*o, "SecretAccessKey");
  out.credentials.session_token = member(*o, "Token");
  const auto expires = parse_iso8601(member(*o, "Expiration"));
  if (out.credentials.access_key_id.empty() || out.credentials.secret_access_key.empty() ||
      !expires) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "the container credentials endpoint's answer lacks AccessKeyId, "
                 "SecretAccessKey or Expiration");
  }
  out.expires = *expires;
  return out;
}

}  // namespace sluice::aws
