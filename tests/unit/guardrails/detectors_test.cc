#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "guardrails/detector.h"

// The built-in detectors on what they must find and on their near misses: the validators
// (Luhn, mod 97, the SSA's rules, inet_pton) are what keep an order number from being a card.
namespace sluice::guardrails {
namespace {

std::vector<std::string> found(std::string_view detector, std::string_view text) {
  std::unique_ptr<Detector> d = builtin_detector(detector);
  EXPECT_NE(d, nullptr) << detector;
  std::vector<Span> spans;
  if (d) d->scan(text, 0, spans);
  std::vector<std::string> out;
  for (const Span& s : spans) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

using V = std::vector<std::string>;

TEST(Detectors, Email) {
  EXPECT_EQ(found("email", "write to jane.doe+tag@example.co.uk, or bob@corp.example."),
            (V{"jane.doe+tag@example.co.uk", "bob@corp.example"}));
  EXPECT_EQ(found("email", "user@localhost, a@b.c, @handle, name@.com, x@y..com"), V{});
  // Found by the fuzz target: the second local part read back into the first address's domain,
  // so the two spans overlapped.
  EXPECT_EQ(found("email", "ann@corp.example_bob@mail.example"),
            (V{"ann@corp.example", "_bob@mail.example"}));
}

TEST(Detectors, PaymentCardNeedsLuhnAndAnIssuer) {
  EXPECT_EQ(found("payment_card", "card 4111 1111 1111 1111 exp 12/29"), V{"4111 1111 1111 1111"});
  EXPECT_EQ(found("payment_card", "amex 3782-822463-10005."), V{"3782-822463-10005"});
  EXPECT_EQ(found("payment_card", "5555555555554444"), V{"5555555555554444"});
  // Fails Luhn; a valid Luhn number outside every issuer range; mixed separators; too long.
  EXPECT_EQ(found("payment_card", "order 4111111111111112"), V{});
  EXPECT_EQ(found("payment_card", "id 1234567812345670"), V{});
  EXPECT_EQ(found("payment_card", "4111 1111-1111 1111"), V{});
  EXPECT_EQ(found("payment_card", "41111111111111111111111"), V{});
  EXPECT_EQ(found("payment_card", "x4111111111111111"), V{});
}

TEST(Detectors, Iban) {
  EXPECT_EQ(found("iban", "IBAN DE89 3704 0044 0532 0130 00 please"),
            V{"DE89 3704 0044 0532 0130 00"});
  EXPECT_EQ(found("iban", "GB82WEST12345698765432"), V{"GB82WEST12345698765432"});
  EXPECT_EQ(found("iban", "GB83WEST12345698765432"), V{}) << "check digits wrong";
}

TEST(Detectors, UsSsn) {
  EXPECT_EQ(found("us_ssn", "SSN 123-45-6789."), V{"123-45-6789"});
  EXPECT_EQ(found("us_ssn", "000-12-3456 666-12-3456 912-12-3456 123-00-4567 123-45-0000"), V{});
  EXPECT_EQ(found("us_ssn", "1123-45-6789 123-45-67890"), V{});
}

TEST(Detectors, Phone) {
  EXPECT_EQ(found("phone", "call +1 415 555 0100 or +442079460958"),
            (V{"+1 415 555 0100", "+442079460958"}));
  EXPECT_EQ(found("phone", "office (415) 555-0100, home 415-555-0100, fr 06 12 34 56 78"),
            (V{"(415) 555-0100", "415-555-0100", "06 12 34 56 78"}));
  // Dates, IPs, bare ids, versions and cards are not phones.
  EXPECT_EQ(found("phone", "2024-01-15 192.168.100.200 4155550100 v1.2.3 4111 1111 1111 1111"),
            V{});
}

TEST(Detectors, Ip) {
  EXPECT_EQ(found("ipv4", "from 10.0.0.1 and 192.168.1.255."), (V{"10.0.0.1", "192.168.1.255"}));
  EXPECT_EQ(found("ipv4", "256.1.1.1 1.2.3 1.2.3.4.5 01.2.3.4"), V{});
  EXPECT_EQ(found("ipv6", "at 2001:db8::8a2e:370:7334 and fe80::1."),
            (V{"2001:db8::8a2e:370:7334", "fe80::1"}));
  EXPECT_EQ(found("ipv6", "std::string, 12:30:45, aa:bb:cc:dd:ee:ff, a::b::c"), V{});
}

TEST(Detectors, Secrets) {
  const std::string jwt =
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
      "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
  EXPECT_EQ(found("jwt", "token: " + jwt + " end"), V{jwt});
  EXPECT_EQ(found("aws_access_key", "AKIAIOSFODNN7EXAMPLE is the key"), V{"AKIAIOSFODNN7EXAMPLE"});
  EXPECT_EQ(
      found("openai_key", "sk-proj-abcdefghijklmnopqrstuvwx sk-ant-api03-abcdefghijklmnopqrstuv"),
      V{"sk-proj-abcdefghijklmnopqrstuvwx"});
  EXPECT_EQ(found("anthropic_key", "key=sk-ant-api03-abcdefghijklmnopqrstuv"),
            V{"sk-ant-api03-abcdefghijklmnopqrstuv"});
  EXPECT_EQ(found("github_token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            V{"ghp_abcdefghijklmnopqrstuvwxyz0123456789"});
  EXPECT_EQ(found("openai_key", "task-force sk-short"), V{});
  const std::string key =
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
  EXPECT_EQ(found("private_key", "here:\n" + key + "\nthanks"), V{key});
  EXPECT_EQ(found("private_key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"),
            V{});
}

TEST(Detectors, PatternsAndWords) {
  std::string error;
  auto re = regex_detector("falcon", R"(project\s+falcon)", true, error);
  ASSERT_NE(re, nullptr) << error;
  std::vector<Span> spans;
  re->scan("About PROJECT  Falcon and project falcon.", 0, spans);
  EXPECT_EQ(spans.size(), 2u);
  EXPECT_EQ(re->label(), "FALCON");

  EXPECT_EQ(regex_detector("bad", "(a", false, error), nullptr);
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(regex_detector("backref", R"((a)\1)", false, error), nullptr) << "RE2 has none";

  const std::vector<std::string> words = {"class", "classic", "top secret"};
  auto kw = keyword_detector("words", words, true, error);
  ASSERT_NE(kw, nullptr) << error;
  spans.clear();
  const std::string text = "A Classic, not a subclass; TOP SECRET. class";
  kw->scan(text, 0, spans);
  std::vector<std::string> got;
  for (const Span& s : spans) got.push_back(text.substr(s.begin, s.end - s.begin));
  EXPECT_EQ(got, (V{"Classic", "TOP SECRET", "class"}));
}

// Linear time: a pattern that backtracking engines take exponential time on is a plain scan.
TEST(Detectors, NoReDoS) {
  std::string error;
  auto re = regex_detector("evil", "(a+)+$", false, error);
  ASSERT_NE(re, nullptr) << error;
  const std::string text = std::string(100'000, 'a') + "!";
  std::vector<Span> spans;
  re->scan(text, 0, spans);
  EXPECT_TRUE(spans.empty());
}

}  // namespace
}  // namespace sluice::guardrails
