#include "protocol/openai_responses/ingress.h"

#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "codec/request_head.h"
#include "helpers.h"
#include "protocol/registry.h"

namespace sluice::protocol::openai_responses {
namespace {
namespace json = boost::json;
using testing::fixture;

const ResponsesIngress kIngress;

// decode() reads no header.
class NoHead final : public codec::RequestHead {
 public:
  std::string_view method() const override { return "POST"; }
  std::string_view target() const override { return "/v1/responses"; }
  std::string_view header(std::string_view) const override { return {}; }
  bool has_header(std::string_view) const override { return false; }
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)>) const override {}
};
const NoHead kHead;

IngressRequest decode_ok(std::string_view body) {
  auto r = kIngress.decode(body, kHead);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? std::move(*r) : IngressRequest{};
}

TEST(ResponsesIngress, IsRegisteredForItsPath) {
  EXPECT_EQ(find_ingress("/v1/responses"), find_ingress("/v1/responses"));
  ASSERT_NE(find_ingress("/v1/responses"), nullptr);
  EXPECT_EQ(find_ingress("/v1/responses")->protocol(), kResponsesProtocol);
  EXPECT_EQ(find_ingress("/v1/responses/resp_1"), nullptr);  // a stored object, not a model call
}

TEST(ResponsesIngress, LightDecodeReadsTheEnvelope) {
  const std::string body =
      R"({"model":"alias","input":[{"type":"web_search_call"}],"stream":true,"store":false,)"
      R"("previous_response_id":"resp_prev","tools":[{"type":"web_search"}]})";
  const IngressRequest r = decode_ok(body);
  EXPECT_EQ(r.model, "alias");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.continues, "resp_prev");
  EXPECT_FALSE(r.ir);  // no full decode: built-in tools pass through untouched
  // Passthrough: the caller's bytes with the model spliced, nothing else.
  std::string want = body;
  want.replace(want.find("\"alias\""), 7, "\"gpt-5\"");
  EXPECT_EQ(kIngress.passthrough_body(r, "gpt-5"), want);
}

TEST(ResponsesIngress, LightDecodeErrors) {
  struct Case {
    std::string_view body;
    std::string_view param;
    std::string_view message;
  };
  for (const Case& c : {
           Case{"", "", "The request body is empty; expected a JSON object."},
           Case{"{", "", ""},
           Case{"[1]", "", ""},
           Case{R"({"input":"x"})", "model", "Missing required parameter: 'model'."},
           Case{R"({"model":7})", "model", ""},
           Case{R"({"model":"m","input":5})", "input",
                "Invalid type for 'input': expected a string or an array of input items."},
           Case{R"({"model":"m","stream":"yes"})", "stream", ""},
           Case{R"({"model":"m","store":1})", "store", ""},
           Case{R"({"model":"m","previous_response_id":3})", "previous_response_id", ""},
       }) {
    SCOPED_TRACE(c.body);
    auto r = kIngress.decode(c.body, kHead);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(r.error().param(), c.param);
    if (!c.message.empty()) {
      EXPECT_EQ(r.error().message(), c.message);
    }
    // Answered in OpenAI's shape.
    const ErrorReply reply = kIngress.encode_error(r.error());
    EXPECT_EQ(reply.status, 400);
    const json::value e = json::parse(reply.body);
    EXPECT_EQ(e.at("error").at("type").as_string(), "invalid_request_error");
    EXPECT_TRUE(kIngress.is_native_error(reply.body));
  }
}

