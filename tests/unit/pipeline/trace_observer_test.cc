#include "pipeline/trace_observer.h"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "config/config.h"
#include "pipeline/snapshot.h"
#include "pipeline/trace_propagation.h"
#include "protocol/registry.h"
#include "providers/registry.h"

namespace sluice::pipeline {
namespace {

namespace json = boost::json;
using std::chrono::microseconds;

constexpr const char* kConfig = R"(
version: 1
listen: 127.0.0.1:0
traces: { endpoint: "http://127.0.0.1:4318/v1/traces" }
providers:
  - id: down
    adapter: openai
    base_url: http://10.0.0.5:8000/v1
    api_key: sk-provider-secret-down-1234
  - id: up
    adapter: anthropic
    base_url: https://claude.internal:8443
    api_key: sk-provider-secret-up-5678
routes:
  - alias: gpt
    targets:
      - { provider: down, model: m-down }
      - { provider: up, model: m-up }
keys:
  - { name: team-a, key: sk-sluice-gateway-key-000000001 }
)";

std::shared_ptr<const Snapshot> snapshot() {
  config::LoadOptions opts;
  opts.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto cfg = providers::load_config_string(kConfig, "test.yaml", opts);
  EXPECT_TRUE(cfg.has_value()) << (cfg ? "" : cfg.error().message());
  auto snap = Snapshot::build(*cfg);
  EXPECT_TRUE(snap.has_value());
  return *snap;
}

std::map<std::string, json::value> attributes(const json::object& span) {
  std::map<std::string, json::value> out;
  for (const auto& a : span.at("attributes").as_array()) {
    const json::object& value = a.at("value").as_object();
    out[std::string(a.at("key").as_string())] = value.begin()->value();
  }
  return out;
}

// A fallback model call: the first attempt got a 503, the second answered.
RequestContext fallback_call(const std::shared_ptr<const Snapshot>& snap) {
  RequestContext ctx;
  ctx.snapshot = snap;
  ctx.started = RequestContext::Clock::time_point(std::chrono::seconds(100));
  ctx.ended = ctx.started + std::chrono::milliseconds(250);
  ctx.wall_started = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  ctx.wall_ended = ctx.wall_started + std::chrono::milliseconds(250);
  ctx.endpoint = Endpoint::kModelCall;
  ctx.ingress = protocol::find_ingress("/v1/chat/completions");
  ctx.method = "POST";
  ctx.path = "/v1/chat/completions?key=secret";
  ctx.request_id = "req-1";
  ctx.status = 200;
  ctx.alias = "gpt";
  ctx.key = &snap->config().keys.front();
  ctx.outcome = Outcome::kComplete;
  ctx.finish_reason = "stop";
  ctx.usage = ir::Usage{.input_tokens = 11, .output_tokens = 7};
  ctx.trace = observability::begin_trace(
      1, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", true, 1.0);
  Attempt& a = ctx.attempts.emplace_back();
  a.provider = "down";
  a.model = "m-down";
  a.status = 503;
  a.error = Error(ErrorKind::kUpstreamStatus, 503, "upstream busy").with_code("upstream_status");
  a.started = microseconds(1000);
  a.duration = microseconds(20000);
  a.span = 0x1111;
  Attempt& b = ctx.attempts.emplace_back();
  b.provider = "up";
  b.model = "m-up";
  b.status = 200;
  b.started = microseconds(30000);
  b.duration = microseconds(200000);
  b.backoff = std::chrono::milliseconds(5);
  b.path = "1";
  b.span = 0x2222;
  return ctx;
}

TEST(TraceObserver, OneServerSpanAndOneClientSpanPerAttempt) {
  auto snap = snapshot();
  RequestContext ctx = fallback_call(snap);
  std::vector<std::string> spans;
  encode_request_spans(ctx, spans);
  ASSERT_EQ(spans.size(), 3u);
  for (const std::string& s : spans) {
    EXPECT_EQ(s.find("sk-provider-secret"), std::string::npos);
    EXPECT_EQ(s.find("sk-sluice-gateway-key"), std::string::npos);
    EXPECT_EQ(s.find("key=secret"), std::string::npos);
  }
  const json::object server = json::parse(spans[0]).as_object();
  EXPECT_EQ(server.at("name").as_string(), "chat gpt");
  EXPECT_EQ(server.at("kind").as_int64(), 2);
  EXPECT_EQ(server.at("traceId").as_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(server.at("parentSpanId").as_string(), "00f067aa0ba902b7");
  EXPECT_EQ(server.at("startTimeUnixNano").as_string(), "1700000000000000000");
  EXPECT_EQ(server.at("endTimeUnixNano").as_string(), "1700000000250000000");
  auto s = attributes(server);
  EXPECT_EQ(s["gen_ai.operation.name"].as_string(), "chat");
  EXPECT_EQ(s["gen_ai.request.model"].as_string(), "gpt");
  EXPECT_EQ(s["gen_ai.response.model"].as_string(), "m-up");
  EXPECT_EQ(s["gen_ai.provider.name"].as_string(), "anthropic");
  EXPECT_EQ(s["gen_ai.usage.input_tokens"].as_string(), "11");
  EXPECT_EQ(s["gen_ai.usage.output_tokens"].as_string(), "7");
  EXPECT_EQ(s["url.path"].as_string(), "/v1/chat/completions");
  EXPECT_EQ(s["sluice.key"].as_string(), "team-a");
  EXPECT_EQ(s["sluice.attempts"].as_string(), "2");
  EXPECT_TRUE(server.at("status").as_object().empty());

  const std::string server_id(server.at("spanId").as_string());
  const json::object first = json::parse(spans[1]).as_object();
  EXPECT_EQ(first.at("name").as_string(), "chat m-down");
  EXPECT_EQ(first.at("kind").as_int64(), 3);
  EXPECT_EQ(first.at("spanId").as_string(), "0000000000001111");
  EXPECT_EQ(first.at("parentSpanId").as_string(), server_id);
  EXPECT_EQ(first.at("startTimeUnixNano").as_string(), "1700000000001000000");
  EXPECT_EQ(first.at("endTimeUnixNano").as_string(), "1700000000021000000");
  EXPECT_EQ(first.at("status").at("code").as_int64(), 2);
  auto f = attributes(first);
  EXPECT_EQ(f["error.type"].as_string(), "upstream_status");
  EXPECT_EQ(f["http.response.status_code"].as_string(), "503");
  EXPECT_EQ(f["server.address"].as_string(), "10.0.0.5");
  EXPECT_EQ(f["server.port"].as_string(), "8000");
  EXPECT_EQ(f["gen_ai.provider.name"].as_string(), "openai");
  EXPECT_FALSE(f.contains("gen_ai.usage.input_tokens"));

  const json::object second = json::parse(spans[2]).as_object();
  auto g = attributes(second);
  EXPECT_EQ(second.at("spanId").as_string(), "0000000000002222");
  EXPECT_EQ(g["server.address"].as_string(), "claude.internal");
  EXPECT_EQ(g["server.port"].as_string(), "8443");
  EXPECT_EQ(g["gen_ai.usage.output_tokens"].as_string(), "7");
  EXPECT_EQ(g["sluice.backoff_ms"].as_string(), "5");
  EXPECT_EQ(g["sluice.attempt_path"].as_string(), "1");
  EXPECT_TRUE(second.at("status").as_object().empty());
}

TEST(TraceObserver, NothingWhenNotRecordingOrAProbe) {
  auto snap = snapshot();
  RequestContext ctx = fallback_call(snap);
  ctx.trace.recording = false;
  std::vector<std::string> spans;
  encode_request_spans(ctx, spans);
  EXPECT_TRUE(spans.empty());
  ctx.trace.recording = true;
  ctx.endpoint = Endpoint::kHealth;
  encode_request_spans(ctx, spans);
  EXPECT_TRUE(spans.empty());
}

TEST(TraceObserver, ServerSpanIsAnErrorFor5xxOnly) {
  auto snap = snapshot();
  RequestContext ctx = fallback_call(snap);
  ctx.status = 429;
  ctx.outcome = Outcome::kNone;
  ctx.attempts.clear();
  std::vector<std::string> spans;
  encode_request_spans(ctx, spans);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_TRUE(json::parse(spans[0]).at("status").as_object().empty());
  ctx.status = 502;
  ctx.outcome = Outcome::kUpstreamError;
  ctx.error =
      Error(ErrorKind::kUpstreamUnreachable, "cannot connect").with_code("upstream_connect_failed");
  spans.clear();
  encode_request_spans(ctx, spans);
  const json::value v = json::parse(spans[0]);
  EXPECT_EQ(v.at("status").at("code").as_int64(), 2);
  EXPECT_EQ(attributes(v.as_object())["error.type"].as_string(), "upstream_connect_failed");
}

TEST(UpstreamTrace, EachAttemptGetsItsOwnSpanUnderTheRequestsTrace) {
  auto snap = snapshot();
  RequestContext ctx = fallback_call(snap);
  HeaderList out;
  UpstreamTrace first;
  const observability::SpanId a = first.add(ctx, out);
  UpstreamTrace second;
  const observability::SpanId b = second.add(ctx, out);
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  ASSERT_EQ(out.view().size(), 2u);
  EXPECT_EQ(out.view()[0].first, "traceparent");
  EXPECT_EQ(out.view()[0].second,
            "00-4bf92f3577b34da6a3ce929d0e0e4736-" + observability::to_hex(a) + "-01");
}

TEST(UpstreamTrace, TracingOffCarriesTheCallersSpanAndNothingWithoutOne) {
  RequestContext ctx;
  ctx.trace = observability::begin_trace(
      1, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "a=1", false, 1.0);
  HeaderList out;
  UpstreamTrace trace;
  EXPECT_EQ(trace.add(ctx, out), 0x00f067aa0ba902b7u);
  ASSERT_EQ(out.view().size(), 2u);
  EXPECT_EQ(out.view()[0].second, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  EXPECT_EQ(out.view()[1].first, "tracestate");
  EXPECT_EQ(out.view()[1].second, "a=1");
  RequestContext none;
  HeaderList empty;
  UpstreamTrace nothing;
  EXPECT_EQ(nothing.add(none, empty), 0u);
  EXPECT_TRUE(empty.view().empty());
}

TEST(TraceHeaders, NamesAreMatchedCaseInsensitively) {
  EXPECT_TRUE(is_trace_header("Traceparent"));
  EXPECT_TRUE(is_trace_header("TRACESTATE"));
  EXPECT_FALSE(is_trace_header("traceparent-x"));
}

}  // namespace
}  // namespace sluice::pipeline
