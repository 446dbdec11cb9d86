#include "aws/sigv4.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::aws {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using std::chrono::system_clock;

// The suite's fixed context (tests/fixtures/aws-sigv4/PROVENANCE.md): every case's context.json
// has these credentials, this time, region and service; only the flags and the token vary.
constexpr std::string_view kAccessKeyId = "AKIDEXAMPLE";
constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const system_clock::time_point kSuiteTime{seconds(1440938160)};  // 2015-08-30T12:36:00Z

const fs::path kSuiteDir = fs::path(SLUICE_FIXTURES_DIR) / "aws-sigv4";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The value of a top-level or nested `"key": value` in a context.json (true/false or a string),
// enough for the suite's flat files without a JSON library.
std::optional<std::string> json_value(const std::string& json, std::string_view key) {
  const std::string needle = "\"" + std::string(key) + "\":";
  std::size_t at = json.find(needle);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  at += needle.size();
  while (at < json.size() && json[at] == ' ') {
    ++at;
  }
  if (at < json.size() && json[at] == '"') {
    const std::size_t end = json.find('"', at + 1);
    return json.substr(at + 1, end - at - 1);
  }
  const std::size_t end = json.find_first_of(",\n}", at);
  return json.substr(at, end - at);
}

// One case of the suite: request.txt parsed into what the signer takes (owned here, viewed by
// the Request), the context flags, and the expected stages.
struct SuiteCase {
  std::string name;
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;  // decoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  SignerOptions options;
  Credentials credentials;
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;
  std::string authorization;
  std::string signed_request;

  std::vector<QueryParam> query_views() const {
    std::vector<QueryParam> out;
    for (const auto& [name, value] : query) {
      out.push_back({name, value});
    }
    return out;
  }
  std::vector<HeaderView> header_views() const {
    std::vector<HeaderView> out;
    for (const auto& [name, value] : headers) {
      out.push_back({name, value});
    }
    return out;
  }
};

SuiteCase load_case(const fs::path& dir) {
  SuiteCase c;
  c.name = dir.filename().string();
  const std::string request = read_file(dir / "request.txt");
  std::size_t line_end = request.find('\n');
  const std::string request_line = request.substr(0, line_end);
  // "METHOD <target> HTTP/1.1"; the target may contain spaces (get-space-*).
  const std::size_t method_end = request_line.find(' ');
  const std::size_t version_at = request_line.rfind(" HTTP/");
  c.method = request_line.substr(0, method_end);
  const std::string target = request_line.substr(method_end + 1, version_at - method_end - 1);
  const std::size_t question = target.find('?');
  c.path = target.substr(0, question);
  if (question != std::string::npos) {
    std::string_view rest = std::string_view(target).substr(question + 1);
    while (!rest.empty()) {
      const std::size_t amp = rest.find('&');
      const std::string_view pair = rest.substr(0, amp);
      const std::size_t eq = pair.find('=');
      c.query.emplace_back(percent_decode(pair.substr(0, eq)),
                           eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1)));
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    }
  }
  // Header lines up to a blank line; a line starting with whitespace continues the previous
  // value (obsolete line folding, get-header-value-multiline), unfolded to one space.
  std::size_t at = line_end == std::string::npos ? request.size() : line_end + 1;
  while (at < request.size()) {
    line_end = request.find('\n', at);
    const std::string line =
        request.substr(at, line_end == std::string::npos ? std::string::npos : line_end - at);
    at = line_end == std::string::npos ? request.size() : line_end + 1;
    if (line.empty()) {
      c.body = request.substr(at);
      break;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      c.headers.back().second += " " + line;
      continue;
    }
    const std::size_t colon = line.find(':');
    c.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }

  const std::string context = read_file(dir / "context.json");
  EXPECT_EQ(json_value(context, "access_key_id"), std::string(kAccessKeyId)) << c.name;
  EXPECT_EQ(json_value(context, "secret_access_key"), std::string(kSecret)) << c.name;
  EXPECT_EQ(json_value(context, "timestamp"), "2015-08-30T12:36:00Z") << c.name;
  EXPECT_EQ(json_value(context, "region"), "us-east-1") << c.name;
  c.options.normalize_path = json_value(context, "normalize") != "false";
  c.options.add_content_sha256 = json_value(context, "sign_body") == "true";
  c.options.sign_session_token = json_value(context, "omit_session_token") != "true";
  c.credentials = {std::string(kAccessKeyId), std::string(kSecret),
                   json_value(context, "token").value_or("")};

  c.canonical_request = read_file(dir / "header-canonical-request.txt");
  c.string_to_sign = read_file(dir / "header-string-to-sign.txt");
  c.signature = read_file(dir / "header-signature.txt");
  c.signed_request = read_file(dir / "header-signed-request.txt");
  const std::size_t authz = c.signed_request.find("\nAuthorization:");
  if (authz != std::string::npos) {
    const std::size_t begin = authz + std::string_view("\nAuthorization:").size();
    c.authorization = c.signed_request.substr(begin, c.signed_request.find('\n', begin) - begin);
  }
  return c;
}

