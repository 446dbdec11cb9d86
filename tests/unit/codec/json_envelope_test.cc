#include "codec/json_envelope.h"

#include <array>

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

using Kind = EnvelopeField::Kind;

struct Scan {
  std::array<EnvelopeField, 4> fields = {EnvelopeField("model"), EnvelopeField("stream"),
                                         EnvelopeField("max_tokens"), EnvelopeField("messages")};
  bool ok = false;
  std::string error;
  explicit Scan(std::string_view body) { ok = scan_envelope(body, fields, error); }
};

TEST(ScanEnvelope, ReadsTopLevelMembersAndWhereTheStringSits) {
  const std::string body =
      R"({"messages":[{"role":"user","model":"nested"},{}],"model":"claude-x","stream":true,"max_tokens":64,"other":{"model":"no"}})";
  Scan s(body);
  ASSERT_TRUE(s.ok) << s.error;
  const auto& [model, stream, max_tokens, messages] = s.fields;
  EXPECT_EQ(model.kind, Kind::kString);
  EXPECT_EQ(model.text, "claude-x");
  ASSERT_TRUE(model.spliceable());
  EXPECT_EQ(body.substr(model.begin, model.end - model.begin), "\"claude-x\"");
  EXPECT_EQ(stream.kind, Kind::kBool);
  EXPECT_TRUE(stream.flag);
  EXPECT_EQ(max_tokens.kind, Kind::kInteger);
  EXPECT_EQ(max_tokens.integer, 64);
  EXPECT_EQ(messages.kind, Kind::kArray);
  EXPECT_EQ(messages.elements, 2u);
  EXPECT_EQ(
      splice_json_string(body, model.begin, model.end, "up\"stream"),
      R"({"messages":[{"role":"user","model":"nested"},{}],"model":"up\"stream","stream":true,"max_tokens":64,"other":{"model":"no"}})");
}

TEST(ScanEnvelope, EscapedOrRepeatedValuesAreReadButNotSpliceable) {
  Scan escaped(R"({"model":"a\u0062c"})");
  ASSERT_TRUE(escaped.ok);
  EXPECT_EQ(escaped.fields[0].text, "abc");
  EXPECT_FALSE(escaped.fields[0].spliceable());

  Scan repeated(R"({"model":"a","model":"b"})");
  ASSERT_TRUE(repeated.ok);
  EXPECT_EQ(repeated.fields[0].text, "b") << "the last value wins, as the upstream reads it";
  EXPECT_EQ(repeated.fields[0].count, 2);
  EXPECT_FALSE(repeated.fields[0].spliceable());

  Scan retyped(R"({"model":"a","model":3})");
  ASSERT_TRUE(retyped.ok);
  EXPECT_EQ(retyped.fields[0].kind, Kind::kInteger);
  EXPECT_FALSE(retyped.fields[0].spliceable());
}

TEST(ScanEnvelope, TypesAndAbsence) {
  Scan s(R"({"stream":null,"max_tokens":1.5,"messages":{}})");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.fields[0].kind, Kind::kAbsent);
  EXPECT_EQ(s.fields[1].kind, Kind::kNull);
  EXPECT_EQ(s.fields[2].kind, Kind::kNumber);
  EXPECT_EQ(s.fields[3].kind, Kind::kObject);
}

TEST(ScanEnvelope, RejectsWhatIsNotOneJsonObject) {
  for (const char* bad : {"", "[]", "\"x\"", "{", "{} {}", R"({"a":1,})"}) {
    Scan s(bad);
    EXPECT_FALSE(s.ok) << bad;
    EXPECT_FALSE(s.error.empty()) << bad;
  }
  std::string deep(100, '[');
  deep += std::string(100, ']');
  Scan too_deep("{\"x\":" + deep + "}");
  EXPECT_FALSE(too_deep.ok);
  // Numbers no double holds, anywhere: read as infinity or NaN, they would be sent on as
  // "Infinity" or "NaN" wherever a codec writes the document again (found by the fuzzers).
  for (const char* bad : {R"({"a":1e999})", R"({"a":[-1e999]})", R"({"m":{"b":0e99999}})"}) {
    Scan s(bad);
    EXPECT_FALSE(s.ok) << bad;
    EXPECT_NE(s.error.find("exponent"), std::string::npos) << s.error;
  }
  boost::system::error_code ec;
  EXPECT_TRUE(parse_json(R"({"a":[{"b":0e99999}]})", ec).is_null());
  EXPECT_EQ(ec, boost::json::error::exponent_overflow);
  EXPECT_EQ(parse_json(R"({"a":1e308})", ec).at("a").as_double(), 1e308);
  EXPECT_FALSE(ec);
}

// The path for a "model" that cannot be spliced at one known range (escaped, repeated): every
// top-level "model" is replaced and no other byte moves. Through a DOM, -5e90 had come out as
// -4.9999999999999995E90 (found by responses_request_fuzz).
TEST(ReplaceModels, EveryTopLevelModelAndNothingElse) {
  struct Case {
    std::string_view body;
    std::string_view want;
  };
  for (const Case& c : {
           Case{R"({"model":"g\tpt","n":-5e90,"x":1.10})", R"({"model":"up","n":-5e90,"x":1.10})"},
           Case{R"({ "model" : "a" , "model":"b"})", R"({ "model" : "up" , "model":"up"})"},
           Case{R"({"mod\u0065l":"a","k":"model"})", R"({"mod\u0065l":"up","k":"model"})"},
           Case{R"({"m":{"model":"inner"},"a":["model",{"model":1}],"s":"x\"}{"})",
                R"({"m":{"model":"inner"},"a":["model",{"model":1}],"s":"x\"}{"})"},
           Case{"{\n\t\"model\":\n\"a\"\r\n}", "{\n\t\"model\":\n\"up\"\r\n}"},
           Case{R"({"model":"\u00e9","mod\u00e9l":"keep"})",
                R"({"model":"up","mod\u00e9l":"keep"})"},
           Case{R"({})", R"({})"},
       }) {
    auto out = replace_models(c.body, "up");
    ASSERT_TRUE(out) << c.body;
    EXPECT_EQ(*out, c.want);
  }
  EXPECT_FALSE(replace_models("[1]", "up"));
  EXPECT_EQ(with_model(R"([1])", false, 0, 0, "up"), "[1]");
}

}  // namespace
}  // namespace sluice::codec
