#include "protocol/anthropic/errors.h"

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"

namespace sluice::protocol::anthropic {
namespace {
namespace json = boost::json;

TEST(AnthropicErrors, TypeForStatusFollowsTheDocumentedTable) {
  EXPECT_EQ(error_type_for_status(400), "invalid_request_error");
  EXPECT_EQ(error_type_for_status(401), "authentication_error");
  EXPECT_EQ(error_type_for_status(402), "billing_error");
  EXPECT_EQ(error_type_for_status(403), "permission_error");
  EXPECT_EQ(error_type_for_status(404), "not_found_error");
  EXPECT_EQ(error_type_for_status(409), "conflict_error");
  EXPECT_EQ(error_type_for_status(413), "request_too_large");
  EXPECT_EQ(error_type_for_status(429), "rate_limit_error");
  EXPECT_EQ(error_type_for_status(500), "api_error");
  EXPECT_EQ(error_type_for_status(504), "timeout_error");
  EXPECT_EQ(error_type_for_status(529), "overloaded_error");
  EXPECT_EQ(error_type_for_status(422), "invalid_request_error");  // "other 4XX"
  EXPECT_EQ(error_type_for_status(503), "overloaded_error");
  EXPECT_EQ(error_type_for_status(502), "api_error");
  EXPECT_EQ(error_type_for_status(200), "api_error");
}

TEST(AnthropicErrors, TypeAndStatusForSluiceErrors) {
  struct Case {
    Error error;
    const char* type;
    int status;
  };
  const Case cases[] = {
      {Error(ErrorKind::kBadRequest, "x"), "invalid_request_error", 400},
      {Error(ErrorKind::kUnauthorized, "x"), "authentication_error", 401},
      {Error(ErrorKind::kForbidden, "x"), "permission_error", 403},
      {Error(ErrorKind::kNotFound, "x"), "not_found_error", 404},
      {Error(ErrorKind::kMethodNotAllowed, "x"), "invalid_request_error", 405},
      {Error(ErrorKind::kPayloadTooLarge, "x"), "request_too_large", 413},
      {Error(ErrorKind::kRateLimited, "x"), "rate_limit_error", 429},
      {Error(ErrorKind::kUnavailable, "x"), "overloaded_error", 503},
      {Error(ErrorKind::kUpstreamTimeout, "x"), "timeout_error", 504},
      {Error(ErrorKind::kUpstreamUnreachable, "x"), "api_error", 502},
      {Error(ErrorKind::kUpstreamProtocol, "x"), "api_error", 502},
      {Error(ErrorKind::kInternal, "x"), "api_error", 500},
      {Error(ErrorKind::kUpstreamStatus, 529, "x"), "overloaded_error", 529},
      {Error(ErrorKind::kUpstreamStatus, 503, "x"), "overloaded_error", 503},
      {Error(ErrorKind::kUpstreamStatus, 401, "x"), "authentication_error", 401},
      {Error(ErrorKind::kUpstreamStatus, 418, "x"), "invalid_request_error", 418},
      // An Anthropic type carried in code() wins over the status.
      {Error(ErrorKind::kUpstreamStatus, 400, "x").with_code("billing_error"), "billing_error",
       400},
      // A non-Anthropic code does not.
      {Error(ErrorKind::kNotFound, "x").with_code("model_not_found"), "not_found_error", 404},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(error_type(c.error), c.type) << to_string(c.error.kind());
    EXPECT_EQ(error_status(c.error), c.status) << to_string(c.error.kind());
  }
  EXPECT_EQ(error_status(Error(ErrorKind::kInternal, 200, "odd")), 500);
}

TEST(AnthropicErrors, BodyShape) {
  const std::string body =
      encode_error(Error(ErrorKind::kRateLimited, "slow \"down\"\n").with_retry_after(3));
  json::value v = json::parse(body);
  EXPECT_EQ(
      v,
      json::parse(
          R"({"type":"error","error":{"type":"rate_limit_error","message":"slow \"down\"\n"}})"));
  EXPECT_EQ(encode_error("overloaded_error", "Overloaded"),
            R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
}

TEST(AnthropicErrors, WireErrorsKeepTheirTypeAndStatus) {
  json::value fixture =
      json::parse(test::read_fixture("anthropic", "error-400-invalid-request.json"));
  const json::value& err = fixture.at("error");
  Error e = error_from_wire(json::value_to<std::string>(err.at("type")),
                            json::value_to<std::string>(err.at("message")));
  EXPECT_EQ(e.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(e.http_status(), 400);
  EXPECT_FALSE(e.retryable());
  json::value reencoded = json::parse(encode_error(e));
  EXPECT_EQ(reencoded.at("type"), "error");
  EXPECT_EQ(reencoded.at("error"), err);

  Error overloaded = error_from_wire("overloaded_error", "Overloaded");
  EXPECT_EQ(overloaded.http_status(), 529);
  EXPECT_TRUE(overloaded.retryable());
  Error unknown = error_from_wire("brand_new_error", "?");
  EXPECT_EQ(unknown.http_status(), 500);
  EXPECT_EQ(error_type(unknown), "api_error");
}

}  // namespace
}  // namespace sluice::protocol::anthropic