std::vector<fs::path> suite_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kSuiteDir)) {
    if (entry.is_directory()) {
      dirs.push_back(entry.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string header_value(const Signed& s, std::string_view name) {
  for (const Header& h : s.headers) {
    if (h.name == name) {
      return h.value;
    }
  }
  return "<absent>";
}

TEST(SigV4Suite, EveryCaseMatchesStageByStage) {
  const auto dirs = suite_dirs();
  ASSERT_GE(dirs.size(), 38u) << "fixtures missing under " << kSuiteDir;
  for (const fs::path& dir : dirs) {
    const SuiteCase c = load_case(dir);
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.authorization.empty());
    const auto query = c.query_views();
    const auto headers = c.header_views();
    const Request request{c.method, c.path, query, headers, Payload::bytes(c.body)};
    const Signer signer("us-east-1", "service", c.options);

    const auto signed_request = signer.sign(request, c.credentials, kSuiteTime);
    ASSERT_TRUE(signed_request.has_value()) << signed_request.error().message();
    EXPECT_EQ(signed_request->canonical_request, c.canonical_request);
    EXPECT_EQ(signed_request->string_to_sign, c.string_to_sign);
    EXPECT_EQ(signed_request->signature, c.signature);
    EXPECT_EQ(header_value(*signed_request, "authorization"), c.authorization);
    EXPECT_EQ(header_value(*signed_request, "x-amz-date"), "20150830T123600Z");
    // The headers the signer adds appear in the suite's signed request with these values.
    for (const Header& h : signed_request->headers) {
      EXPECT_NE(c.signed_request.find(":" + h.value + "\n"), std::string::npos) << h.name;
    }
    if (c.credentials.session_token.empty()) {
      EXPECT_EQ(header_value(*signed_request, "x-amz-security-token"), "<absent>");
    } else {
      EXPECT_EQ(header_value(*signed_request, "x-amz-security-token"), c.credentials.session_token);
    }

    // The stages alone give the same bytes.
    auto uri = canonical_uri(c.path, c.options);
    ASSERT_TRUE(uri.has_value());
    auto to_sign = string_to_sign("20150830T123600Z", "20150830/us-east-1/service/aws4_request",
                                  c.canonical_request);
    ASSERT_TRUE(to_sign.has_value());
    EXPECT_EQ(*to_sign, c.string_to_sign);
    auto key = derive_signing_key(kSecret, "20150830", "us-east-1", "service");
    ASSERT_TRUE(key.has_value());
    auto sig = signature(*key, c.string_to_sign);
    ASSERT_TRUE(sig.has_value());
    EXPECT_EQ(*sig, c.signature);
  }
}

TEST(SigV4Suite, SessionTokenSignedOrAddedAfter) {
  // post-sts-header-before signs x-amz-security-token; post-sts-header-after adds it unsigned.
  for (const std::string_view name : {"post-sts-header-before", "post-sts-header-after"}) {
    const SuiteCase c = load_case(kSuiteDir / name);
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.credentials.session_token.empty());
    const auto headers = c.header_views();
    const Request request{c.method, c.path, {}, headers, Payload::bytes(c.body)};
    const auto s =
        Signer("us-east-1", "service", c.options).sign(request, c.credentials, kSuiteTime);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->canonical_request.find("x-amz-security-token") != std::string::npos,
              c.options.sign_session_token);
    EXPECT_EQ(header_value(*s, "x-amz-security-token"), c.credentials.session_token);
    EXPECT_EQ(header_value(*s, "authorization"), c.authorization);
  }
}

