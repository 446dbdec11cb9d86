#include "aws/sigv4.h"

#include <algorithm>
#include <utility>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace sluice::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kTerminator = "aws4_request";

Error signing_error(std::string message) {
  return Error(ErrorKind::kInternal, "SigV4: " + std::move(message));
}

// OpenSSL 3 looks an algorithm up in its provider store (a read lock and a hash lookup) on every
// implicit fetch: EVP_sha256(), HMAC() and EVP_Q_mac() all do one per call. Fetching once and
// keeping one context per thread keeps that, and a malloc per hash, off the per-request path.
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
struct MacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};

EVP_MD_CTX* thread_sha256_ctx() {
  thread_local std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  return ctx.get();
}

// An HMAC context with its digest set once; EVP_MAC_init() with a key and no parameters re-keys
// it without looking the digest up again.
EVP_MAC_CTX* thread_hmac_sha256_ctx() {
  thread_local std::unique_ptr<EVP_MAC_CTX, MacCtxFree> ctx = [] {
    static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    std::unique_ptr<EVP_MAC_CTX, MacCtxFree> made(mac ? EVP_MAC_CTX_new(mac) : nullptr);
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (made && EVP_MAC_CTX_set_params(made.get(), params) != 1) {
      made.reset();
    }
    return made;
  }();
  return ctx.get();
}

bool sha256(std::string_view data, unsigned char (&out)[32]) {
  EVP_MD_CTX* ctx = thread_sha256_ctx();
  const EVP_MD* md = sha256_md();
  unsigned int length = 0;
  return ctx != nullptr && md != nullptr && EVP_DigestInit_ex2(ctx, md, nullptr) == 1 &&
         EVP_DigestUpdate(ctx, data.data(), data.size()) == 1 &&
         EVP_DigestFinal_ex(ctx, out, &length) == 1 && length == 32;
}

bool hmac_sha256(const unsigned char* key, std::size_t key_size, std::string_view data,
                 SigningKey& out) {
  EVP_MAC_CTX* ctx = thread_hmac_sha256_ctx();
  std::size_t length = 0;
  return ctx != nullptr && EVP_MAC_init(ctx, key, key_size, nullptr) == 1 &&
         EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()) ==
             1 &&
         EVP_MAC_final(ctx, out.data(), &length, out.size()) == 1 && length == out.size();
}

std::string to_hex(const unsigned char* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(size * 2, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
  return hex;
}

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// A CR or LF would let one header's value forge the next line of the canonical request (and of
// the request head itself); a NUL is truncation bait. Obsolete line folding must be unfolded
// (RFC 9110 5.5: replaced by a space) before signing.
bool has_line_break_or_nul(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// The guide: "Trim any leading or trailing spaces, and convert sequential spaces to a single
// space." Tabs are header whitespace too (RFC 9110 5.6.3) and the SDKs fold them the same way.
void append_canonical_value(std::string& out, std::string_view value) {
  std::size_t begin = 0;
  std::size_t end = value.size();
  while (begin < end && is_space(value[begin])) {
    ++begin;
  }
  while (end > begin && is_space(value[end - 1])) {
    --end;
  }
  bool in_space = false;
  for (std::size_t i = begin; i < end; ++i) {
    if (is_space(value[i])) {
      in_space = true;
      continue;
    }
    if (in_space) {
      out.push_back(' ');
      in_space = false;
    }
    out.push_back(value[i]);
  }
}

bool is_lower_hex_sha256(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

constexpr std::string_view kAddedHeaders[] = {"authorization", "x-amz-date", "x-amz-content-sha256",
                                              "x-amz-security-token"};

}  // namespace

Result<std::string> amz_date(std::chrono::system_clock::time_point now) {
  using namespace std::chrono;
  const auto seconds = floor<std::chrono::seconds>(now);
  const auto day = floor<days>(seconds);
  const year_month_day ymd{day};
  const hh_mm_ss hms{seconds - day};
  const int year = static_cast<int>(ymd.year());
  if (year < 0 || year > 9999) {
    return signing_error("request time outside years 0000-9999");
  }
  std::string text = "00000000T000000Z";
  const auto put = [&text](std::size_t at, unsigned value, std::size_t width) {
    for (std::size_t i = width; i-- > 0; value /= 10) {
      text[at + i] = static_cast<char>('0' + value % 10);
    }
  };
  put(0, static_cast<unsigned>(year), 4);
  put(4, static_cast<unsigned>(ymd.month()), 2);
  put(6, static_cast<unsigned>(ymd.day()), 2);
  put(9, static_cast<unsigned>(hms.hours().count()), 2);
  put(11, static_cast<unsigned>(hms.minutes().count()), 2);
  put(13, static_cast<unsigned>(hms.seconds().count()), 2);
  return text;
}

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0x0f]);
    }
  }
  return out;
}

