#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

// Errors of the Bedrock Runtime API. An HTTP error answer is {"message":"..."} with the
// exception's name in the `x-amzn-errortype` header ("ValidationException:http://internal.
// amazon.com/coral/com.amazon.bedrock/"); inside a ConverseStream it is an event-stream message
// with `:message-type` exception, its `:exception-type` header naming the stream member
// (throttlingException, modelStreamErrorException, validationException,
// internalServerException, serviceUnavailableException) and {"message":"..."} as payload.
// Upstream side only: Sluice never answers a caller in this shape.
//
// Every error is kind kUpstreamStatus (retryable per core/error.h: 408, 429 and 5xx), code() =
// the exception name, message = the upstream's message (the name when it gave none). Statuses,
// from the service model (service-2.json, `error.httpStatusCode`) unless noted:
//   ThrottlingException 429; ServiceQuotaExceededException 429 (declared 400, but "You can
//   resubmit your request later": a quota, retried like a rate limit);
//   ModelNotReadyException 503 (declared 429, but the model is not ready to serve, not a rate
//   limit; the AWS SDKs retry it); ServiceUnavailableException 503; InternalServerException
//   500; ModelTimeoutException 408; ModelStreamErrorException and ModelErrorException 502
//   (declared 424, "Retry your request": the model failed, not the caller);
//   ValidationException and ConflictException 400 (not retried); ResourceNotFoundException
//   404.
//   AccessDeniedException, UnrecognizedClientException, ExpiredTokenException,
//   IncompleteSignatureException, InvalidSignatureException, MissingAuthenticationTokenException:
//   the gateway's own AWS credentials were refused. Never the caller's 401/403 (their key was
//   fine): 502, code "upstream_auth_failed" (providers/adapter.h classify_failure), the message
//   naming the exception and that the operator must fix the provider's credentials (AWS's own
//   message, which names the account and the IAM principal, is left out).
//   Any other name: the HTTP status when it is an error status, else 502.
namespace sluice::protocol::bedrock_converse {

// The exception name in an `x-amzn-errortype` value or a body's `__type` / `code`: the part
// before the first ':', after the last '#' (botocore's rule):
// "ValidationException:http://..." -> "ValidationException",
// "com.amazon.coral.service#ExpiredTokenException" -> "ExpiredTokenException".
std::string_view error_type_name(std::string_view value);

// The Error for an error answer: `body` as received ({"message"} or {"Message"}; anything else
// is kept as no message), `error_type` the x-amzn-errortype header's value ("" when absent: the
// body's "__type" or "code" is used then), `http_status` the answer's status (0 when unknown),
// used only for names the table does not list.
Error error_from_wire(std::string_view body, std::string_view error_type, int http_status = 0);

// The Error for a ConverseStream exception message: `exception_type` the `:exception-type`
// header (a stream member name, first letter lower case, looked up like the HTTP names),
// `payload` its JSON payload.
Error stream_exception(std::string_view exception_type, std::string_view payload);

// The Error for a ConverseStream message whose `:message-type` is error (an error the service
// model does not list): `error_code` its `:error-code` header, looked up like an exception name,
// and `message` its `:error-message` header (plain text).
Error stream_error(std::string_view error_code, std::string_view message);

}  // namespace sluice::protocol::bedrock_converse