// The signing-key example of the guide ("Examples of how to derive a signing key",
// docs.aws.amazon.com/general/latest/gr/sigv4-calculate-signature.html): IAM, 20150830.
TEST(SigV4Stages, SigningKeyAndSignatureMatchTheDocumentedExample) {
  auto key = derive_signing_key(kSecret, "20150830", "us-east-1", "iam");
  ASSERT_TRUE(key.has_value());
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char b : *key) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 0x0f]);
  }
  EXPECT_EQ(hex, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
  auto sig = signature(*key,
                       "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/iam/aws4_request\n"
                       "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59");
  ASSERT_TRUE(sig.has_value());
  EXPECT_EQ(*sig, "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

TEST(SigV4Stages, CanonicalPieces) {
  EXPECT_EQ(uri_encode("a b/c:d~é", false), "a%20b%2Fc%3Ad~%C3%A9");
  EXPECT_EQ(uri_encode("/a b/", true), "/a%20b/");
  SignerOptions s3;
  s3.normalize_path = false;
  s3.encode_path = false;
  EXPECT_EQ(*canonical_uri("/bucket//key%3A1/../x", s3), "/bucket//key%3A1/../x");
  EXPECT_EQ(*canonical_uri("", {}), "/");
  EXPECT_EQ(*canonical_uri("/a/b/..", {}), "/a/");
  EXPECT_EQ(*canonical_uri("/a/./b", {}), "/a/b");
  EXPECT_EQ(*canonical_uri("/../a", {}), "/a");
  EXPECT_FALSE(canonical_uri("relative", {}).has_value());

  const QueryParam query[] = {{"b", ""}, {"a", "2"}, {"a", "1"}, {"a b", "x=y"}};
  EXPECT_EQ(canonical_query_string(query), "a=1&a=2&a%20b=x%3Dy&b=");
  EXPECT_EQ(canonical_query_string({}), "");

  const HeaderView headers[] = {{"X-B", "  two  \t words "}, {"host", "h"}, {"x-b", "3"}};
  auto canonical = canonical_headers(headers);
  ASSERT_TRUE(canonical.has_value());
  EXPECT_EQ(canonical->block, "host:h\nx-b:two words,3\n");
  EXPECT_EQ(canonical->signed_headers, "host;x-b");
}

TEST(SigV4, UnsignedPayload) {
  // Derived from the guide's rules, not from a published vector: the canonical request's last
  // line (and x-amz-content-sha256, signed because it is sent) is the literal UNSIGNED-PAYLOAD,
  // the rest is get-vanilla. Expected string to sign and signature computed independently
  // (Python hashlib/hmac over this exact canonical request, with the suite's key).
  const HeaderView headers[] = {{"Host", "example.amazonaws.com"}};
  const Request request{"GET", "/", {}, headers, Payload::unsigned_payload()};
  SignerOptions options;
  options.add_content_sha256 = true;
  const Credentials credentials{std::string(kAccessKeyId), std::string(kSecret), ""};
  const auto s = Signer("us-east-1", "service", options).sign(request, credentials, kSuiteTime);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n"
            "x-amz-date:20150830T123600Z\n\nhost;x-amz-content-sha256;x-amz-date\n"
            "UNSIGNED-PAYLOAD");
  EXPECT_EQ(s->string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "f3effcc3779858bbdbf0a9746397a6595bf5d554bbedf960e0b812fc47014919");
  EXPECT_EQ(header_value(*s, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
  EXPECT_EQ(header_value(*s, "authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            "Signature=9b02fb7b5d0076fa47a0adda28c71e74ba4588334bc0139b8cd6bb87f16afe16");
}

TEST(SigV4, BedrockConversePathIsEncodedTwice) {
  // A Bedrock Converse call. The model id's ':' is sent as %3A (the path on the wire is encoded
  // once), and SigV4 encodes every path segment once more for every service but S3 ("Each path
  // segment must be URI-encoded twice"), so the canonical URI carries %253A: the '%' itself
  // becomes %25. AWS's own SignatureDoesNotMatch messages quote canonical requests of this shape
  // (higress-group/higress#2396). The signing name of bedrock-runtime is "bedrock". The body
  // hash and the signature were computed independently (Python hashlib/hmac over this exact
  // canonical request, the suite's credentials and time).
  const std::string body = R"({"messages":[{"role":"user","content":[{"text":"Hello"}]}]})";
  const HeaderView headers[] = {{"Host", "bedrock-runtime.us-east-1.amazonaws.com"},
                                {"Content-Type", "application/json"}};
  const Request request{"POST",
                        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
                        {},
                        headers,
                        Payload::bytes(body)};
  const Credentials credentials{std::string(kAccessKeyId), std::string(kSecret), ""};
  const auto s = Signer("us-east-1", "bedrock").sign(request, credentials, kSuiteTime);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->canonical_request,
            "POST\n/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse\n\n"
            "content-type:application/json\nhost:bedrock-runtime.us-east-1.amazonaws.com\n"
            "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
            "7421da8d1a0949a481724fee62d5886aacde03836bf58248adb73e8b61ac0d54");
  EXPECT_EQ(s->string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/bedrock/aws4_request\n"
            "312ca6f31c2eb94e3daf199ae5a1aa15bc744b45f84dbefd2e42e73c76e97876");
  EXPECT_EQ(header_value(*s, "authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date, "
            "Signature=44a10e4bdeff9fd3029689bd5cfaa6209b6133070777e52584da415f8283559e");
  EXPECT_EQ(header_value(*s, "x-amz-content-sha256"), "<absent>");

  // A precomputed body hash signs identically.
  const Request hashed{
      request.method,
      request.path,
      {},
      headers,
      Payload::sha256_hex("7421da8d1a0949a481724fee62d5886aacde03836bf58248adb73e8b61ac0d54")};
  const auto again = Signer("us-east-1", "bedrock").sign(hashed, credentials, kSuiteTime);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->signature, s->signature);
}

TEST(SigV4, KeyCacheSignsLikeNoCacheAcrossDaysAndRotation) {
  SignerOptions uncached_options;
  uncached_options.cache_signing_key = false;
  const Signer cached("us-east-1", "bedrock");
  const Signer uncached("us-east-1", "bedrock", uncached_options);
  const HeaderView headers[] = {{"host", "bedrock-runtime.us-east-1.amazonaws.com"}};
  const Request request{"POST", "/model/m%3A0/converse", {}, headers, Payload::bytes("{}")};
  const Credentials first{"AKID1", std::string(kSecret), ""};
  const Credentials rotated{"AKID2", "another/secret+key", "token"};
  const system_clock::time_point before_midnight{seconds(1440979199)};  // 2015-08-30T23:59:59Z
  const system_clock::time_point times[] = {before_midnight, before_midnight + seconds(2),
                                            before_midnight, before_midnight + seconds(86400 * 3)};
  for (const auto& credentials : {first, rotated, first}) {
    for (const auto t : times) {
      const auto a = cached.sign(request, credentials, t);
      const auto b = uncached.sign(request, credentials, t);
      ASSERT_TRUE(a.has_value());
      ASSERT_TRUE(b.has_value());
      EXPECT_EQ(a->signature, b->signature);
      EXPECT_EQ(header_value(*a, "authorization"), header_value(*b, "authorization"));
    }
  }
  const auto day1 = cached.sign(request, first, before_midnight);
  const auto day2 = cached.sign(request, first, before_midnight + seconds(2));
  EXPECT_NE(day1->string_to_sign.find("20150830/us-east-1/bedrock"), std::string::npos);
  EXPECT_NE(day2->string_to_sign.find("20150831/us-east-1/bedrock"), std::string::npos);
}

TEST(SigV4, RefusesCallerBugsWithoutEchoingSecrets) {
  const Credentials credentials{std::string(kAccessKeyId), std::string(kSecret), "tok"};
  const Signer signer("us-east-1", "service");
  const auto sign = [&](std::span<const HeaderView> headers, Payload payload = Payload::bytes(""),
                        std::string_view path = "/") {
    return signer.sign(Request{"GET", path, {}, headers, payload}, credentials, kSuiteTime);
  };
  const HeaderView no_host[] = {{"x-a", "b"}};
  const HeaderView already_dated[] = {{"host", "h"}, {"X-Amz-Date", "20150830T123600Z"}};
  const HeaderView line_break[] = {{"host", "h"}, {"x-a", "b\r\nx-evil: 1"}};
  const HeaderView good[] = {{"host", "h"}};
  for (const auto& result :
       {sign(no_host), sign(already_dated), sign(line_break),
        sign(good, Payload::sha256_hex("ABC")), sign(good, Payload::bytes(""), "no-slash")}) {
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().kind(), ErrorKind::kInternal);
    EXPECT_EQ(result.error().message().find(kSecret), std::string::npos);
  }
  EXPECT_FALSE(signer.sign(Request{"GET", "/", {}, good, {}}, Credentials{}, kSuiteTime));
}

}  // namespace
}  // namespace sluice::aws