Result<std::string> canonical_uri(std::string_view path, const SignerOptions& options) {
  if (path.empty()) {
    return std::string("/");
  }
  if (path.front() != '/') {
    return signing_error("path does not start with '/'");
  }
  std::string normalized;
  if (options.normalize_path) {
    // RFC 3986 5.2.4 (remove_dot_segments), plus the guide's "remove redundant path components":
    // empty segments go too ("//example//" signs as "/example/", test suite get-slashes). A path
    // ending in '/', "." or ".." keeps its trailing slash.
    std::vector<std::string_view> segments;
    bool trailing_slash = false;
    std::size_t start = 1;
    while (true) {
      const std::size_t slash = path.find('/', start);
      const std::string_view segment = path.substr(
          start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
      if (segment.empty() || segment == ".") {
        trailing_slash = true;
      } else if (segment == "..") {
        if (!segments.empty()) {
          segments.pop_back();
        }
        trailing_slash = true;
      } else {
        segments.push_back(segment);
        trailing_slash = false;
      }
      if (slash == std::string_view::npos) {
        break;
      }
      start = slash + 1;
    }
    normalized.reserve(path.size());
    for (const std::string_view segment : segments) {
      normalized.push_back('/');
      normalized.append(segment);
    }
    if (normalized.empty() || trailing_slash) {
      normalized.push_back('/');
    }
    path = normalized;
  }
  return options.encode_path ? uri_encode(path, /*keep_slash=*/true) : std::string(path);
}

std::string canonical_query_string(std::span<const QueryParam> query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const QueryParam& param : query) {
    encoded.emplace_back(uri_encode(param.name, false), uri_encode(param.value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) {
      out.push_back('&');
    }
    out.append(name);
    out.push_back('=');
    out.append(value);
  }
  return out;
}

Result<CanonicalHeaders> canonical_headers(std::span<const HeaderView> headers) {
  struct Entry {
    std::string name;
    std::string_view value;
  };
  std::vector<Entry> entries;
  entries.reserve(headers.size());
  for (const HeaderView& header : headers) {
    if (header.name.empty() || has_line_break_or_nul(header.name) ||
        has_line_break_or_nul(header.value) ||
        header.name.find_first_of(" \t:") != std::string_view::npos) {
      return signing_error("malformed header name or value");
    }
    Entry entry{std::string(header.name), header.value};
    std::transform(entry.name.begin(), entry.name.end(), entry.name.begin(), ascii_lower);
    entries.push_back(std::move(entry));
  }
  // Stable: repeated headers keep their order ("value4,value1,value3,value2", get-header-value-
  // order); only names are sorted.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.name < b.name; });
  CanonicalHeaders out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const bool repeat = i > 0 && entries[i].name == entries[i - 1].name;
    if (repeat) {
      out.block.pop_back();  // the previous line's '\n'
      out.block.push_back(',');
    } else {
      if (!out.signed_headers.empty()) {
        out.signed_headers.push_back(';');
      }
      out.signed_headers.append(entries[i].name);
      out.block.append(entries[i].name);
      out.block.push_back(':');
    }
    append_canonical_value(out.block, entries[i].value);
    out.block.push_back('\n');
  }
  return out;
}

Result<std::string> sha256_hex(std::string_view data) {
  unsigned char digest[32];
  if (!sha256(data, digest)) {
    return signing_error("SHA-256 failed");
  }
  return to_hex(digest, sizeof(digest));
}

