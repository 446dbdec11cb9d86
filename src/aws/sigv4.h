#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace sluice::aws {

// AWS Signature Version 4 (header form, AWS4-HMAC-SHA256), as specified in the IAM user guide,
// "Create a signed AWS API request" (docs.aws.amazon.com/IAM/latest/UserGuide/
// reference_sigv-create-signed-request.html), and checked against the published SigV4 test suite
// (tests/fixtures/aws-sigv4/). Pure computation: no I/O, no clock (the time is an argument), no
// logging. Nothing here ever puts a secret access key in an error message or a returned string.

// Long-term or temporary credentials. `session_token` is empty for long-term keys.
struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
};

// A header as the request will carry it (any case; the value as sent, before trimming).
struct HeaderView {
  std::string_view name;
  std::string_view value;
};

// A query parameter, decoded (the signer percent-encodes it once, per RFC 3986's unreserved
// set). An empty value signs as `name=`.
struct QueryParam {
  std::string_view name;
  std::string_view value;
};

// An owned header the signer asks the caller to add.
struct Header {
  std::string name;
  std::string value;
};

// What the canonical request hashes as the payload.
struct Payload {
  enum class Kind : std::uint8_t {
    kBytes,      // `data` is the body; the signer hashes it
    kSha256Hex,  // `data` is the body's SHA-256, 64 lowercase hex digits
    kUnsigned,   // the literal UNSIGNED-PAYLOAD (the service must accept it)
  };
  Kind kind = Kind::kBytes;
  std::string_view data;

  static Payload bytes(std::string_view body) { return {Kind::kBytes, body}; }
  static Payload sha256_hex(std::string_view hex) { return {Kind::kSha256Hex, hex}; }
  static Payload unsigned_payload() { return {Kind::kUnsigned, {}}; }
};

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

// One request to sign. Views only: everything must outlive the sign() call, nothing after.
struct Request {
  std::string_view method;  // e.g. "POST", as sent (not case-folded)
  // The absolute path as sent on the wire, already URI-encoded once and without the query,
  // e.g. "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse". Empty means "/".
  std::string_view path;
  std::span<const QueryParam> query;
  // Every header to sign; must contain `host`. Must not contain the headers the signer adds
  // (authorization, x-amz-date, x-amz-content-sha256, x-amz-security-token).
  std::span<const HeaderView> headers;
  Payload payload;
};

struct SignerOptions {
  // Also send (and sign) `x-amz-content-sha256` with the payload hash (S3 requires it; most
  // services accept it).
  bool add_content_sha256 = false;
  // RFC 3986 dot-segment removal and empty-segment collapsing of the path. Every service but S3.
  bool normalize_path = true;
  // URI-encode the (already encoded) path once more: "each path segment must be URI-encoded
  // twice (except for Amazon S3 which only gets URI-encoded once)". False only for S3.
  bool encode_path = true;
  // With a session token: sign `x-amz-security-token` (the documented default). False adds the
  // header after signing, unsigned, as the few services that want this do (the test suite's
  // post-sts-header-after).
  bool sign_session_token = true;
  // Reuse the derived signing key while the date, secret, region and service stay the same.
  bool cache_signing_key = true;
};

// A derived signing key: HMAC chain over date, region, service, "aws4_request".
using SigningKey = std::array<unsigned char, 32>;

// The result of one signature.
struct Signed {
  // To add to the request, in this order: x-amz-date, x-amz-content-sha256 (when asked),
  // x-amz-security-token (with a session token), authorization. Names lowercase.
  std::vector<Header> headers;
  // The stages, for tests and for debugging a SignatureDoesNotMatch (AWS's error message quotes
  // its canonical request and string to sign). They contain the session token when it is
  // signed, never the secret key.
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;  // lowercase hex
};

// Signs requests for one region and service (one instance per configured AWS provider, shared
// read-only by the workers: sign() is const and safe to call from any number of threads at once).
// Credentials are an argument so a refreshed set (temporary credentials) needs no new Signer.
class Signer {
 public:
  Signer(std::string region, std::string service, SignerOptions options = {});
  ~Signer();
  Signer(const Signer&) = delete;
  Signer& operator=(const Signer&) = delete;

  // Signs `request` as made at `now` (UTC; only whole seconds are signed). Fails (kInternal:
  // these are the caller's bugs, never the client's) on a missing host header, a header the
  // signer adds itself, a CR, LF or NUL in a header, a path not starting with '/', a malformed
  // precomputed hash, empty credentials, a year outside 0000-9999, or an OpenSSL failure.
  // Completes inline.
  Result<Signed> sign(const Request& request, const Credentials& credentials,
                      std::chrono::system_clock::time_point now) const;

  const std::string& region() const { return region_; }
  const std::string& service() const { return service_; }

 private:
  struct CachedKey;
  Result<SigningKey> signing_key(std::string_view secret, std::string_view date) const;

  std::string region_;
  std::string service_;
  SignerOptions options_;
  // One immutable entry, replaced whole when the date (or the secret) changes. See sigv4.cc.
  mutable std::atomic<std::shared_ptr<const CachedKey>> cached_key_;
};

// The stages, each usable alone (the test suite checks each).

// "YYYYMMDD'T'HHMMSS'Z'" of `now`, or an error for a year outside 0000-9999.
Result<std::string> amz_date(std::chrono::system_clock::time_point now);

// UriEncode() of the IAM guide: every byte but A-Z a-z 0-9 - . _ ~ as %XY (uppercase hex);
// '/' kept when `keep_slash`.
std::string uri_encode(std::string_view text, bool keep_slash);

// The CanonicalURI line for a path as sent ("/" when empty), normalised and encoded per
// `options`. Fails on a non-empty path not starting with '/'.
Result<std::string> canonical_uri(std::string_view path, const SignerOptions& options);

// The CanonicalQueryString line: names and values encoded, sorted by encoded name then value.
std::string canonical_query_string(std::span<const QueryParam> query);

// The CanonicalHeaders block (each "name:value\n": names lowercased, values trimmed and inner
// runs of spaces collapsed, duplicates joined with ',' in their order, sorted by name) and the
// SignedHeaders line. Fails on an empty name or a CR, LF or NUL anywhere.
struct CanonicalHeaders {
  std::string block;
  std::string signed_headers;
};
Result<CanonicalHeaders> canonical_headers(std::span<const HeaderView> headers);

// The hex SHA-256 of the payload as the canonical request's last line (and
// x-amz-content-sha256) carries it.
Result<std::string> payload_hash(const Payload& payload);

// Lowercase hex SHA-256.
Result<std::string> sha256_hex(std::string_view data);

// The canonical request: method, URI, query, headers block, blank line... as the guide lays out.
std::string canonical_request(std::string_view method, std::string_view canonical_uri,
                              std::string_view canonical_query, const CanonicalHeaders& headers,
                              std::string_view payload_hash);

// "<date>/<region>/<service>/aws4_request" for a "YYYYMMDD" date.
std::string credential_scope(std::string_view date, std::string_view region,
                             std::string_view service);

// "AWS4-HMAC-SHA256\n<amz date>\n<scope>\n<hex SHA-256 of the canonical request>".
Result<std::string> string_to_sign(std::string_view amz_date, std::string_view scope,
                                   std::string_view canonical_request);

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
Result<SigningKey> derive_signing_key(std::string_view secret_access_key, std::string_view date,
                                      std::string_view region, std::string_view service);

// Hex HMAC-SHA256(key, string_to_sign).
Result<std::string> signature(const SigningKey& key, std::string_view string_to_sign);

}  // namespace sluice::aws
