#include "protocol/bedrock_converse/errors.h"

#include <array>
#include <optional>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "protocol/bedrock_converse/conventions.h"

namespace sluice::protocol::bedrock_converse {
namespace json = boost::json;

namespace {

struct TypeStatus {
  std::string_view type;
  int status;
};

constexpr std::array<TypeStatus, 11> kTypes = {{
    {"ThrottlingException", 429},
    {"ServiceQuotaExceededException", 429},
    {"ModelNotReadyException", 503},
    {"ServiceUnavailableException", 503},
    {"InternalServerException", 500},
    {"ModelTimeoutException", 408},
    {"ModelStreamErrorException", 502},
    {"ModelErrorException", 502},
    {"ValidationException", 400},
    {"ResourceNotFoundException", 404},
    {"ConflictException", 400},
}};

// Refusals of the gateway's SigV4 credentials: AccessDeniedException from the service model,
// the others from the AWS common errors every service answers with.
constexpr std::array<std::string_view, 6> kCredentialTypes = {
    "AccessDeniedException",     "UnrecognizedClientException",
    "ExpiredTokenException",     "IncompleteSignatureException",
    "InvalidSignatureException", "MissingAuthenticationTokenException",
};

// Equal but for the case of the first character (stream member names are lowerCamel).
bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || a.empty()) {
    return false;
  }
  auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; };
  return upper(a.front()) == upper(b.front()) && a.substr(1) == b.substr(1);
}

struct ErrorBody {
  std::string message;
  std::string type;
};

std::optional<std::string_view> string_member(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return std::string_view(v->get_string().data(), v->get_string().size());
}

ErrorBody read_body(std::string_view body) {
  ErrorBody out;
  unsigned char arena[2048];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  const json::value doc = codec::parse_json(body, ec, &mr, kMaxJsonDepth);
  if (ec || !doc.is_object()) {
    return out;
  }
  const json::object& o = doc.get_object();
  for (std::string_view key : {"message", "Message"}) {
    if (auto m = string_member(o, key)) {
      out.message.assign(*m);
      break;
    }
  }
  for (std::string_view key : {"__type", "code", "Code"}) {
    if (auto t = string_member(o, key)) {
      out.type.assign(error_type_name(*t));
      break;
    }
  }
  return out;
}

Error error_for(std::string_view type, std::string message, int http_status) {
  for (std::string_view credential : kCredentialTypes) {
    if (same_name(type, credential)) {
      // AWS's own message is left out: it names the account, the IAM principal and the
      // resource, which are the operator's business, not the caller's.
      std::string text = "Bedrock refused the gateway's AWS credentials for this provider (" +
                         std::string(credential) +
                         "); the operator must fix the provider's credentials or permissions";
      return Error(ErrorKind::kUpstreamStatus, 502, std::move(text))
          .with_code("upstream_auth_failed");
    }
  }
  int status = http_status >= 400 && http_status <= 599 ? http_status : 502;
  std::string code(type);
  for (const TypeStatus& t : kTypes) {
    if (same_name(type, t.type)) {
      status = t.status;
      code.assign(t.type);
    }
  }
  if (message.empty()) {
    message = code.empty() ? "Bedrock answered with an error and no message" : code;
  }
  return Error(ErrorKind::kUpstreamStatus, status, std::move(message)).with_code(std::move(code));
}

}  // namespace

std::string_view error_type_name(std::string_view value) {
  value = value.substr(0, value.find(':'));
  if (const std::size_t hash = value.rfind('#'); hash != std::string_view::npos) {
    value.remove_prefix(hash + 1);
  }
  return value;
}

Error error_from_wire(std::string_view body, std::string_view error_type, int http_status) {
  ErrorBody parsed = read_body(body);
  const std::string_view type =
      error_type.empty() ? std::string_view(parsed.type) : error_type_name(error_type);
  return error_for(type, std::move(parsed.message), http_status);
}

Error stream_exception(std::string_view exception_type, std::string_view payload) {
  ErrorBody parsed = read_body(payload);
  return error_for(exception_type, std::move(parsed.message), 0);
}

Error stream_error(std::string_view error_code, std::string_view message) {
  return error_for(error_code, std::string(message), 0);
}

}  // namespace sluice::protocol::bedrock_converse