Result<std::string> payload_hash(const Payload& payload) {
  switch (payload.kind) {
    case Payload::Kind::kBytes:
      return sha256_hex(payload.data);
    case Payload::Kind::kSha256Hex:
      if (!is_lower_hex_sha256(payload.data)) {
        return signing_error("precomputed payload hash is not 64 lowercase hex digits");
      }
      return std::string(payload.data);
    case Payload::Kind::kUnsigned:
      return std::string(kUnsignedPayload);
  }
  return signing_error("unknown payload kind");
}

std::string canonical_request(std::string_view method, std::string_view canonical_uri,
                              std::string_view canonical_query, const CanonicalHeaders& headers,
                              std::string_view payload_hash) {
  std::string out;
  out.reserve(method.size() + canonical_uri.size() + canonical_query.size() + headers.block.size() +
              headers.signed_headers.size() + payload_hash.size() + 5);
  out.append(method).push_back('\n');
  out.append(canonical_uri).push_back('\n');
  out.append(canonical_query).push_back('\n');
  out.append(headers.block).push_back('\n');
  out.append(headers.signed_headers).push_back('\n');
  out.append(payload_hash);
  return out;
}

std::string credential_scope(std::string_view date, std::string_view region,
                             std::string_view service) {
  std::string out;
  out.reserve(date.size() + region.size() + service.size() + kTerminator.size() + 3);
  out.append(date).push_back('/');
  out.append(region).push_back('/');
  out.append(service).push_back('/');
  out.append(kTerminator);
  return out;
}

Result<std::string> string_to_sign(std::string_view amz_date, std::string_view scope,
                                   std::string_view canonical_request) {
  auto hash = sha256_hex(canonical_request);
  if (!hash) {
    return hash.error();
  }
  std::string out;
  out.reserve(kAlgorithm.size() + amz_date.size() + scope.size() + hash->size() + 3);
  out.append(kAlgorithm).push_back('\n');
  out.append(amz_date).push_back('\n');
  out.append(scope).push_back('\n');
  out.append(*hash);
  return out;
}

Result<SigningKey> derive_signing_key(std::string_view secret_access_key, std::string_view date,
                                      std::string_view region, std::string_view service) {
  std::string secret = "AWS4";
  secret.append(secret_access_key);
  SigningKey date_key;
  SigningKey region_key;
  SigningKey service_key;
  SigningKey signing_key;
  const bool ok = hmac_sha256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(),
                              date, date_key) &&
                  hmac_sha256(date_key.data(), date_key.size(), region, region_key) &&
                  hmac_sha256(region_key.data(), region_key.size(), service, service_key) &&
                  hmac_sha256(service_key.data(), service_key.size(), kTerminator, signing_key);
  OPENSSL_cleanse(secret.data(), secret.size());
  OPENSSL_cleanse(date_key.data(), date_key.size());
  OPENSSL_cleanse(region_key.data(), region_key.size());
  OPENSSL_cleanse(service_key.data(), service_key.size());
  if (!ok) {
    return signing_error("HMAC-SHA256 failed");
  }
  return signing_key;
}

Result<std::string> signature(const SigningKey& key, std::string_view string_to_sign) {
  SigningKey mac;
  if (!hmac_sha256(key.data(), key.size(), string_to_sign, mac)) {
    return signing_error("HMAC-SHA256 failed");
  }
  return to_hex(mac.data(), mac.size());
}

// The signing key cache. The key depends only on (secret, date, region, service) and a Signer
// has one region and service, so one entry per Signer covers a day: 2 HMACs per request instead
// of 5. The entry is immutable and replaced whole by an atomic shared_ptr store: readers never
// see a half-written key, and there is no mutex, only the per-object lock bit libstdc++'s
// atomic<shared_ptr> holds while it bumps the reference count. Two threads crossing midnight
// may both derive the new key; the last store wins and both keys are right. The secret is kept
// to notice rotated credentials (compared in constant time) and wiped with the entry.
struct Signer::CachedKey {
  std::string date;
  std::string secret;
  SigningKey key;

  ~CachedKey() {
    OPENSSL_cleanse(secret.data(), secret.size());
    OPENSSL_cleanse(key.data(), key.size());
  }
};

