#include "guardrails/external.h"

#include <gtest/gtest.h>

// External checkers' wire shapes: what each format is sent and what each answer means, and that
// an answer of another shape is a failure (never a clean verdict).
namespace sluice::guardrails {
namespace {

using Format = config::ExternalChecker::Format;
using Kind = CheckerVerdict::Kind;

config::ExternalChecker checker(Format format) {
  config::ExternalChecker c;
  c.format = format;
  return c;
}

TEST(ExternalChecker, RequestBodies) {
  EXPECT_EQ(checker_request(checker(Format::kGeneric), "a \"b\"\nc"),
            R"({"text":"a \"b\"\nc","direction":"input"})");
  EXPECT_EQ(checker_request(checker(Format::kPresidio), "hi"), R"({"text":"hi","language":"en"})");
  config::ExternalChecker moderation = checker(Format::kModeration);
  EXPECT_EQ(checker_request(moderation, "hi"), R"({"input":"hi"})");
  moderation.model = "omni-moderation-latest";
  EXPECT_EQ(checker_request(moderation, "hi"),
            R"({"input":"hi","model":"omni-moderation-latest"})");
}

TEST(ExternalChecker, PresidioCountsEntitiesAtOrOverTheScore) {
  const config::ExternalChecker c = checker(Format::kPresidio);
  EXPECT_EQ(read_checker_answer(c, "[]").kind, Kind::kClean);
  const CheckerVerdict v =
      read_checker_answer(c, R"([{"entity_type":"PERSON","start":0,"end":4,"score":0.85},)"
                             R"({"entity_type":"PHONE_NUMBER","start":9,"end":20,"score":0.5},)"
                             R"({"entity_type":"LOCATION","start":5,"end":8,"score":0.2}])");
  EXPECT_EQ(v.kind, Kind::kFound);
  EXPECT_EQ(v.count, 2u);
  EXPECT_EQ(read_checker_answer(c, R"([{"entity_type":"X","score":0.1}])").kind, Kind::kClean);
  EXPECT_EQ(read_checker_answer(c, R"({"error":"x"})").kind, Kind::kUnusable);
  EXPECT_EQ(read_checker_answer(c, R"([{"entity_type":"X"}])").kind, Kind::kUnusable);
}

TEST(ExternalChecker, ModerationAndGeneric) {
  const config::ExternalChecker m = checker(Format::kModeration);
  EXPECT_EQ(read_checker_answer(m, R"({"results":[{"flagged":false}]})").kind, Kind::kClean);
  EXPECT_EQ(read_checker_answer(m, R"({"results":[{"flagged":false},{"flagged":true}]})").kind,
            Kind::kFound);
  EXPECT_EQ(read_checker_answer(m, R"({"results":[]})").kind, Kind::kUnusable);
  EXPECT_EQ(read_checker_answer(m, R"({"results":[{"flagged":"yes"}]})").kind, Kind::kUnusable);

  const config::ExternalChecker g = checker(Format::kGeneric);
  EXPECT_EQ(read_checker_answer(g, R"({"verdict":"allow"})").kind, Kind::kClean);
  const CheckerVerdict flag = read_checker_answer(g, R"({"verdict":"flag","reason":"r"})");
  EXPECT_EQ(flag.kind, Kind::kFound);
  EXPECT_FALSE(flag.block);
  EXPECT_TRUE(read_checker_answer(g, R"({"verdict":"block"})").block);
  EXPECT_EQ(read_checker_answer(g, R"({"verdict":"maybe"})").kind, Kind::kUnusable);
  EXPECT_EQ(read_checker_answer(g, "not json").kind, Kind::kUnusable);
}

}  // namespace
}  // namespace sluice::guardrails