TEST(ResponsesIngress, ContinuationsCannotBeTranslated) {
  IngressRequest r =
      decode_ok(R"({"model":"claude","input":"next","previous_response_id":"resp_9"})");
  auto ir = kIngress.to_ir(r);
  ASSERT_FALSE(ir);
  EXPECT_EQ(ir.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(ir.error().param(), "previous_response_id");
  EXPECT_NE(ir.error().message().find("resp_9"), std::string::npos);
  EXPECT_NE(ir.error().message().find("does not speak the Responses API"), std::string::npos);
  const ErrorReply reply = kIngress.encode_error(ir.error());
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(json::parse(reply.body).at("error").at("param").as_string(), "previous_response_id");

  IngressRequest conv = decode_ok(R"({"model":"m","input":"x","conversation":"conv_1"})");
  auto conv_ir = kIngress.to_ir(conv);
  ASSERT_FALSE(conv_ir);
  EXPECT_EQ(conv_ir.error().param(), "conversation");
}

TEST(ResponsesIngress, ToIrDecodesTheWholeBodyAndCountsIgnoredFields) {
  IngressRequest r = decode_ok(R"({"model":"m","input":"hi","metadata":{},"truncation":"auto"})");
  auto ir = kIngress.to_ir(r);
  ASSERT_TRUE(ir);
  EXPECT_EQ(ir->messages.at(0).content.at(0).text, "hi");
  EXPECT_EQ(r.ignored_fields, 2u);

  IngressRequest strict = decode_ok(R"({"model":"m","input":"hi","metadata":{}})");
  strict.strict_fields = true;
  auto refused = kIngress.to_ir(strict);
  ASSERT_FALSE(refused);
  const ErrorReply reply = kIngress.encode_error(refused.error());
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(json::parse(reply.body).at("error").at("param").as_string(), "metadata");
}

TEST(ResponsesIngress, StoredObjects) {
  auto ref = kIngress.match_stored_object("/v1/responses/resp_123");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->id, "resp_123");
  EXPECT_EQ(ref->resource, "/responses/resp_123");
  ref = kIngress.match_stored_object("/v1/responses/resp_123/input_items?limit=5");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->id, "resp_123");
  EXPECT_EQ(ref->resource, "/responses/resp_123/input_items?limit=5");
  ref = kIngress.match_stored_object("/v1/responses/resp_1?include[]=x");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->id, "resp_1");
  EXPECT_FALSE(kIngress.match_stored_object("/v1/responses"));
  EXPECT_FALSE(kIngress.match_stored_object("/v1/responses/"));
  EXPECT_FALSE(kIngress.match_stored_object("/v1/responses/?x=1"));
  EXPECT_FALSE(kIngress.match_stored_object("/v1/chat/completions"));
  EXPECT_FALSE(kIngress.match_stored_object("/v1/responses/input_tokens"));  // another endpoint
  EXPECT_FALSE(kIngress.match_stored_object("/v1/responses/resp_"));

  const std::string body = fixture("response-text.json");
  const IngressRequest stored = decode_ok(R"({"model":"m","input":"x"})");
  EXPECT_EQ(kIngress.stored_id_of_body(stored, body),
            "resp_0e9950da9eac6a780068fbaa1bc030819da585a6f85ddad1e6");
  const IngressRequest unstored = decode_ok(R"({"model":"m","input":"x","store":false})");
  EXPECT_EQ(kIngress.stored_id_of_body(unstored, body), "");
  EXPECT_EQ(kIngress.stored_id_of_body(stored, "not json"), "");
}

TEST(ResponsesIngress, UsageOfBody) {
  EXPECT_EQ(kIngress.usage_of_body(fixture("response-reasoning.json")),
            (ir::Usage{88, 547, 0, 0, 128}));
  EXPECT_FALSE(kIngress.usage_of_body(fixture("error-400-invalid-temperature.json")));
}

TEST(ResponsesIngress, StreamErrorsForRelayedStreams) {
  std::string out;
  kIngress.append_stream_error(Error(ErrorKind::kUpstreamTimeout, "upstream went quiet"), out);
  ASSERT_TRUE(out.starts_with("event: error\ndata: {"));
  const json::value v = json::parse(out.substr(out.find('{')));
  EXPECT_EQ(v.at("type").as_string(), "error");
  EXPECT_EQ(v.at("message").as_string(), "upstream went quiet");
  EXPECT_EQ(v.at("error").at("type").as_string(), "timeout_error");
  EXPECT_FALSE(v.as_object().contains("sequence_number"));
}

TEST(ResponsesIngress, TranslatedAnswers) {
  ir::Response r;
  r.id = "msg_1";
  r.content.push_back(ir::ContentPart::make_text("hi"));
  r.usage = ir::Usage{3, 1, 0, 0, 0};
  bool clamped = true;
  auto body = kIngress.encode_response(r, clamped);
  ASSERT_TRUE(body);
  EXPECT_FALSE(clamped);
  const json::value v = json::parse(*body);
  EXPECT_EQ(v.at("id").as_string(), "resp_msg_1");
  EXPECT_GT(v.at("created_at").as_int64(), 1600000000);

  IngressRequest req = decode_ok(R"({"model":"m","input":"x","stream":true})");
  auto encoder = kIngress.make_stream_encoder(req);
  ASSERT_NE(encoder, nullptr);
  auto sniffer = kIngress.make_stream_sniffer(req);
  ASSERT_NE(sniffer, nullptr);
}

}  // namespace
}  // namespace sluice::protocol::openai_responses
