#include "protocol/bedrock_converse/errors.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"

namespace sluice::protocol::bedrock_converse {
namespace {
namespace json = boost::json;

TEST(ConverseErrors, TypeNameIsTheHeadersFirstPart) {
  EXPECT_EQ(error_type_name("ValidationException:http://internal.amazon.com/coral/com.amazon."
                            "bedrock/"),
            "ValidationException");
  EXPECT_EQ(error_type_name("com.amazon.coral.service#ExpiredTokenException"),
            "ExpiredTokenException");
  EXPECT_EQ(error_type_name("ThrottlingException"), "ThrottlingException");
  EXPECT_EQ(error_type_name(""), "");
}

TEST(ConverseErrors, RecordedValidationErrorIsNotRetried) {
  const json::value doc =
      json::parse(test::read_fixture("bedrock", "error-400-validation-with-headers.json"));
  const json::object& recorded = doc.as_object();
  const Error e = error_from_wire(json::serialize(recorded.at("body")),
                                  recorded.at("headers").at("x-amzn-errortype").as_string(),
                                  static_cast<int>(recorded.at("status").as_int64()));
  EXPECT_EQ(e.kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(e.http_status(), 400);
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(e.code(), "ValidationException");
  EXPECT_TRUE(e.message().starts_with("The content field in the Message object at messages.1"));
}

TEST(ConverseErrors, StatusAndRetryabilityPerException) {
  struct Case {
    const char* type;
    int status;
    bool retryable;
  };
  const Case cases[] = {
      {"ThrottlingException", 429, true},       {"ServiceQuotaExceededException", 429, true},
      {"ModelNotReadyException", 503, true},    {"ServiceUnavailableException", 503, true},
      {"InternalServerException", 500, true},   {"ModelTimeoutException", 408, true},
      {"ModelStreamErrorException", 502, true}, {"ModelErrorException", 502, true},
      {"ValidationException", 400, false},      {"ResourceNotFoundException", 404, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type);
    const Error e = error_from_wire(R"({"message":"m"})", std::string(c.type) + ":http://x/");
    EXPECT_EQ(e.kind(), ErrorKind::kUpstreamStatus);
    EXPECT_EQ(e.http_status(), c.status);
    EXPECT_EQ(e.retryable(), c.retryable);
    EXPECT_EQ(e.code(), c.type);
    EXPECT_EQ(e.message(), "m");
  }
}

TEST(ConverseErrors, RefusedCredentialsAreTheGatewaysProblemNotTheCallers) {
  for (const char* type : {"AccessDeniedException", "UnrecognizedClientException",
                           "ExpiredTokenException", "IncompleteSignatureException"}) {
    SCOPED_TRACE(type);
    const Error e = error_from_wire(R"({"message":"User: arn:aws:iam::123456789012:user/gw )"
                                    R"(is not authorized to perform: bedrock:InvokeModel"})",
                                    type, 403);
    EXPECT_EQ(e.kind(), ErrorKind::kUpstreamStatus);
    EXPECT_EQ(e.http_status(), 502) << "never the caller's 401/403";
    EXPECT_EQ(e.code(), "upstream_auth_failed");
    EXPECT_NE(e.message().find(type), std::string::npos);
    EXPECT_NE(e.message().find("credentials"), std::string::npos);
    EXPECT_EQ(e.message().find("123456789012"), std::string::npos)
        << "AWS's message names the account and principal: the operator's, not the caller's";
  }
}

TEST(ConverseErrors, WithoutTheHeaderTheBodyOrTheStatusDecides) {
  const Error typed = error_from_wire(R"({"__type":"x#ThrottlingException","Message":"slow"})", "");
  EXPECT_EQ(typed.http_status(), 429);
  EXPECT_EQ(typed.message(), "slow");
  const Error unknown = error_from_wire(R"({"message":"odd"})", "BrandNewException", 418);
  EXPECT_EQ(unknown.http_status(), 418);
  EXPECT_EQ(unknown.code(), "BrandNewException");
  const Error bare = error_from_wire("<html>", "");
  EXPECT_EQ(bare.http_status(), 502);
  EXPECT_FALSE(bare.message().empty());
}

TEST(ConverseErrors, StreamExceptionsUseTheirMemberNames) {
  const Error e = stream_exception("modelStreamErrorException", R"({"message":"boom"})");
  EXPECT_EQ(e.code(), "ModelStreamErrorException");
  EXPECT_EQ(e.http_status(), 502);
  EXPECT_TRUE(e.retryable());
  EXPECT_EQ(e.message(), "boom");
  EXPECT_FALSE(stream_exception("validationException", "{}").retryable());
}

}  // namespace
}  // namespace sluice::protocol::bedrock_converse
