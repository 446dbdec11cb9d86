#include "sts_issuer.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "codec/percent.h"

namespace sluice::mock {
namespace {

std::string form_value(std::string_view form, std::string_view name) {
  while (!form.empty()) {
    const std::size_t amp = form.find('&');
    const std::string_view pair = form.substr(0, amp);
    form = amp == std::string_view::npos ? std::string_view() : form.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (codec::percent_decode(pair.substr(0, eq), true) == name) {
      return eq == std::string_view::npos ? std::string()
                                          : codec::percent_decode(pair.substr(eq + 1), true);
    }
  }
  return {};
}

Reply xml_reply(int status, std::string body) {
  Reply r = body_reply(std::move(body), "text/xml");
  r.status = status;
  return r;
}

Reply sts_error(int status, std::string_view code, std::string_view message) {
  std::string body =
      "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
      "<Type>Sender</Type><Code>";
  body.append(code).append("</Code><Message>").append(message);
  body.append(
      "</Message></Error><RequestId>00000000-0000-4000-8000-000000000000</RequestId>"
      "</ErrorResponse>");
  return xml_reply(status, std::move(body));
}

std::string iso8601(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

bool StsIssuer::is_sts_request(const MockRequest& request) {
  return request.method == "POST" &&
         form_value(request.body, "Action") == "AssumeRoleWithWebIdentity";
}

Reply StsIssuer::handle(const MockRequest& request, std::chrono::system_clock::time_point now) {
  const std::string role = form_value(request.body, "RoleArn");
  const std::string session = form_value(request.body, "RoleSessionName");
  if (role.empty() || session.empty() || form_value(request.body, "Version") != "2011-06-15") {
    return sts_error(400, "ValidationError",
                     "RoleArn, RoleSessionName and Version 2011-06-15 are required");
  }
  if (form_value(request.body, "WebIdentityToken") != config_.web_identity_token) {
    return sts_error(400, "InvalidIdentityToken",
                     "Couldn't retrieve verification key from your "
                     "identity provider,  please reference "
                     "AssumeRoleWithWebIdentity documentation for "
                     "requirements");
  }
  std::lock_guard lock(mutex_);
  Entry entry = issue(now);
  std::string body =
      "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
      "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>";
  body.append(entry.credentials.access_key_id).append("</AccessKeyId><SecretAccessKey>");
  body.append(entry.credentials.secret_access_key).append("</SecretAccessKey><SessionToken>");
  body.append(entry.credentials.session_token).append("</SessionToken><Expiration>");
  body.append(iso8601(entry.expires)).append("</Expiration></Credentials><AssumedRoleUser><Arn>");
  body.append(role).append("/").append(session);
  body.append(
      "</Arn></AssumedRoleUser></AssumeRoleWithWebIdentityResult>"
      "</AssumeRoleWithWebIdentityResponse>");
  issued_.emplace(entry.credentials.access_key_id, std::move(entry));
  return xml_reply(200, std::move(body));
}

StsIssuer::Entry StsIssuer::issue(std::chrono::system_clock::time_point now) {
  std::erase_if(issued_, [&](const auto& entry) { return entry.second.expires <= now; });
  char key_id[32];
  std::snprintf(key_id, sizeof key_id, "ASIAMOCK%08llu", static_cast<unsigned long long>(++count_));
  return Entry{{key_id, "mock/temporary/secret/" + std::to_string(count_),
                "mock-session-token-" + std::to_string(count_)},
               now + std::chrono::seconds(config_.lifetime_s)};
}

bool StsIssuer::is_imds_request(const MockRequest& request) {
  return path_of(request.target).starts_with("/latest/");
}

Reply StsIssuer::handle_imds(const MockRequest& request,
                             std::chrono::system_clock::time_point now) {
  const auto text = [](int status, std::string body) {
    Reply r = body_reply(std::move(body), "text/plain");
    r.status = status;
    return r;
  };
  const std::string_view path = path_of(request.target);
  std::lock_guard lock(mutex_);
  if (path == "/latest/api/token") {
    const auto ttl = find_header(request.headers, "x-aws-ec2-metadata-token-ttl-seconds");
    const int seconds = ttl ? std::atoi(std::string(*ttl).c_str()) : 0;
    if (request.method != "PUT" || seconds < 1 || seconds > 21600 ||
        find_header(request.headers, "x-forwarded-for")) {
      return text(400, "Bad Request");
    }
    const std::string token = "imds-session-" + std::to_string(imds_sessions_.size() + 1);
    imds_sessions_.emplace(token, seconds);
    return text(200, token);
  }
  const auto token = find_header(request.headers, "x-aws-ec2-metadata-token");
  if (request.method != "GET" || !token || !imds_sessions_.contains(*token)) {
    return text(401, "Unauthorized");
  }
  // The listing answers with or without its trailing slash, as the service does (HTTP clients
  // that normalise paths send it without).
  constexpr std::string_view kRoles = "/latest/meta-data/iam/security-credentials";
  if (config_.imds_role.empty() || !path.starts_with(kRoles)) {
    return text(404, "Not Found");
  }
  std::string_view role = path.substr(kRoles.size());
  if (role.starts_with('/')) {
    role.remove_prefix(1);
  }
  if (role.empty()) {
    return text(200, config_.imds_role);
  }
  if (role != config_.imds_role) {
    return text(404, "Not Found");
  }
  Entry entry = issue(now);
  std::string body = R"({"Code":"Success","LastUpdated":")" + iso8601(now) +
                     R"(","Type":"AWS-HMAC","AccessKeyId":")" + entry.credentials.access_key_id +
                     R"(","SecretAccessKey":")" + entry.credentials.secret_access_key +
                     R"(","Token":")" + entry.credentials.session_token + R"(","Expiration":")" +
                     iso8601(entry.expires) + R"("})";
  issued_.emplace(entry.credentials.access_key_id, std::move(entry));
  return body_reply(std::move(body));
}

bool StsIssuer::is_container_request(const MockRequest& request) {
  return request.method == "GET" && path_of(request.target) == "/v1/credentials";
}

Reply StsIssuer::handle_container(const MockRequest& request,
                                  std::chrono::system_clock::time_point now) {
  const auto authorization = find_header(request.headers, "authorization");
  if (config_.container_token.empty() || !authorization) {
    Reply r = body_reply(R"({"Code":"AccessDeniedException","Message":"no authorization"})");
    r.status = 401;
    return r;
  }
  if (*authorization != config_.container_token) {
    Reply r = body_reply(R"({"Code":"AccessDeniedException","Message":"invalid token"})");
    r.status = 403;
    return r;
  }
  std::lock_guard lock(mutex_);
  Entry entry = issue(now);
  std::string body = R"({"AccessKeyId":")" + entry.credentials.access_key_id +
                     R"(","SecretAccessKey":")" + entry.credentials.secret_access_key +
                     R"(","Token":")" + entry.credentials.session_token + R"(","Expiration":")" +
                     iso8601(entry.expires) + R"("})";
  issued_.emplace(entry.credentials.access_key_id, std::move(entry));
  return body_reply(std::move(body));
}

std::optional<StsIssuer::Issued> StsIssuer::find(std::string_view access_key_id,
                                                 std::chrono::system_clock::time_point now) const {
  std::lock_guard lock(mutex_);
  auto it = issued_.find(access_key_id);
  if (it == issued_.end()) {
    return std::nullopt;
  }
  return Issued{it->second.credentials, it->second.expires <= now};
}

}  // namespace sluice::mock