Signer::Signer(std::string region, std::string service, SignerOptions options)
    : region_(std::move(region)), service_(std::move(service)), options_(options) {}

Signer::~Signer() = default;

Result<SigningKey> Signer::signing_key(std::string_view secret, std::string_view date) const {
  if (!options_.cache_signing_key) {
    return derive_signing_key(secret, date, region_, service_);
  }
  const std::shared_ptr<const CachedKey> cached = cached_key_.load(std::memory_order_acquire);
  if (cached && cached->date == date && cached->secret.size() == secret.size() &&
      CRYPTO_memcmp(cached->secret.data(), secret.data(), secret.size()) == 0) {
    return cached->key;
  }
  auto key = derive_signing_key(secret, date, region_, service_);
  if (!key) {
    return key.error();
  }
  auto entry = std::make_shared<CachedKey>();
  entry->date = std::string(date);
  entry->secret = std::string(secret);
  entry->key = *key;
  cached_key_.store(std::move(entry), std::memory_order_release);
  return key;
}

Result<Signed> Signer::sign(const Request& request, const Credentials& credentials,
                            std::chrono::system_clock::time_point now) const {
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return signing_error("no credentials");
  }
  if (region_.empty() || service_.empty()) {
    return signing_error("no region or service");
  }
  bool has_host = false;
  for (const HeaderView& header : request.headers) {
    has_host = has_host || iequals(header.name, "host");
    for (const std::string_view added : kAddedHeaders) {
      if (iequals(header.name, added)) {
        return signing_error("request already carries " + std::string(added));
      }
    }
  }
  if (!has_host) {
    return signing_error("request has no host header");
  }

  auto date = amz_date(now);
  if (!date) {
    return date.error();
  }
  auto hash = payload_hash(request.payload);
  if (!hash) {
    return hash.error();
  }
  auto uri = canonical_uri(request.path, options_);
  if (!uri) {
    return uri.error();
  }

  const bool token = !credentials.session_token.empty();
  std::vector<HeaderView> signed_headers(request.headers.begin(), request.headers.end());
  signed_headers.push_back({"x-amz-date", *date});
  if (options_.add_content_sha256) {
    signed_headers.push_back({"x-amz-content-sha256", *hash});
  }
  if (token && options_.sign_session_token) {
    signed_headers.push_back({"x-amz-security-token", credentials.session_token});
  }
  auto headers = canonical_headers(signed_headers);
  if (!headers) {
    return headers.error();
  }

  Signed out;
  out.canonical_request = canonical_request(request.method, *uri,
                                            canonical_query_string(request.query), *headers, *hash);
  const std::string_view day = std::string_view(*date).substr(0, 8);
  const std::string scope = credential_scope(day, region_, service_);
  auto to_sign = string_to_sign(*date, scope, out.canonical_request);
  if (!to_sign) {
    return to_sign.error();
  }
  out.string_to_sign = std::move(*to_sign);
  auto key = signing_key(credentials.secret_access_key, day);
  if (!key) {
    return key.error();
  }
  auto sig = signature(*key, out.string_to_sign);
  OPENSSL_cleanse(key->data(), key->size());
  if (!sig) {
    return sig.error();
  }
  out.signature = std::move(*sig);

  std::string authorization;
  authorization.reserve(kAlgorithm.size() + credentials.access_key_id.size() + scope.size() +
                        headers->signed_headers.size() + out.signature.size() + 48);
  authorization.append(kAlgorithm).append(" Credential=").append(credentials.access_key_id);
  authorization.append("/").append(scope);
  authorization.append(", SignedHeaders=").append(headers->signed_headers);
  authorization.append(", Signature=").append(out.signature);

  out.headers.reserve(4);
  out.headers.push_back({"x-amz-date", std::move(*date)});
  if (options_.add_content_sha256) {
    out.headers.push_back({"x-amz-content-sha256", std::move(*hash)});
  }
  if (token) {
    out.headers.push_back({"x-amz-security-token", credentials.session_token});
  }
  out.headers.push_back({"authorization", std::move(authorization)});
  return out;
}

}  // namespace sluice::aws
