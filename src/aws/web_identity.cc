#include "aws/web_identity.h"

#include <cstdio>
#include <ctime>

#include "codec/percent.h"

namespace sluice::aws {
namespace {

// The text of the first <tag>...</tag> in `xml`, its five predefined entities decoded; empty
// when absent. STS's answers are flat and machine-written: no CDATA, no attributes on these.
std::string element(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  const std::size_t begin = xml.find(open);
  if (begin == std::string_view::npos) {
    return {};
  }
  const std::size_t from = begin + open.size();
  const std::size_t end = xml.find(close, from);
  if (end == std::string_view::npos) {
    return {};
  }
  std::string out;
  const std::string_view text = xml.substr(from, end - from);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    static constexpr std::pair<std::string_view, char> kEntities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    bool decoded = false;
    for (const auto& [entity, c] : kEntities) {
      if (text.substr(i).starts_with(entity)) {
        out.push_back(c);
        i += entity.size() - 1;
        decoded = true;
        break;
      }
    }
    if (!decoded) {
      out.push_back('&');
    }
  }
  return out;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_iso8601(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  std::string_view rest = std::string_view(text).substr(19);
  if (rest.starts_with('.')) {
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      rest.remove_prefix(1);
    }
  }
  if (rest != "Z") {
    return std::nullopt;  // STS writes UTC
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string sts_endpoint(std::string_view region, std::string_view override_url) {
  if (!override_url.empty()) {
    return std::string(override_url);
  }
  return "https://sts." + std::string(region) + ".amazonaws.com/";
}

std::string assume_role_form(const WebIdentity& identity, std::string_view token,
                             std::chrono::seconds duration) {
  std::string form = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=";
  form.append(codec::percent_encode(identity.role_arn));
  form.append("&RoleSessionName=").append(codec::percent_encode(identity.session_name));
  form.append("&WebIdentityToken=").append(codec::percent_encode(token));
  form.append("&DurationSeconds=").append(std::to_string(duration.count()));
  return form;
}

Result<TemporaryCredentials> parse_assume_role_answer(int status, std::string_view body) {
  if (status < 200 || status >= 300) {
    const std::string code = element(body, "Code");
    std::string message = "STS answered " + std::to_string(status);
    if (!code.empty()) {
      message += " " + code;
    }
    if (const std::string text = element(body, "Message"); !text.empty()) {
      message += ": " + text;
    }
    return Error(ErrorKind::kUpstreamStatus, status, std::move(message))
        .with_code(code.empty() ? std::string("sts_refused") : code);
  }
  TemporaryCredentials out;
  out.credentials.access_key_id = element(body, "AccessKeyId");
  out.credentials.secret_access_key = element(body, "SecretAccessKey");
  out.credentials.session_token = element(body, "SessionToken");
  const auto expires = parse_iso8601(element(body, "Expiration"));
  if (out.credentials.access_key_id.empty() || out.credentials.secret_access_key.empty() ||
      out.credentials.session_token.empty() || !expires) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "STS's answer has no AccessKeyId, SecretAccessKey, SessionToken and Expiration");
  }
  out.expires = *expires;
  return out;
}

}  // namespace sluice::aws
