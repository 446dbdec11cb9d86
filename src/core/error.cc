#include "core/error.h"

namespace sluice {

Error::Error(ErrorKind kind, std::string message)
    : Error(kind, default_http_status(kind), std::move(message)) {}

Error::Error(ErrorKind kind, int http_status, std::string message)
    : kind_(kind),
      source_(default_source(kind)),
      http_status_(http_status),
      retryable_(default_retryable(kind, http_status)),
      message_(std::move(message)) {}

int default_http_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadRequest:
      return 400;
    case ErrorKind::kUnauthorized:
      return 401;
    case ErrorKind::kForbidden:
      return 403;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kMethodNotAllowed:
      return 405;
    case ErrorKind::kRequestTimeout:
      return 408;
    case ErrorKind::kPayloadTooLarge:
      return 413;
    case ErrorKind::kRateLimited:
      return 429;
    case ErrorKind::kHeadersTooLarge:
      return 431;
    case ErrorKind::kClientGone:
      return 499;
    case ErrorKind::kInternal:
      return 500;
    case ErrorKind::kUpstreamUnreachable:
      return 502;
    case ErrorKind::kUpstreamProtocol:
      return 502;
    case ErrorKind::kUpstreamStatus:
      return 502;
    case ErrorKind::kUnavailable:
      return 503;
    case ErrorKind::kUpstreamTimeout:
      return 504;
  }
  return 500;
}

ErrorSource default_source(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamTimeout:
    case ErrorKind::kUpstreamStatus:
    case ErrorKind::kUpstreamProtocol:
      return ErrorSource::kUpstream;
    case ErrorKind::kInternal:
    case ErrorKind::kUnavailable:
    case ErrorKind::kRateLimited:
      return ErrorSource::kInternal;
    default:
      return ErrorSource::kDownstream;
  }
}

bool default_retryable(ErrorKind kind, int http_status) {
  switch (kind) {
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamTimeout:
    case ErrorKind::kUpstreamProtocol:
      return true;
    case ErrorKind::kUpstreamStatus:
      return http_status == 408 || http_status == 429 || http_status >= 500;
    default:
      return false;
  }
}

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadRequest:
      return "bad_request";
    case ErrorKind::kUnauthorized:
      return "unauthorized";
    case ErrorKind::kForbidden:
      return "forbidden";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kMethodNotAllowed:
      return "method_not_allowed";
    case ErrorKind::kPayloadTooLarge:
      return "payload_too_large";
    case ErrorKind::kHeadersTooLarge:
      return "headers_too_large";
    case ErrorKind::kRequestTimeout:
      return "request_timeout";
    case ErrorKind::kRateLimited:
      return "rate_limited";
    case ErrorKind::kUnavailable:
      return "unavailable";
    case ErrorKind::kUpstreamUnreachable:
      return "upstream_unreachable";
    case ErrorKind::kUpstreamTimeout:
      return "upstream_timeout";
    case ErrorKind::kUpstreamStatus:
      return "upstream_status";
    case ErrorKind::kUpstreamProtocol:
      return "upstream_protocol";
    case ErrorKind::kClientGone:
      return "client_gone";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace sluice

#include <stdexcept>

#include "core/result.h"

namespace sluice {
void throw_exception_from_error(const Error& e, const boost::source_location&) {
  throw std::runtime_error(std::string(to_string(e.kind())) + ": " + e.message());
}
}  // namespace sluice
