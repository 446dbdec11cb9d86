#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

// What went wrong, independent of which protocol reports it. Codecs map a kind to their
// own error shape and HTTP status (see protocol/*/errors.h).
enum class ErrorKind : std::uint8_t {
  kBadRequest,    // malformed JSON, missing or invalid fields
  kUnauthorized,  // missing or unknown gateway key
  kForbidden,     // key valid but not allowed to use the alias
  kNotFound,      // unknown model alias or path
  kMethodNotAllowed,
  kPayloadTooLarge,      // request body over the limit
  kHeadersTooLarge,      // request head over the limit
  kRequestTimeout,       // the client was too slow sending its request
  kRateLimited,          // gateway-side shedding (pool exhausted, limits)
  kUnavailable,          // draining or not ready
  kUpstreamUnreachable,  // DNS, connect, TLS handshake failures
  kUpstreamTimeout,      // connect / first-byte / total deadline passed
  kUpstreamStatus,       // upstream answered with a 4xx/5xx of its own
  kUpstreamProtocol,     // upstream sent bytes we cannot parse (bad HTTP, broken stream)
  kClientGone,           // the caller disconnected
  kInternal,
};

// Who caused it. Used for metrics and for deciding whether a failure counts against a
// provider (circuit breakers, later) or against the caller.
enum class ErrorSource : std::uint8_t { kDownstream, kUpstream, kInternal };

// The one error type of the project. Cheap to move; carries what every layer needs to
// report it: a kind, a source, whether trying again (elsewhere) may help, the HTTP status
// to answer with and the client-facing message. `message` never contains credentials or
// prompt text.
class Error {
 public:
  Error() = default;
  Error(ErrorKind kind, std::string message);
  Error(ErrorKind kind, int http_status, std::string message);

  ErrorKind kind() const { return kind_; }
  ErrorSource source() const { return source_; }
  int http_status() const { return http_status_; }
  bool retryable() const { return retryable_; }
  const std::string& message() const { return message_; }
  // Machine-readable code, e.g. "model_not_found" (OpenAI's `error.code`).
  const std::string& code() const { return code_; }
  // Offending request field, e.g. "messages" (OpenAI's `error.param`).
  const std::string& param() const { return param_; }
  // Seconds the caller should wait before retrying; 0 when not applicable.
  std::uint32_t retry_after_seconds() const { return retry_after_seconds_; }

  Error& with_code(std::string code) & {
    code_ = std::move(code);
    return *this;
  }
  Error&& with_code(std::string code) && {
    code_ = std::move(code);
    return std::move(*this);
  }
  Error&& with_param(std::string param) && {
    param_ = std::move(param);
    return std::move(*this);
  }
  Error&& with_retry_after(std::uint32_t s) && {
    retry_after_seconds_ = s;
    return std::move(*this);
  }
  Error&& with_status(int status) && {
    http_status_ = status;
    return std::move(*this);
  }

 private:
  ErrorKind kind_ = ErrorKind::kInternal;
  ErrorSource source_ = ErrorSource::kInternal;
  int http_status_ = 500;
  bool retryable_ = false;
  std::uint32_t retry_after_seconds_ = 0;
  std::string message_;
  std::string code_;
  std::string param_;
};

// Default HTTP status for a kind (e.g. kPayloadTooLarge -> 413).
int default_http_status(ErrorKind kind);
// Default source for a kind (kUpstream* -> kUpstream, kInternal -> kInternal, else kDownstream).
ErrorSource default_source(ErrorKind kind);
// Whether a failure of this kind may succeed on another attempt or target.
bool default_retryable(ErrorKind kind, int http_status);
// Stable snake_case name for logs and metrics, e.g. "upstream_timeout".
std::string_view to_string(ErrorKind kind);

}  // namespace sluice
