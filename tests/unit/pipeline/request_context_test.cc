#include "pipeline/request_context.h"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "config/config.h"
#include "protocol/registry.h"

namespace sluice::pipeline {
namespace {

namespace json = boost::json;

TEST(AccessLog, MinimalLineIsValidJson) {
  RequestContext ctx;
  ctx.request_id = "abc";
  ctx.method = "GET";
  ctx.path = "/healthz";
  ctx.status = 200;
  json::value v = json::parse(format_access_log(ctx));
  const json::object& o = v.as_object();
  EXPECT_EQ(o.at("request_id").as_string(), "abc");
  EXPECT_EQ(o.at("status").as_int64(), 200);
  EXPECT_EQ(o.at("outcome").as_string(), "none");
  EXPECT_FALSE(o.contains("usage"));
  EXPECT_FALSE(o.contains("alias"));
  EXPECT_TRUE(o.at("ts").is_int64());
}

TEST(AccessLog, ModelCallWithUsageErrorAndEscaping) {
  RequestContext ctx;
  ctx.request_id = "r1";
  ctx.method = "POST";
  ctx.path = "/v1/messages?x=\"q\"";
  ctx.status = 200;
  config::Key key;
  key.name = "team\\a";
  ctx.key = &key;
  ctx.alias = "gpt";
  Attempt& failed = ctx.attempts.emplace_back();
  failed.provider = "down";
  failed.model = "m0";
  failed.status = 503;
  failed.error = Error(ErrorKind::kUpstreamStatus, 503, "busy");
  Attempt& attempt = ctx.attempts.emplace_back();
  attempt.provider = "up";
  attempt.model = "m";
  attempt.status = 200;
  attempt.passthrough = false;
  ctx.stream = true;
  ctx.ingress = protocol::find_ingress("/v1/messages");
  ctx.outcome = Outcome::kMidstreamError;
  ctx.finish_reason = "length";
  ctx.error = Error(ErrorKind::kUpstreamProtocol, "broke\nhere").with_code("upstream_truncated");
  ctx.usage = ir::Usage{.input_tokens = 10, .output_tokens = 3, .cache_read_tokens = 4};
  ctx.events = 7;
  ctx.first_token = std::chrono::microseconds(1500);
  json::value v = json::parse(format_access_log(ctx));
  const json::object& o = v.as_object();
  EXPECT_EQ(o.at("path").as_string(), "/v1/messages?x=\"q\"");
  EXPECT_EQ(o.at("key").as_string(), "team\\a");
  EXPECT_EQ(o.at("api").as_string(), "anthropic");
  EXPECT_EQ(o.at("stream").as_bool(), true);
  EXPECT_EQ(o.at("outcome").as_string(), "midstream_error");
  EXPECT_EQ(o.at("error").as_string(), "upstream_protocol");
  EXPECT_EQ(o.at("error_code").as_string(), "upstream_truncated");
  EXPECT_EQ(o.at("error_message").as_string(), "broke\nhere");
  const json::object& u = o.at("usage").as_object();
  EXPECT_EQ(u.at("input_tokens").to_number<std::uint64_t>(), 10u);
  EXPECT_EQ(u.at("cache_read_tokens").to_number<std::uint64_t>(), 4u);
  EXPECT_EQ(u.at("reasoning_tokens").to_number<std::uint64_t>(), 0u);
  EXPECT_EQ(o.at("events").to_number<std::uint64_t>(), 7u);
  EXPECT_EQ(o.at("first_token_us").as_int64(), 1500);
  EXPECT_EQ(o.at("provider").as_string(), "up");
  EXPECT_EQ(o.at("attempts").to_number<std::uint64_t>(), 2u);
  const json::array& upstream = o.at("upstream").as_array();
  ASSERT_EQ(upstream.size(), 2u);
  EXPECT_EQ(upstream[0].at("provider").as_string(), "down");
  EXPECT_EQ(upstream[0].at("status").to_number<int>(), 503);
  EXPECT_EQ(upstream[0].at("error").as_string(), "upstream_status");
  EXPECT_EQ(upstream[1].at("status").to_number<int>(), 200);
  EXPECT_FALSE(upstream[1].as_object().contains("error"));
  EXPECT_FALSE(upstream[1].as_object().contains("acquire_us")) << "no timing was recorded";
  EXPECT_FALSE(o.contains("ignored_fields"));
}

TEST(AccessLog, IgnoredFieldsAreCounted) {
  RequestContext ctx;
  ctx.ignored_fields = 2;
  json::value v = json::parse(format_access_log(ctx));
  EXPECT_EQ(v.as_object().at("ignored_fields").to_number<std::uint64_t>(), 2u);
}

TEST(AccessLog, SchemaDriftIsWrittenPerAttemptWhenNonZero) {
  RequestContext ctx;
  Attempt& first = ctx.attempts.emplace_back();
  first.provider = "a";
  Attempt& second = ctx.attempts.emplace_back();
  second.provider = "b";
  second.unknown_fields = 3;
  json::value v = json::parse(format_access_log(ctx));
  const json::array& upstream = v.as_object().at("upstream").as_array();
  ASSERT_EQ(upstream.size(), 2u);
  EXPECT_FALSE(upstream[0].as_object().contains("drift"));
  EXPECT_EQ(upstream[1].at("drift").to_number<std::uint64_t>(), 3u);
}

TEST(AccessLog, FinishedModelCallWithoutUsageSaysNull) {
  RequestContext ctx;
  ctx.outcome = Outcome::kUpstreamError;
  json::value v = json::parse(format_access_log(ctx));
  EXPECT_TRUE(v.as_object().at("usage").is_null());
}

}  // namespace
}  // namespace sluice::pipeline
