#include "config/config.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "config/scalars.h"
#include "providers/registry.h"

namespace sluice::config {
namespace {

using Env = std::map<std::string, std::string>;

LoadOptions with_env(Env env) {
  LoadOptions options;
  options.adapters = providers::adapter_schemas();
  options.getenv = [env = std::move(env)](const std::string& name) -> std::optional<std::string> {
    if (auto it = env.find(name); it != env.end()) {
      return it->second;
    }
    return std::nullopt;
  };
  return options;
}

Result<std::shared_ptr<const Config>> load(const std::string& yaml, Env env = {}) {
  return load_from_string(yaml, "test.yaml", with_env(std::move(env)));
}

// Loads `yaml`, failing the test with the loader's message if it does not load.
std::shared_ptr<const Config> load_ok(const std::string& yaml, Env env = {}) {
  auto result = load(yaml, std::move(env));
  if (!result) {
    ADD_FAILURE() << "unexpected error: " << result.error().message();
    return std::make_shared<const Config>();
  }
  return *result;
}

constexpr char kMinimal[] = R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
)y";

// ---------------------------------------------------------------------------------------
// Errors: each case gives the whole document and the whole expected message, so the
// file:line:col prefix (1-based, pointing at the offending node) is checked exactly.

struct ErrorCase {
  const char* name;
  const char* yaml;
  const char* message;
  Env env = {};
  // A secret that must not appear in the message.
  const char* secret = nullptr;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

// The list of known adapters grows with every adapter registered: built from the registry.
TEST(ConfigErrorTest, UnknownAdapterListsTheRegisteredOnes) {
  std::vector<std::string> names;
  for (const AdapterSchema& schema : providers::adapter_schemas()) {
    names.emplace_back(schema.name);
  }
  std::sort(names.begin(), names.end());
  std::string expected;
  for (const std::string& n : names) {
    expected += (expected.empty() ? "" : ", ") + n;
  }
  auto result = load("version: 1\nauth: none\nproviders:\n  - id: mock\n    adapter: antropic\n");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            "test.yaml:5:14: providers[0].adapter: unknown adapter \"antropic\" (expected: " +
                expected + ")");
  EXPECT_NE(expected.find("openai"), std::string::npos);
}

TEST_P(ConfigErrorTest, ReportsLocationAndMessage) {
  const ErrorCase& c = GetParam();
  auto result = load(c.yaml, c.env);
  ASSERT_FALSE(result) << "loaded, expected: " << c.message;
  EXPECT_EQ(result.error().message(), c.message);
  EXPECT_EQ(result.error().kind(), ErrorKind::kBadRequest);
  if (c.secret != nullptr) {
    EXPECT_EQ(result.error().message().find(c.secret), std::string::npos);
  }
}

const ErrorCase kErrorCases[] = {
    // Document shape.
    {"EmptyDocument", "",
     "test.yaml:1:1: empty configuration (expected a mapping with version, providers and "
     "routes)"},
    {"CommentsOnly", "# nothing here\n",
     "test.yaml:1:1: empty configuration (expected a mapping with version, providers and "
     "routes)"},
    {"RootIsList", "- 1\n- 2\n",
     "test.yaml:1:1: expected a mapping at the top level (version, providers, routes, ...)"},
    {"RootIsScalar", "hello\n",
     "test.yaml:1:1: expected a mapping at the top level (version, providers, routes, ...)"},
    {"InvalidYaml", "version: [1\n", "test.yaml:2:1: invalid YAML: end of sequence flow not found"},
    {"TwoDocuments", "version: 1\n---\nversion: 2\n",
     "test.yaml:3:1: more than one YAML document; a config file holds exactly one"},
    {"UnknownTopLevelFieldWithHint", "version: 1\nrutes: []\n",
     "test.yaml:2:1: rutes: unknown field; did you mean \"routes\"?"},
    {"UnknownTopLevelField", "version: 1\nconsole: {}\n",
     "test.yaml:2:1: console: unknown field (expected one of: version, listen, server, "
     "access_log, admin, store, metering, traces, auth, routing, providers, routes, keys, state, "
     "limits, tenancy, cache, idempotency, guardrails)"},
    {"DuplicateField", "version: 1\nversion: 2\n",
     "test.yaml:2:1: version: duplicate field (first set on line 1)"},
    {"NonScalarFieldName", "version: 1\n[a, b]: 1\n",
     "test.yaml:2:1: field names must be plain strings"},

    // version
    {"MissingVersion", R"y(auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
)y",
     "test.yaml:1:1: version: missing required field"},
    {"VersionZero", "version: 0\n", "test.yaml:1:10: version: must be at least 1"},
    {"VersionNotANumber", "version: one\n",
     "test.yaml:1:10: version: expected a non-negative integer, got \"one\""},
    {"VersionFraction", "version: 1.5\n",
     "test.yaml:1:10: version: expected a non-negative integer, got \"1.5\""},
    {"VersionNegative", "version: -3\n", "test.yaml:1:10: version: must not be negative (got -3)"},
    {"VersionTooLarge", "version: 99999999999999999999\n",
     "test.yaml:1:10: version: number too large: 99999999999999999999"},
    {"VersionMapping", "version: {a: 1}\n",
     "test.yaml:1:10: version: expected an integer, got a mapping"},
    {"VersionNull", "version:\nauth: none\n",
     "test.yaml:1:1: version: expected an integer, got null"},

    // listen
    {"ListenPortOnly", "version: 1\nlisten: 8080\n",
     "test.yaml:2:9: listen: expected host:port, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or "
     "[::1]:8080, got \"8080\""},
    {"ListenIpv6WithoutBrackets", "version: 1\nlisten: \"::1:8080\"\n",
     "test.yaml:2:9: listen: IPv6 addresses must be written in brackets, e.g. [::1]:8080"},
    {"ListenPortOutOfRange", "version: 1\nlisten: 127.0.0.1:70000\n",
     "test.yaml:2:9: listen: invalid port \"70000\" (expected 0..65535)"},
    {"ListenMissingHost", "version: 1\nlisten: \":8080\"\n",
     "test.yaml:2:9: listen: missing host; use 0.0.0.0:8080 for all interfaces or "
     "127.0.0.1:8080 for local only"},
    {"ListenBadIpv4", "version: 1\nlisten: 127.0.0.256:80\n",
     "test.yaml:2:9: listen: invalid IPv4 address \"127.0.0.256\""},
    {"ListenBadIpv6", "version: 1\nlisten: \"[::g]:80\"\n",
     "test.yaml:2:9: listen: invalid IPv6 address \"::g\""},

    // server
    {"ServerWorkersTooMany", "version: 1\nserver:\n  workers: 300\n",
     "test.yaml:3:12: server.workers: must be at most 256 (got 300)"},
    {"ServerUnknownFieldWithHint", "version: 1\nserver:\n  max_conections: 5\n",
     "test.yaml:3:3: server.max_conections: unknown field; did you mean \"max_connections\"?"},
    {"ServerUnknownField", "version: 1\nserver: {threads: 4}\n",
     "test.yaml:2:10: server.threads: unknown field (expected one of: workers, max_connections, "
     "max_header_bytes, max_body_bytes, idle_timeout_ms, request_timeout_ms, drain_timeout_ms, "
     "max_upstream_response_bytes, strict_fields, heartbeat_ms, reasoning_seal_key)"},
    {"ServerSealKeyTooShort", "version: 1\nserver:\n  reasoning_seal_key: short-secret\n",
     "test.yaml:3:23: server.reasoning_seal_key: must be at least 32 characters (e.g. `openssl "
     "rand -base64 32`)"},
    {"ServerNotAMapping", "version: 1\nserver: fast\n",
     "test.yaml:2:9: server: expected a mapping, got a scalar"},
    {"ServerHeaderBytesTooSmall", "version: 1\nserver:\n  max_header_bytes: 512\n",
     "test.yaml:3:21: server.max_header_bytes: must be between 1024 and 1048576 bytes (got 512)"},
    {"ServerDecimalSizeUnit", "version: 1\nserver:\n  max_body_bytes: 8MB\n",
     "test.yaml:3:19: server.max_body_bytes: unknown size unit \"MB\" (use B, KiB, MiB or GiB; 1 "
     "KiB = 1024 bytes)"},
    {"ServerBodyTooLarge", "version: 1\nserver:\n  max_body_bytes: 4GiB\n",
     "test.yaml:3:19: server.max_body_bytes: must be between 1024 and 4294967295 bytes (got "
     "4294967296)"},
    {"ServerZeroIdleTimeout", "version: 1\nserver:\n  idle_timeout_ms: 0\n",
     "test.yaml:3:20: server.idle_timeout_ms: must be between 1 and 86400000 (got 0)"},
    {"ServerZeroMaxConnections", "version: 1\nserver:\n  max_connections: 0\n",
     "test.yaml:3:20: server.max_connections: must be between 1 and 10000000 (got 0)"},

    {"RouteOutputCapZero",
     "version: 1\nauth: none\nproviders: [{id: mock, adapter: mock}]\n"
     "routes:\n  - { alias: chat, provider: mock, model: m, max_output_tokens: 0 }\n",
     "test.yaml:5:65: routes[0].max_output_tokens: must be between 1 and 4294967295 (got 0)"},
    {"RouteOutputCapBadAction",
     "version: 1\nauth: none\nproviders: [{id: mock, adapter: mock}]\n"
     "routes:\n  - alias: chat\n    provider: mock\n    model: m\n"
     "    max_output_tokens: { limit: 10, action: trim }\n",
     "test.yaml:8:45: routes[0].max_output_tokens.action: expected \"cap\" or \"refuse\", got "
     "\"trim\""},
    {"RouteOutputCapEmbeddings",
     "version: 1\nauth: none\nproviders: [{id: mock, adapter: mock}]\n"
     "routes:\n  - alias: e\n    kind: embeddings\n    provider: mock\n    model: m\n"
     "    max_output_tokens: 10\n",
     "test.yaml:9:24: routes[0].max_output_tokens: max_output_tokens applies to chat routes only"},

    // access_log, auth
    {"ServerStrictFieldsNotBool", "version: 1\nserver: { strict_fields: maybe }\n",
     "test.yaml:2:26: server.strict_fields: expected true or false, got \"maybe\""},
    {"AccessLogEnabledNotBool", "version: 1\naccess_log: { enabled: maybe }\n",
     "test.yaml:2:24: access_log.enabled: expected true or false, got \"maybe\""},
    {"AccessLogYesIsNotBool", "version: 1\naccess_log: { enabled: yes }\n",
     "test.yaml:2:24: access_log.enabled: expected true or false, got \"yes\""},
    {"AuthUnknownMode", "version: 1\nauth: optional\n",
     "test.yaml:2:7: auth: expected \"required\" or \"none\", got \"optional\""},
    {"AuthRequiredByDefaultNeedsKeys", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
)y",
     "test.yaml:1:1: keys: no keys configured; add keys or set auth: none"},
    {"AuthRequiredWithEmptyKeys", R"y(version: 1
auth: required
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys: []
)y",
     "test.yaml:10:7: keys: no keys configured; add keys or set auth: none"},
    {"AuthRequiredWithoutKeysField", R"y(version: 1
auth: required
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
)y",
     "test.yaml:2:7: keys: no keys configured; add keys or set auth: none"},

    // providers
    {"MissingProviders", "version: 1\nauth: none\nroutes: []\n",
     "test.yaml:1:1: providers: missing required field"},
    {"EmptyProviders", "version: 1\nauth: none\nproviders: []\n",
     "test.yaml:3:12: providers: at least one provider is required"},
    {"ProvidersNotAList", "version: 1\nauth: none\nproviders: {id: mock}\n",
     "test.yaml:3:12: providers: expected a list, got a mapping"},
    {"ProviderInvalidId", R"y(version: 1
auth: none
providers:
  - id: Mock
    adapter: mock
)y",
     "test.yaml:4:9: providers[0].id: invalid provider id \"Mock\" (use lower-case letters, "
     "digits, '_', '.', '-'; start with a letter or digit)"},
    {"ProviderDuplicateId", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
  - id: mock
    adapter: mock
)y",
     "test.yaml:6:9: providers[1].id: duplicate provider id \"mock\" (first defined at "
     "test.yaml:4)"},
    {"ProviderMissingId", R"y(version: 1
auth: none
providers:
  - adapter: mock
)y",
     "test.yaml:4:5: providers[0].id: missing required field"},
    {"ProviderMissingAdapter", R"y(version: 1
auth: none
providers:
  - id: mock
)y",
     "test.yaml:4:5: providers[0].adapter: missing required field"},
    {"ProviderUnknownField", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    baseurl: https://example.com
)y",
     "test.yaml:6:5: providers[0].baseurl: unknown field; did you mean \"base_url\"?"},
    {"ProviderMockBlockOnOpenAI", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    mock: { embedding_dimensions: 4 }
)y",
     "test.yaml:6:11: providers[0].mock: only valid for adapter mock"},
    {"ProviderBaseUrlOnMock", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
    base_url: http://127.0.0.1:9000/v1
)y",
     "test.yaml:6:15: providers[0].base_url: only valid for adapters that connect to a server "
     "(the mock adapter answers in-process)"},
    {"ProviderMaxTokensFieldOnMock", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
    max_tokens_field: max_tokens
)y",
     "test.yaml:6:23: providers[0].max_tokens_field: only valid for adapter openai"},
    {"ProviderMaxTokensFieldUnknown", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    max_tokens_field: max_output_tokens
)y",
     "test.yaml:6:23: providers[0].max_tokens_field: unknown value \"max_output_tokens\" "
     "(expected: max_tokens, max_completion_tokens)"},
    {"ProviderBaseUrlScheme", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    base_url: ftp://example.com/v1
)y",
     "test.yaml:6:15: providers[0].base_url: scheme must be http or https"},
    {"ProviderBaseUrlQuery", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    base_url: https://example.com/v1?api-version=1
)y",
     "test.yaml:6:15: providers[0].base_url: must not contain a query string ('?...')"},
    {"ProviderBaseUrlFragment", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    base_url: https://example.com/v1#x
)y",
     "test.yaml:6:15: providers[0].base_url: must not contain a fragment ('#...')"},
    {"ProviderBaseUrlCredentials",
     R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    base_url: https://user:hunter2secret@example.com/v1
)y",
     "test.yaml:6:15: providers[0].base_url: must not contain credentials; use api_key or "
     "headers instead",
     {},
     "hunter2secret"},
    {"ProviderBaseUrlNotAUrl", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    base_url: api.openai.com/v1
)y",
     "test.yaml:6:15: providers[0].base_url: not a valid absolute URL (expected e.g. "
     "https://api.openai.com/v1)"},
    {"ProviderApiKeyControlCharacters",
     R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    api_key: "sk-live-abcdef\r\nX-Evil: 1"
)y",
     "test.yaml:6:14: providers[0].api_key: contains control characters (value not shown)",
     {},
     "sk-live-abcdef"},
    {"ProviderForwardAuthorization", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    forward_headers: [x-trace-id, Authorization]
)y",
     "test.yaml:6:35: providers[0].forward_headers[1]: \"authorization\" is never forwarded"},
    {"ProviderForwardPrefixCoversCookie", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    forward_headers: [co*]
)y",
     "test.yaml:6:23: providers[0].forward_headers[0]: \"co*\" would match \"content-length\", "
     "which is never forwarded"},
    {"ProviderForwardStarInMiddle", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    forward_headers: ["x-*-id"]
)y",
     "test.yaml:6:23: providers[0].forward_headers[0]: invalid header pattern \"x-*-id\" (a "
     "header name, or a prefix ending in '*'; '*' only as the last character)"},
    {"ProviderForwardEverything", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    forward_headers: ["*"]
)y",
     "test.yaml:6:23: providers[0].forward_headers[0]: \"*\" would forward every header, "
     "including credentials; list names or prefixes such as \"x-trace-*\""},
    {"ProviderForwardDuplicate", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    forward_headers: [x-trace-id, X-Trace-Id]
)y",
     "test.yaml:6:35: providers[0].forward_headers[1]: duplicate entry \"x-trace-id\""},
    {"ProviderHeaderHost", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    headers:
      Host: example.com
)y",
     "test.yaml:7:7: providers[0].headers.Host: the gateway sets this header itself; it cannot "
     "be configured"},
    {"ProviderHeaderAuthorizationWithApiKey", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    api_key: sk-abc
    headers: { Authorization: Bearer other }
)y",
     "test.yaml:7:16: providers[0].headers.Authorization: conflicts with api_key (which is sent "
     "as Authorization: Bearer); set only one"},
    {"ProviderHeaderInvalidName", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    headers: { "X Bad": 1 }
)y",
     "test.yaml:6:16: providers[0].headers.X Bad: not a valid HTTP header name"},
    {"ProviderHeaderDuplicateIgnoringCase", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    headers: { X-Team: a, x-team: b }
)y",
     "test.yaml:6:27: providers[0].headers.x-team: duplicate header (names are "
     "case-insensitive)"},
    {"ProviderHeaderValueLineBreak",
     R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    headers: { X-Api-Key: "tok-secret-1\r\nHost: evil" }
)y",
     "test.yaml:6:27: providers[0].headers.X-Api-Key: header value contains a line break or NUL "
     "(value not shown)",
     {},
     "tok-secret-1"},
    {"ProviderTimeoutFirstByteAfterTotal", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    timeout: { first_byte_ms: 9000, total_ms: 5000 }
)y",
     "test.yaml:6:31: providers[0].timeout: first_byte_ms (9000) must not exceed total_ms (5000)"},
    {"ProviderTimeoutTotalBelowDefaultFirstByte", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    timeout: { total_ms: 5000 }
)y",
     "test.yaml:6:26: providers[0].timeout: first_byte_ms (60000) must not exceed total_ms "
     "(5000)"},
    {"ProviderTimeoutZero", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    timeout: { connect_ms: 0 }
)y",
     "test.yaml:6:28: providers[0].timeout.connect_ms: must be between 1 and 86400000 (got 0)"},
    {"ProviderPoolZeroConnections", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    pool: { max_connections: 0 }
)y",
     "test.yaml:6:30: providers[0].pool.max_connections: must be between 1 and 1000000 (got 0)"},
    {"ProviderTlsCaFileMissing", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    tls: { ca_file: /nonexistent/sluice/ca.pem }
)y",
     "test.yaml:6:21: providers[0].tls.ca_file: file \"/nonexistent/sluice/ca.pem\" does not "
     "exist"},
    {"ProviderTlsVerifyNotBool", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    tls: { verify: off }
)y",
     "test.yaml:6:20: providers[0].tls.verify: expected true or false, got \"off\""},
    {"ProviderMockDimensionsZero", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
    mock: { embedding_dimensions: 0 }
)y",
     "test.yaml:6:35: providers[0].mock.embedding_dimensions: must be between 1 and 65536 (got "
     "0)"},
    {"ProviderRequiresEnvInvalidName", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    requires_env: [OPENAI-KEY]
)y",
     "test.yaml:6:20: providers[0].requires_env[0]: invalid environment variable name "
     "\"OPENAI-KEY\""},
    {"SkippedProviderStillRejectsUnknownFields", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    requires_env: [OPENAI_API_KEY]
    api_kye: ${OPENAI_API_KEY}
)y",
     "test.yaml:7:5: providers[0].api_kye: unknown field; did you mean \"api_key\"?"},
    {"SkippedProviderStillChecksAdapterFields", R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    requires_env: [OPENAI_API_KEY]
    mock: { embedding_dimensions: 4 }
)y",
     "test.yaml:7:11: providers[0].mock: only valid for adapter mock"},

    // routes
    {"MissingRoutes", "version: 1\nauth: none\nproviders: [{id: mock, adapter: mock}]\n",
     "test.yaml:1:1: routes: missing required field"},
    {"EmptyRoutes", "version: 1\nauth: none\nproviders: [{id: mock, adapter: mock}]\nroutes: []\n",
     "test.yaml:4:9: routes: at least one route is required"},
    {"RouteUnknownProvider", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
  - id: openai
    adapter: openai
routes:
  - alias: chat
    provider: opnai
    model: m
)y",
     "test.yaml:10:15: routes[0].provider: unknown provider \"opnai\" (known: mock, openai)"},
    {"RouteUnknownProviderInTargets", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    targets: [{provider: nope, model: m}]
)y",
     "test.yaml:8:26: routes[0].targets[0].provider: unknown provider \"nope\" (known: mock)"},
    {"RouteDuplicateAlias", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
  - alias: [other, chat]
    provider: mock
    model: m
)y",
     "test.yaml:10:20: routes[1].alias[1]: alias \"chat\" is already used by routes[0] "
     "(test.yaml:7)"},
    {"RouteDuplicateAliasInOneRoute", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: [chat, chat]
    provider: mock
    model: m
)y",
     "test.yaml:7:19: routes[0].alias[1]: alias \"chat\" is already used by routes[0] "
     "(test.yaml:7)"},
    {"RouteEmptyAliasList", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: []
    provider: mock
    model: m
)y",
     "test.yaml:7:12: routes[0].alias: at least one alias is required"},
    {"RouteAliasWithSpace", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: "my model"
    provider: mock
    model: m
)y",
     "test.yaml:7:12: routes[0].alias: alias must be 1..256 visible characters without spaces"},
    {"RouteMissingAlias", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - provider: mock
    model: m
)y",
     "test.yaml:7:5: routes[0].alias: missing required field"},
    {"RouteProviderAndTargets", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
    targets: [{provider: mock, model: m}]
)y",
     "test.yaml:8:15: routes[0].provider: use one of provider/model, targets or policy"},
    {"RoutePolicyUnknownProvider", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      fallback:
        targets:
          - loadbalance:
              targets:
                - { provider: mock, model: a, weight: 3 }
                - { provider: mokc, model: b, weight: 1 }
          - { provider: mock, model: c }
)y",
     "test.yaml:14:31: routes[0].policy.fallback.targets[0].loadbalance.targets[1].provider: "
     "unknown provider \"mokc\" (known: mock)"},
    {"RoutePolicyWeightOutsideLoadbalance", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    targets:
      - { provider: mock, model: a, weight: 2 }
)y",
     "test.yaml:9:45: routes[0].targets[0].weight: weight applies only inside loadbalance"},
    {"RoutePolicyNeverRetriedStatus", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      fallback:
        on_status: [429, 400]
        targets: [{ provider: mock, model: a }, { provider: mock, model: b }]
)y",
     "test.yaml:10:26: routes[0].policy.fallback.on_status[1]: 400 is never retried: the same "
     "request fails the same way everywhere"},
    {"RoutePolicyAllWeightsZero", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      loadbalance:
        targets:
          - { provider: mock, model: a, weight: 0 }
          - { provider: mock, model: b, weight: 0 }
)y",
     "test.yaml:11:11: routes[0].policy.loadbalance.targets: every target has weight 0: at least "
     "one must take traffic"},
    {"RoutePolicyTwoKinds", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      provider: mock
      model: a
      fallback: { targets: [{ provider: mock, model: b }] }
)y",
     "test.yaml:9:7: routes[0].policy: a node is one of: a target (provider, model), fallback, "
     "loadbalance or conditional"},
    {"RouteEmbeddingsIncomparableFallback", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: embed
    kind: embeddings
    targets:
      - { provider: mock, model: small }
      - { provider: mock, model: large }
)y",
     "test.yaml:7:5: routes[0]: embeddings target mock/large (test.yaml:11) returns vectors that "
     "are not comparable with mock/small: give both the same vector_space to allow it"},
    {"RouteConditionalWithoutDefault", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      conditional:
        rules:
          - when: { stream: true }
            then: { provider: mock, model: a }
)y",
     "test.yaml:10:9: routes[0].policy.conditional.default: missing required field"},
    {"RouteFallbackOnStatusThatIsNeverRetried", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      fallback:
        on_status: [429, 409]
        targets: [{provider: mock, model: a}, {provider: mock, model: b}]
)y",
     "test.yaml:10:26: routes[0].policy.fallback.on_status[1]: 409 can never move on: only 408, "
     "429, 5xx and failures without a status are retried"},
    {"RouteConditionalUnknownTest", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      conditional:
        rules:
          - when: { temperature: { gt: 1 } }
            then: { provider: mock, model: a }
        default: { provider: mock, model: b }
)y",
     "test.yaml:11:21: routes[0].policy.conditional.rules[0].when.temperature: unknown field "
     "(expected one of: key, key_group, stream, max_tokens, headers, guardrails)"},
    {"RouteConditionalCredentialHeader", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    policy:
      conditional:
        rules:
          - when: { headers: { authorization: x } }
            then: { provider: mock, model: a }
        default: { provider: mock, model: b }
)y",
     "test.yaml:11:32: routes[0].policy.conditional.rules[0].when.headers.authorization: a header "
     "a rule may test (not a credential or framing header)"},
    {"RouteRetryBudgetRatio", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
    retry: { budget_ratio: 1.5 }
)y",
     "test.yaml:10:28: routes[0].retry.budget_ratio: expected a number from 0 to 1"},
    {"RouteEmptyTargets", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    targets: []
)y",
     "test.yaml:8:14: routes[0].targets: at least one target is required"},
    {"RouteNoTarget", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
)y",
     "test.yaml:7:5: routes[0]: missing target: set provider and model, targets, or policy"},
    {"RouteMissingModel", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
)y",
     "test.yaml:7:5: routes[0].model: missing required field"},
    {"RouteUnknownKind", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    kind: completion
    provider: mock
    model: m
)y",
     "test.yaml:8:11: routes[0].kind: expected \"chat\" or \"embeddings\", got \"completion\""},
    {"RouteTimeoutExceedsInheritedTotal", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
    timeout: { first_byte_ms: 500, total_ms: 1000 }
routes:
  - alias: chat
    provider: mock
    model: m
    timeout: { first_byte_ms: 2000 }
)y",
     "test.yaml:11:31: routes[0].timeout: first_byte_ms (2000) must not exceed total_ms (1000)"},
    {"RouteUnknownField", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
    retries: { max_attempts: 3 }
)y",
     "test.yaml:10:5: routes[0].retries: unknown field (expected one of: alias, kind, provider, "
     "model, targets, policy, retry, timeout, max_output_tokens, heartbeat_ms, cache, guardrails)"},

    // keys
    {"KeyTooShort",
     R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-short-9
)y",
     "test.yaml:11:10: keys[0].key: too short: keys need at least 16 characters (value not "
     "shown)",
     {},
     "sk-short-9"},
    {"KeyWithSpaces",
     R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: "sk has spaces in it 123"
)y",
     "test.yaml:11:10: keys[0].key: must contain only visible ASCII characters, no spaces (value "
     "not shown)",
     {},
     "spaces in it"},
    {"KeyFromEnvTooShort",
     R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: ${DEV_KEY}
)y",
     "test.yaml:11:10: keys[0].key: too short: keys need at least 16 characters (value not "
     "shown)",
     {{"DEV_KEY", "tiny-secret"}},
     "tiny-secret"},
    {"KeyAndDigest",
     R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
    key_sha256: 221df437bc4f8c4d9718bd7a9ec4c1021c72fd69dfb2a5f568ecf4607c824bee
)y",
     "test.yaml:12:17: keys[0].key_sha256: set either key or key_sha256, not both",
     {},
     "sk-0123456789abcdef"},
    {"KeyMissingSecret", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
)y",
     "test.yaml:10:5: keys[0]: missing key: set key (plaintext, hashed at load) or key_sha256"},
    {"KeyBadDigest", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key_sha256: 221df437bc4f8c4d
)y",
     "test.yaml:11:17: keys[0].key_sha256: expected 64 hexadecimal digits (a SHA-256 digest; "
     "value not shown)"},
    {"KeyMissingName", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - key: sk-0123456789abcdef
)y",
     "test.yaml:10:5: keys[0].name: missing required field"},
    {"KeyDuplicateName", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
  - name: dev
    key: sk-0123456789abcdeX
)y",
     "test.yaml:12:11: keys[1].name: duplicate key name \"dev\" (first used by keys[0])"},
    {"KeySameSecretAsPlaintextAndDigest",
     R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
  - name: ci
    key_sha256: 221DF437BC4F8C4D9718BD7A9EC4C1021C72FD69DFB2A5F568ECF4607C824BEE
)y",
     "test.yaml:13:17: keys[1].key_sha256: same secret as key \"dev\" (test.yaml:10); every key "
     "needs its own secret",
     {},
     "sk-0123456789abcdef"},
    {"KeySameSecretTwice",
     R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
  - name: ci
    key: sk-0123456789abcdef
)y",
     "test.yaml:13:10: keys[1].key: same secret as key \"dev\" (test.yaml:10); every key needs "
     "its own secret",
     {},
     "sk-0123456789abcdef"},
    {"KeyUnknownAlias", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
    models: [chat, chta]
)y",
     "test.yaml:12:20: keys[0].models[1]: unknown alias \"chta\" (known: chat)"},
    {"KeyEmptyModels", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
    models: []
)y",
     "test.yaml:12:13: keys[0].models: empty list; omit models to allow every alias"},
    {"KeyDuplicateModel", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-0123456789abcdef
    models: [chat, chat]
)y",
     "test.yaml:12:20: keys[0].models[1]: duplicate alias \"chat\""},
    {"KeysNotAList", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys: {name: dev}
)y",
     "test.yaml:9:7: keys: expected a list, got a mapping"},

    // ${VAR} interpolation
    {"UnsetVariable", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: ${MODEL}
)y",
     "test.yaml:9:12: routes[0].model: environment variable MODEL is not set (use "
     "${MODEL:-default} to give a default)"},
    {"UnterminatedVariable", R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: "${MODEL"
)y",
     "test.yaml:9:12: routes[0].model: unterminated ${ (expected ${NAME} or ${NAME:-default}; "
     "write $$ for a literal $)"},
    {"UnsetVariableInSecret", R"y(version: 1
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    key: sk-${SUFFIX}
)y",
     "test.yaml:11:10: keys[0].key: environment variable SUFFIX is not set (use "
     "${SUFFIX:-default} to give a default)"},
    {"InterpolatedNumberStillChecked", R"y(version: 1
auth: none
server:
  max_connections: ${MAXC:-lots}
providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
)y",
     "test.yaml:4:20: server.max_connections: expected a non-negative integer, got \"lots\""},
    {"UnsetVariableInActiveProvider",
     R"y(version: 1
auth: none
providers:
  - id: oa
    adapter: openai
    requires_env: [OPENAI_API_KEY]
    base_url: ${OPENAI_BASE_URL}
)y",
     "test.yaml:7:15: providers[0].base_url: environment variable OPENAI_BASE_URL is not set (use "
     "${OPENAI_BASE_URL:-default} to give a default)",
     {{"OPENAI_API_KEY", "sk-test"}}},
    {"EmptyEnvValueIsNotAValidListen",
     R"y(version: 1
listen: ${LISTEN}
)y",
     "test.yaml:2:9: listen: expected host:port, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080, "
     "got \"\"",
     {{"LISTEN", ""}}},
};

INSTANTIATE_TEST_SUITE_P(Rules, ConfigErrorTest, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return std::string(info.param.name);
                         });

// ---------------------------------------------------------------------------------------
// Successful loads.

TEST(ConfigLoadTest, StrictFields) {
  EXPECT_TRUE(
      load_ok(std::string("server: { strict_fields: true }\n") + kMinimal)->server.strict_fields);
  EXPECT_FALSE(
      load_ok(std::string("server: { strict_fields: false }\n") + kMinimal)->server.strict_fields);
}

TEST(ConfigLoadTest, HeartbeatAndOutputCap) {
  auto defaults = load_ok(kMinimal);
  EXPECT_EQ(defaults->server.heartbeat, std::chrono::milliseconds(15000));
  EXPECT_EQ(defaults->routes[0].max_output_tokens.limit, 0u);
  EXPECT_FALSE(defaults->routes[0].heartbeat);

  auto config = load_ok(R"y(version: 1
auth: none
server: { heartbeat_ms: 0 }
providers:
  - id: mock
    adapter: mock
routes:
  - alias: capped
    provider: mock
    model: m
    max_output_tokens: 512
    heartbeat_ms: 2500
  - alias: strict
    provider: mock
    model: m
    max_output_tokens: { limit: 64, action: refuse }
)y");
  EXPECT_EQ(config->server.heartbeat, std::chrono::milliseconds(0));
  EXPECT_EQ(config->routes[0].max_output_tokens.limit, 512u);
  EXPECT_EQ(config->routes[0].max_output_tokens.action, config::OutputCap::Action::kCap);
  EXPECT_EQ(config->routes[0].heartbeat, std::chrono::milliseconds(2500));
  EXPECT_EQ(config->routes[1].max_output_tokens.limit, 64u);
  EXPECT_EQ(config->routes[1].max_output_tokens.action, config::OutputCap::Action::kRefuse);
}

TEST(ConfigLoadTest, MinimalConfigGetsDefaults) {
  auto config = load_ok(kMinimal);
  EXPECT_EQ(config->version, 1u);
  EXPECT_EQ(config->source_path, "test.yaml");
  EXPECT_EQ(config->listen.host, "0.0.0.0");
  EXPECT_EQ(config->listen.port, 8080);
  EXPECT_EQ(config->server.workers, 0u);
  EXPECT_EQ(config->server.max_connections, 10000u);
  EXPECT_EQ(config->server.max_header_bytes, 16384u);
  EXPECT_EQ(config->server.max_body_bytes, 8u * 1024 * 1024);
  EXPECT_EQ(config->server.idle_timeout, Millis(60000));
  EXPECT_EQ(config->server.request_timeout, Millis(30000));
  EXPECT_EQ(config->server.drain_timeout, Millis(30000));
  EXPECT_EQ(config->server.max_upstream_response_bytes, 64u * 1024 * 1024);
  EXPECT_FALSE(config->server.strict_fields);
  EXPECT_TRUE(config->access_log.enabled);
  EXPECT_EQ(config->access_log.path, "");
  EXPECT_FALSE(config->require_auth);
  ASSERT_EQ(config->providers.size(), 1u);
  const Provider& p = config->providers[0];
  EXPECT_EQ(p.id, "mock");
  EXPECT_EQ(p.adapter, "mock");
  EXPECT_EQ(p.base_url, "");
  EXPECT_TRUE(p.options.empty());
  EXPECT_EQ(p.pool.max_connections, 10000u);
  EXPECT_EQ(p.timeout.idle, Millis(300000));
  EXPECT_EQ(p.timeout.first_byte, Millis(60000));
  EXPECT_EQ(p.source, "test.yaml:4");
  ASSERT_EQ(config->routes.size(), 1u);
  const Route& r = config->routes[0];
  EXPECT_EQ(r.aliases, std::vector<std::string>{"chat"});
  EXPECT_EQ(r.kind, RouteKind::kChat);
  ASSERT_EQ(r.targets.size(), 1u);
  EXPECT_EQ(r.targets[0].provider, "mock");
  EXPECT_EQ(r.targets[0].model, "m");
  EXPECT_FALSE(r.timeout.has_value());
  EXPECT_EQ(r.source, "test.yaml:7");
  EXPECT_TRUE(config->keys.empty());
  EXPECT_EQ(config->notes,
            std::vector<std::string>{"auth is disabled (auth: none): every caller is accepted "
                                     "without a key; use only for local development"});
}

TEST(ConfigLoadTest, EveryFieldSet) {
  const std::string ca_file = SLUICE_SOURCE_DIR "/CMakeLists.txt";
  auto config = load_ok(R"y(version: 42
listen: "[::1]:0"
server:
  workers: 4
  max_connections: 500
  max_header_bytes: 32KiB
  max_body_bytes: 1 MiB
  idle_timeout_ms: 1000
  request_timeout_ms: 2000
  drain_timeout_ms: 0
  max_upstream_response_bytes: 1GiB
access_log: { enabled: false, path: /var/log/sluice.log }
auth: required
providers:
  - id: openai
    adapter: openai
    base_url: http://127.0.0.1:11434/v1/
    api_key: sk-upstream
    headers: { OpenAI-Organization: org-123 }
    forward_headers: [X-Mock-*, x-trace-id]
    pool: { max_connections: 8, acquire_timeout_ms: 0, idle_timeout_ms: 500 }
    timeout: { connect_ms: 100, first_byte_ms: 200, total_ms: 300 }
    tls: { verify: false, ca_file: )y" +
                        ca_file + R"y(, server_name: api.internal }
  - id: mock
    adapter: mock
    mock: { embedding_dimensions: 3, chunk_interval_ms: 5 }
routes:
  - alias: [a, b]
    kind: embeddings
    targets: [{provider: openai, model: text-embedding-3-small}]
    timeout: { total_ms: 1000 }
  - alias: c
    provider: mock
    model: mock-1
keys:
  - name: dev
    key: sk-0123456789abcdef
    models: [a, c]
)y");
  EXPECT_EQ(config->version, 42u);
  EXPECT_EQ(config->listen.host, "::1");
  EXPECT_EQ(config->listen.port, 0);
  EXPECT_EQ(config->server.workers, 4u);
  EXPECT_EQ(config->server.max_connections, 500u);
  EXPECT_EQ(config->server.max_header_bytes, 32u * 1024);
  EXPECT_EQ(config->server.max_body_bytes, 1024u * 1024);
  EXPECT_EQ(config->server.idle_timeout, Millis(1000));
  EXPECT_EQ(config->server.request_timeout, Millis(2000));
  EXPECT_EQ(config->server.drain_timeout, Millis(0));
  EXPECT_EQ(config->server.max_upstream_response_bytes, 1024u * 1024 * 1024);
  EXPECT_FALSE(config->access_log.enabled);
  EXPECT_EQ(config->access_log.path, "/var/log/sluice.log");
  EXPECT_TRUE(config->require_auth);

  ASSERT_EQ(config->providers.size(), 2u);
  const Provider& oa = config->providers[0];
  EXPECT_EQ(oa.adapter, "openai");
  EXPECT_EQ(oa.base_url, "http://127.0.0.1:11434/v1");
  EXPECT_EQ(oa.api_key, "sk-upstream");
  EXPECT_EQ(oa.headers, (std::map<std::string, std::string>{{"OpenAI-Organization", "org-123"}}));
  EXPECT_EQ(oa.forward_headers, (std::vector<std::string>{"x-mock-*", "x-trace-id"}));
  EXPECT_EQ(oa.pool.max_connections, 8u);
  EXPECT_EQ(oa.pool.acquire_timeout, Millis(0));
  EXPECT_EQ(oa.pool.idle_timeout, Millis(500));
  EXPECT_EQ(oa.timeout.connect, Millis(100));
  EXPECT_EQ(oa.timeout.first_byte, Millis(200));
  EXPECT_EQ(oa.timeout.total, Millis(300));
  EXPECT_FALSE(oa.tls.verify);
  EXPECT_EQ(oa.tls.ca_file, ca_file);
  EXPECT_EQ(oa.tls.server_name, "api.internal");
  EXPECT_EQ(oa.source, "test.yaml:15");
  const Provider& mock = config->providers[1];
  EXPECT_EQ(mock.adapter, "mock");
  EXPECT_EQ(*mock.option("mock.embedding_dimensions"), "3");
  EXPECT_EQ(*mock.option("mock.chunk_interval_ms"), "5");

  ASSERT_EQ(config->routes.size(), 2u);
  const Route& r = config->routes[0];
  EXPECT_EQ(r.aliases, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.kind, RouteKind::kEmbeddings);
  EXPECT_EQ(r.targets[0].provider, "openai");
  EXPECT_EQ(r.targets[0].model, "text-embedding-3-small");
  ASSERT_TRUE(r.timeout.has_value());
  // Unspecified fields inherit from the provider, not from the global defaults.
  EXPECT_EQ(r.timeout->connect, Millis(100));
  EXPECT_EQ(r.timeout->first_byte, Millis(200));
  EXPECT_EQ(r.timeout->total, Millis(1000));
  EXPECT_EQ(r.source, "test.yaml:28");

  ASSERT_EQ(config->keys.size(), 1u);
  EXPECT_EQ(config->keys[0].name, "dev");
  EXPECT_EQ(config->keys[0].allowed_aliases, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(config->keys[0].source, "test.yaml:36");

  EXPECT_EQ(config->notes,
            std::vector<std::string>{"provider openai: tls.verify is false; upstream "
                                     "certificates are NOT checked (use only in a lab)"});
}

TEST(ConfigLoadTest, ListenForms) {
  struct Case {
    const char* text;
    const char* host;
    std::uint16_t port;
  };
  for (const Case& c : {Case{"127.0.0.1:8080", "127.0.0.1", 8080}, Case{"0.0.0.0:0", "0.0.0.0", 0},
                        Case{"localhost:65535", "localhost", 65535},
                        Case{"\"[::]:443\"", "::", 443}, Case{"\"[::1]:8080\"", "::1", 8080}}) {
    SCOPED_TRACE(c.text);
    auto config = load_ok(std::string("listen: ") + c.text + "\n" + kMinimal);
    EXPECT_EQ(config->listen.host, c.host);
    EXPECT_EQ(config->listen.port, c.port);
  }
}

TEST(ConfigLoadTest, SizeStrings) {
  struct Case {
    const char* text;
    std::uint32_t bytes;
  };
  for (const Case& c : {Case{"1024", 1024}, Case{"2048B", 2048}, Case{"512KiB", 512 * 1024},
                        Case{"8MiB", 8 * 1024 * 1024}, Case{"\"8 MiB\"", 8 * 1024 * 1024},
                        Case{"1GiB", 1024 * 1024 * 1024}}) {
    SCOPED_TRACE(c.text);
    auto config = load_ok(std::string(kMinimal) + "server:\n  max_body_bytes: " + c.text + "\n");
    EXPECT_EQ(config->server.max_body_bytes, c.bytes);
  }
}

TEST(ConfigLoadTest, BaseUrlDefaultsAndNormalisation) {
  auto config = load_ok(R"y(version: 1
auth: none
providers:
  - id: default
    adapter: openai
  - id: slashes
    adapter: openai
    base_url: https://api.example.com:8443/openai/v1//
  - id: bare
    adapter: openai
    base_url: http://vllm.internal/
routes:
  - alias: chat
    provider: default
    model: m
)y");
  ASSERT_EQ(config->providers.size(), 3u);
  EXPECT_EQ(config->providers[0].base_url, "");  // the adapter's default (api.openai.com)
  EXPECT_EQ(config->providers[1].base_url, "https://api.example.com:8443/openai/v1");
  EXPECT_EQ(config->providers[2].base_url, "http://vllm.internal");
}

// The openai adapter reads it (default by host: tests/unit/providers); config validates it.
TEST(ConfigLoadTest, AdapterOptionsAreValidatedAndKept) {
  auto config = load_ok(R"y(version: 1
auth: none
providers:
  - id: openai
    adapter: openai
  - id: vllm
    adapter: openai
    base_url: http://vllm.internal:8000/v1
  - id: openai-proxy
    adapter: openai
    base_url: https://api.openai.com.example.net/v1
  - id: forced
    adapter: openai
    max_tokens_field: max_completion_tokens
    base_url: http://vllm.internal:8000/v1
  - id: legacy
    adapter: openai
    max_tokens_field: max_tokens
routes:
  - alias: chat
    provider: openai
    model: m
)y");
  ASSERT_EQ(config->providers.size(), 5u);
  EXPECT_EQ(config->providers[0].option("max_tokens_field"), nullptr);
  EXPECT_EQ(*config->providers[3].option("max_tokens_field"), "max_completion_tokens");
  EXPECT_EQ(*config->providers[4].option("max_tokens_field"), "max_tokens");
}

TEST(ConfigLoadTest, NullSectionsCountAsEmpty) {
  auto config = load_ok(R"y(version: 1
server:
access_log:
auth: none
providers:
  - id: mock
    adapter: mock
    headers:
    forward_headers:
routes:
  - alias: chat
    provider: mock
    model: m
keys:
)y");
  EXPECT_EQ(config->server.max_connections, 10000u);
  EXPECT_TRUE(config->providers[0].headers.empty());
  EXPECT_TRUE(config->keys.empty());
}

// ---------------------------------------------------------------------------------------
// ${VAR} interpolation.

TEST(ConfigInterpolationTest, UsesInjectedEnvironment) {
  auto config = load_ok(R"y(version: ${VERSION}
listen: ${HOST:-127.0.0.1}:${PORT:-9000}
auth: none
server:
  max_connections: ${MAXC:-256}
  max_body_bytes: ${BODY:-1MiB}
access_log: { enabled: "${LOG:-true}", path: "$${HOME}/log" }
providers:
  - id: oa
    adapter: openai
    base_url: ${BASE:-https://api.openai.com/v1}
    api_key: ${OPENAI_API_KEY}
    headers: { X-Team: "team-${TEAM:-none}" }
routes:
  - alias: chat
    provider: oa
    model: ${MODEL:-gpt-4o-mini}
)y",
                        {{"VERSION", "7"},
                         {"PORT", "8081"},
                         {"MAXC", ""},
                         {"OPENAI_API_KEY", "sk-from-env"},
                         {"TEAM", "search"},
                         {"BASE", "http://localhost:4000/v1"}});
  EXPECT_EQ(config->version, 7u);
  EXPECT_EQ(config->listen.host, "127.0.0.1");
  EXPECT_EQ(config->listen.port, 8081);
  // ${VAR:-default} also applies when the variable is set but empty.
  EXPECT_EQ(config->server.max_connections, 256u);
  EXPECT_EQ(config->server.max_body_bytes, 1024u * 1024);
  EXPECT_TRUE(config->access_log.enabled);
  EXPECT_EQ(config->access_log.path, "${HOME}/log");
  EXPECT_EQ(config->providers[0].base_url, "http://localhost:4000/v1");
  EXPECT_EQ(config->providers[0].api_key, "sk-from-env");
  EXPECT_EQ(config->providers[0].headers.at("X-Team"), "team-search");
  EXPECT_EQ(config->routes[0].targets[0].model, "gpt-4o-mini");
}

TEST(ConfigInterpolationTest, FieldNamesAreNotInterpolated) {
  auto result = load(R"y(version: 1
${FIELD}: 1
)y",
                     {{"FIELD", "auth"}});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            "test.yaml:2:1: ${FIELD}: unknown field (expected one of: version, listen, server, "
            "access_log, admin, store, metering, traces, auth, routing, providers, routes, "
            "keys, state, limits, tenancy, cache, idempotency, guardrails)");
}

TEST(ConfigInterpolationTest, SetButEmptyVariableIsEmptyString) {
  auto config = load_ok(std::string(kMinimal) + "access_log: { path: \"${LOG_PATH}\" }\n",
                        {{"LOG_PATH", ""}});
  EXPECT_EQ(config->access_log.path, "");
}

TEST(ConfigInterpolationTest, FallsBackToProcessEnvironment) {
  ::setenv("SLUICE_CONFIG_TEST_MODEL", "from-process", 1);
  auto config = load_from_string(
      R"y(version: 1
auth: none
providers: [{id: mock, adapter: mock}]
routes: [{alias: chat, provider: mock, model: "${SLUICE_CONFIG_TEST_MODEL}"}]
)y",
      "env.yaml", LoadOptions{.getenv = {}, .adapters = providers::adapter_schemas()});
  ::unsetenv("SLUICE_CONFIG_TEST_MODEL");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ((*config)->routes[0].targets[0].model, "from-process");
}

// ---------------------------------------------------------------------------------------
// requires_env skipping.

constexpr char kSkippable[] = R"y(version: 1
providers:
  - id: mock
    adapter: mock
  - id: openai
    adapter: openai
    api_key: ${OPENAI_API_KEY}
    base_url: ${OPENAI_BASE_URL}
    requires_env: [OPENAI_API_KEY, OPENAI_BASE_URL]
    timeout: { total_ms: 1000, first_byte_ms: 500 }
routes:
  - alias: mock-chat
    provider: mock
    model: mock-1
  - alias: [gpt-4o-mini, gpt]
    provider: openai
    model: gpt-4o-mini
    timeout: { first_byte_ms: 800 }
keys:
  - name: dev
    key: sk-sluice-dev-0000000000
    models: [mock-chat, gpt]
  - name: openai-only
    key: sk-sluice-dev-0000000001
    models: [gpt-4o-mini]
)y";

TEST(ConfigSkipTest, ProviderWithUnsetRequiredEnvIsSkipped) {
  auto config = load_ok(kSkippable);
  ASSERT_EQ(config->providers.size(), 1u);
  EXPECT_EQ(config->providers[0].id, "mock");
  ASSERT_EQ(config->routes.size(), 1u);
  EXPECT_EQ(config->routes[0].aliases[0], "mock-chat");
  EXPECT_EQ(config->notes,
            (std::vector<std::string>{
                "provider openai skipped: OPENAI_API_KEY is not set, OPENAI_BASE_URL is not set",
                "route gpt-4o-mini, gpt skipped: provider openai disabled (OPENAI_API_KEY not "
                "set, OPENAI_BASE_URL not set)"}));
  // Keys may name skipped aliases; they are kept so the allow-list never widens to "all".
  ASSERT_EQ(config->keys.size(), 2u);
  EXPECT_EQ(config->keys[0].allowed_aliases, (std::vector<std::string>{"mock-chat", "gpt"}));
  EXPECT_EQ(config->keys[1].allowed_aliases, (std::vector<std::string>{"gpt-4o-mini"}));
}

TEST(ConfigSkipTest, EmptyRequiredEnvAlsoSkips) {
  auto config = load_ok(kSkippable, {{"OPENAI_API_KEY", ""}, {"OPENAI_BASE_URL", "http://x"}});
  ASSERT_EQ(config->providers.size(), 1u);
  EXPECT_EQ(config->notes[0], "provider openai skipped: OPENAI_API_KEY is empty");
  EXPECT_EQ(config->notes[1],
            "route gpt-4o-mini, gpt skipped: provider openai disabled (OPENAI_API_KEY empty)");
}

TEST(ConfigSkipTest, ProviderIsActiveWhenEnvIsSet) {
  auto config = load_ok(kSkippable,
                        {{"OPENAI_API_KEY", "sk-live"}, {"OPENAI_BASE_URL", "https://x.test/v1"}});
  ASSERT_EQ(config->providers.size(), 2u);
  EXPECT_EQ(config->providers[1].api_key, "sk-live");
  EXPECT_EQ(config->providers[1].base_url, "https://x.test/v1");
  ASSERT_EQ(config->routes.size(), 2u);
  ASSERT_TRUE(config->routes[1].timeout.has_value());
  EXPECT_EQ(config->routes[1].timeout->first_byte, Millis(800));
  EXPECT_EQ(config->routes[1].timeout->total, Millis(1000));
  EXPECT_TRUE(config->notes.empty());
}

TEST(ConfigSkipTest, UnsetVariablesInsideSkippedProviderAreNotErrors) {
  auto config = load_ok(R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
  - id: corp
    adapter: openai
    requires_env: [CORP_TOKEN]
    base_url: ${CORP_URL}
    headers: { X-Token: "${CORP_TOKEN}" }
    pool: { max_connections: "${CORP_POOL}" }
routes:
  - alias: chat
    provider: mock
    model: m
)y");
  EXPECT_EQ(config->providers.size(), 1u);
  EXPECT_EQ(config->notes[0], "provider corp skipped: CORP_TOKEN is not set");
}

TEST(ConfigSkipTest, AllRoutesSkippedIsANoteNotAnError) {
  auto config = load_ok(R"y(version: 1
auth: none
providers:
  - id: openai
    adapter: openai
    requires_env: [OPENAI_API_KEY]
routes:
  - alias: gpt-4o-mini
    provider: openai
    model: gpt-4o-mini
)y");
  EXPECT_TRUE(config->providers.empty());
  EXPECT_TRUE(config->routes.empty());
  EXPECT_EQ(config->notes,
            (std::vector<std::string>{
                "provider openai skipped: OPENAI_API_KEY is not set",
                "route gpt-4o-mini skipped: provider openai disabled (OPENAI_API_KEY not set)",
                "auth is disabled (auth: none): every caller is accepted without a key; use only "
                "for local development",
                "no routes are active: every model request will be answered 404"}));
}

TEST(ConfigSkipTest, SkippedAliasesStillCountForUniqueness) {
  auto result = load(R"y(version: 1
auth: none
providers:
  - id: mock
    adapter: mock
  - id: openai
    adapter: openai
    requires_env: [OPENAI_API_KEY]
routes:
  - alias: chat
    provider: openai
    model: gpt-4o-mini
  - alias: chat
    provider: mock
    model: m
)y");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            "test.yaml:13:12: routes[1].alias: alias \"chat\" is already used by routes[0] "
            "(test.yaml:10)");
}

// ---------------------------------------------------------------------------------------
// Keys.

TEST(ConfigKeysTest, PlaintextKeyIsHashedWithSha256) {
  auto config = load_ok(R"y(version: 1
providers: [{id: mock, adapter: mock}]
routes: [{alias: chat, provider: mock, model: m}]
keys:
  - name: dev
    key: sk-sluice-dev-0000000000
  - name: ci
    key_sha256: 221DF437BC4F8C4D9718BD7A9EC4C1021C72FD69DFB2A5F568ECF4607C824BEE
)y");
  ASSERT_EQ(config->keys.size(), 2u);
  // printf %s sk-sluice-dev-0000000000 | sha256sum
  EXPECT_EQ(config->keys[0].sha256_hex,
            "28e1582fa5996de81aead655a4dc796e1ca056aa5be0dc7e7c22e9c090787942");
  // Digests given in upper case are stored in lower case.
  EXPECT_EQ(config->keys[1].sha256_hex,
            "221df437bc4f8c4d9718bd7a9ec4c1021c72fd69dfb2a5f568ecf4607c824bee");
  EXPECT_TRUE(config->keys[0].allowed_aliases.empty());
  EXPECT_TRUE(config->require_auth);
  EXPECT_TRUE(config->notes.empty());
}

TEST(ConfigKeysTest, KeyFromEnvironmentWithDefault) {
  const std::string yaml = R"y(version: 1
providers: [{id: mock, adapter: mock}]
routes: [{alias: chat, provider: mock, model: m}]
keys: [{name: dev, key: "${SLUICE_DEV_KEY:-sk-sluice-dev-0000000000}"}]
)y";
  EXPECT_EQ(load_ok(yaml)->keys[0].sha256_hex,
            "28e1582fa5996de81aead655a4dc796e1ca056aa5be0dc7e7c22e9c090787942");
  EXPECT_EQ(load_ok(yaml, {{"SLUICE_DEV_KEY", "sk-0123456789abcdef"}})->keys[0].sha256_hex,
            "221df437bc4f8c4d9718bd7a9ec4c1021c72fd69dfb2a5f568ecf4607c824bee");
}

// ---------------------------------------------------------------------------------------
// Files and robustness.

TEST(ConfigFileTest, MissingFile) {
  auto result = load_from_file("/nonexistent/sluice.yaml", with_env({}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            "/nonexistent/sluice.yaml:1:1: cannot read file: No such file or directory");
}

TEST(ConfigFileTest, DirectoryIsNotAFile) {
  auto result = load_from_file(SLUICE_SOURCE_DIR "/examples", with_env({}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            SLUICE_SOURCE_DIR "/examples:1:1: cannot read file: is a directory");
}

TEST(ConfigFileTest, SourceNamesComeFromThePath) {
  const std::string path = SLUICE_SOURCE_DIR "/examples/quickstart.yaml";
  auto result = load_from_file(path, with_env({}));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ((*result)->source_path, path);
  EXPECT_EQ((*result)->providers[0].source.rfind(path + ":", 0), 0u);
}

TEST(ConfigRobustnessTest, MalformedInputNeverThrows) {
  for (const char* text :
       {"[[[[[[", "{", "}", "version: 1\n  bad indent: [\n", "\t", "\x01\x02\x03", "&a [*a]",
        "version: *undefined\n", "? ? ?", "version: !!binary AAAA\n", "- - - -\n", "'",
        "version: 1\nproviders: [[]]\n", "version: 1\nauth: none\nproviders: [~]\n",
        "version: 1\nauth: none\nproviders: [{id: m, adapter: mock}]\nroutes: [~]\n"}) {
    SCOPED_TRACE(text);
    Result<std::shared_ptr<const Config>> result = std::shared_ptr<const Config>();
    EXPECT_NO_THROW(result = load(text));
    if (!result) {
      EXPECT_EQ(result.error().message().rfind("test.yaml:", 0), 0u) << result.error().message();
    }
  }
}

// --- admin, store, metering, traces and key groups ---------------------------------------

constexpr char kRoutesAndKey[] = R"y(providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
keys:
  - name: dev
    group: research
    key: sk-0123456789abcdef
)y";

TEST(ConfigLoadTest, MeteringSectionsAndKeyGroups) {
  auto config = load_ok(std::string(R"y(version: 1
admin: { listen: 127.0.0.1:0, key: admin-0123456789abcdef, metrics_on_main: true }
store: { postgres: "postgresql://sluice:pw@127.0.0.1:5432/sluice" }
metering: { prices: prices.yaml, spool: /var/spool/sluice.usage, batch_size: 100, flush_interval_ms: 50 }
traces:
  endpoint: http://127.0.0.1:4318/v1/traces
  sample_ratio: 0.25
  headers: { Authorization: "Bearer collector" }
access_log: { payloads: false }
routing: { budget_window_ms: 30000 }
)y") + kRoutesAndKey);
  EXPECT_TRUE(config->admin.enabled);
  EXPECT_EQ(config->admin.listen.port, 0);
  EXPECT_EQ(config->admin.key_sha256, sha256_hex("admin-0123456789abcdef"));
  EXPECT_TRUE(config->admin.metrics_on_main);
  EXPECT_EQ(config->store.kind, StoreSettings::Kind::kPostgres);
  EXPECT_EQ(config->metering.prices, "prices.yaml");
  EXPECT_EQ(config->metering.batch_size, 100u);
  EXPECT_EQ(config->metering.flush_interval, Millis(50));
  EXPECT_TRUE(config->traces.enabled);
  EXPECT_DOUBLE_EQ(config->traces.sample_ratio, 0.25);
  ASSERT_EQ(config->traces.headers.size(), 1u);
  EXPECT_EQ(config->traces.headers[0].first, "Authorization");
  EXPECT_EQ(config->routing.budget_window, Millis(30000));
  EXPECT_EQ(config->keys[0].group, "research");

  auto defaults = load_ok(std::string("version: 1\n") + kRoutesAndKey);
  EXPECT_FALSE(defaults->admin.enabled);
  EXPECT_EQ(defaults->store.kind, StoreSettings::Kind::kNone);
  EXPECT_FALSE(defaults->traces.enabled);
  EXPECT_EQ(defaults->routing.budget_window, Millis(10000));
  auto sqlite =
      load_ok(std::string("version: 1\nstore: { sqlite: ./sluice.db }\n") + kRoutesAndKey);
  EXPECT_EQ(sqlite->store.kind, StoreSettings::Kind::kSqlite);
  EXPECT_EQ(sqlite->store.sqlite_path, "./sluice.db");
}

TEST(ConfigLoadTest, MeteringSectionErrors) {
  struct Case {
    const char* section;
    const char* message;
  };
  const Case cases[] = {
      {"admin: { listen: 127.0.0.1:0 }\n",
       "test.yaml:2:8: admin: missing key: the admin listener needs its own credential (key or "
       "key_sha256)"},
      {"admin: { key: short }\n",
       "test.yaml:2:15: admin.key: the admin key needs at least 16 visible ASCII characters "
       "without spaces (value not shown)"},
      {"store: { sqlite: a.db, postgres: \"postgresql://x\" }\n",
       "test.yaml:2:34: store.postgres: set either sqlite or postgres, not both"},
      {"store: { postgres: \"mysql://x\" }\n",
       "test.yaml:2:20: store.postgres: expected a postgresql:// URL (value not shown)"},
      {"store: redis\n", "test.yaml:2:8: store: expected none, {sqlite: PATH} or {postgres: URL}"},
      {"traces: { endpoint: udp://x }\n",
       "test.yaml:2:21: traces.endpoint: expected an http:// or https:// URL of an OTLP/HTTP "
       "traces endpoint"},
      {"metering: { batch: 5 }\n",
       "test.yaml:2:13: metering.batch: unknown field (expected one of: prices, spool, "
       "queue_capacity, batch_size, flush_interval_ms, max_feature_length)"},
  };
  for (const Case& c : cases) {
    auto result = load(std::string("version: 1\n") + c.section + kRoutesAndKey);
    ASSERT_FALSE(result) << c.section;
    EXPECT_EQ(result.error().message(), c.message);
    EXPECT_EQ(result.error().message().find("short"), std::string::npos) << "secret echoed";
  }
}

TEST(ConfigLoadTest, TenancySection) {
  constexpr char kNoKeys[] = R"y(providers:
  - id: mock
    adapter: mock
routes:
  - alias: chat
    provider: mock
    model: m
)y";
  // A store turns tenancy on with the defaults, and keys may then all live in the store.
  auto defaults = load_ok(std::string("version: 1\nstore: { sqlite: ./s.db }\n") + kNoKeys);
  EXPECT_TRUE(defaults->tenancy.enabled);
  EXPECT_EQ(defaults->tenancy.refresh, Millis(1000));
  EXPECT_EQ(defaults->tenancy.budget_thresholds, (std::vector<std::uint32_t>{80, 100}));
  EXPECT_EQ(defaults->tenancy.webhook_url, "");
  auto full = load_ok(std::string(R"y(version: 1
store: { sqlite: ./s.db }
tenancy:
  refresh_ms: 250
  spend_refresh_ms: 2000
  budget_thresholds: [50, 90, 100, 120]
  budget_webhook: { url: "http://127.0.0.1:9/hook", timeout_ms: 500 }
limits:
  keys: { from-the-store: { rpm: 5 } }
  groups: { store-group: { concurrency: 2 } }
)y") + kNoKeys);
  EXPECT_TRUE(full->tenancy.enabled);
  EXPECT_EQ(full->tenancy.refresh, Millis(250));
  EXPECT_EQ(full->tenancy.spend_refresh, Millis(2000));
  EXPECT_EQ(full->tenancy.budget_thresholds, (std::vector<std::uint32_t>{50, 90, 100, 120}));
  EXPECT_EQ(full->tenancy.webhook_url, "http://127.0.0.1:9/hook");
  EXPECT_EQ(full->tenancy.webhook_timeout, Millis(500));
  EXPECT_EQ(full->limits.keys.count("from-the-store"), 1u);
  auto off = load_ok(std::string("version: 1\nstore: { sqlite: ./s.db }\n"
                                 "tenancy: { enabled: false }\n") +
                     kRoutesAndKey);
  EXPECT_FALSE(off->tenancy.enabled);
  auto none = load_ok(std::string("version: 1\n") + kRoutesAndKey);
  EXPECT_FALSE(none->tenancy.enabled);
}

TEST(ConfigLoadTest, TenancySectionErrors) {
  struct Case {
    const char* section;
    const char* message;
  };
  const Case cases[] = {
      {"tenancy: { refresh_ms: 500 }\n",
       "test.yaml:2:10: tenancy: keys and budgets in the store need a store: set store: { "
       "sqlite: PATH } or { postgres: URL }"},
      {"tenancy: { enabled: true }\n",
       "test.yaml:2:21: tenancy.enabled: keys and budgets in the store need a store: set store: "
       "{ sqlite: PATH } or { postgres: URL }"},
      {"store: { sqlite: a.db }\ntenancy: { budget_thresholds: [80, 80] }\n",
       "test.yaml:3:36: tenancy.budget_thresholds[1]: thresholds must increase (80 after 80)"},
      {"store: { sqlite: a.db }\ntenancy: { budget_thresholds: [] }\n",
       "test.yaml:3:31: tenancy.budget_thresholds: list at least one percentage (e.g. [80, "
       "100])"},
      {"store: { sqlite: a.db }\ntenancy: { budget_thresholds: [0] }\n",
       "test.yaml:3:32: tenancy.budget_thresholds[0]: must be between 1 and 1000 (got 0)"},
      {"store: { sqlite: a.db }\ntenancy: { budget_webhook: { url: ftp://x } }\n",
       "test.yaml:3:35: tenancy.budget_webhook.url: expected an http:// or https:// URL"},
      {"store: { sqlite: a.db }\ntenancy: { budget_webhook: { timeout_ms: 5 } }\n",
       "test.yaml:3:28: tenancy.budget_webhook.url: missing required field"},
      {"store: { sqlite: a.db }\ntenancy: { refresh: 5 }\n",
       "test.yaml:3:12: tenancy.refresh: unknown field (expected one of: enabled, refresh_ms, "
       "spend_refresh_ms, budget_thresholds, budget_webhook)"},
  };
  for (const Case& c : cases) {
    auto result = load(std::string("version: 1\n") + c.section + kRoutesAndKey);
    ASSERT_FALSE(result) << c.section;
    EXPECT_EQ(result.error().message(), c.message);
  }
}

TEST(ConfigLoadTest, LimitsAndState) {
  auto config = load_ok(std::string(R"y(version: 1
state:
  redis: { url: "redis://:pw@127.0.0.1:6380/2", timeout_ms: 15, on_error: fail_closed, key_prefix: "t1:" }
limits:
  key: { rpm: 60, tpm: 100000 }
  keys: { dev: { rpm: 600 } }
  groups: { research: { tpm: 1000000, concurrency: 20 } }
  models: { chat: { rpm: 100 } }
  providers: { mock: { tpm: 5000000 } }
  instance: { concurrency: 512 }
  lease_ttl_ms: 60000
)y") + kRoutesAndKey);
  const StateSettings& state = config->state;
  EXPECT_EQ(state.backend, StateSettings::Backend::kRedis);
  EXPECT_EQ(state.redis_host, "127.0.0.1");
  EXPECT_EQ(state.redis_port, 6380);
  EXPECT_EQ(state.redis_password, "pw");
  EXPECT_EQ(state.redis_db, 2u);
  EXPECT_EQ(state.timeout, Millis(15));
  EXPECT_EQ(state.on_error, StateSettings::OnError::kFailClosed);
  EXPECT_EQ(state.key_prefix, "t1:");
  const LimitSettings& limits = config->limits;
  EXPECT_EQ(limits.key.rpm, 60u);
  EXPECT_EQ(limits.key.tpm, 100000u);
  EXPECT_EQ(limits.keys.at("dev").rpm, 600u);
  EXPECT_EQ(limits.keys.at("dev").tpm, 0u);
  EXPECT_EQ(limits.groups.at("research").concurrency, 20u);
  EXPECT_EQ(limits.groups.at("research").source, "test.yaml:7");
  EXPECT_EQ(limits.models.at("chat").rpm, 100u);
  EXPECT_EQ(limits.providers.at("mock").tpm, 5000000u);
  EXPECT_EQ(limits.instance_concurrency, 512u);
  EXPECT_EQ(limits.lease_ttl, Millis(60000));
  EXPECT_TRUE(limits.any());

  auto defaults = load_ok(std::string("version: 1\n") + kRoutesAndKey);
  EXPECT_EQ(defaults->state.backend, StateSettings::Backend::kLocal);
  EXPECT_EQ(defaults->state.on_error, StateSettings::OnError::kFailOpen);
  EXPECT_EQ(defaults->state.timeout, Millis(20));
  EXPECT_FALSE(defaults->limits.any());
  auto plain = load_ok(std::string("version: 1\nstate: { redis: { url: redis://cache } }\n") +
                       kRoutesAndKey);
  EXPECT_EQ(plain->state.redis_host, "cache");
  EXPECT_EQ(plain->state.redis_port, 6379);
  EXPECT_EQ(plain->state.key_prefix, "sluice:");
}

TEST(ConfigLoadTest, LimitsAndStateErrors) {
  struct Case {
    const char* section;
    const char* message;
  };
  const Case cases[] = {
      {"state: { backend: memcached }\n",
       "test.yaml:2:19: state.backend: expected local or redis, got \"memcached\""},
      {"state: { backend: redis }\n",
       "test.yaml:2:19: state.backend: backend redis needs a redis: { url: ... } section"},
      {"state: { redis: { url: \"http://secret@x\" } }\n",
       "test.yaml:2:24: state.redis.url: expected redis://[:password@]host[:port][/db] (value not "
       "shown)"},
      {"state: { redis: { url: redis://x, timeout_ms: 5000 } }\n",
       "test.yaml:2:47: state.redis.timeout_ms: must be between 1 and 1000 (got 5000)"},
      {"state: { redis: { url: redis://x, on_error: ignore } }\n",
       "test.yaml:2:45: state.redis.on_error: expected fail_open or fail_closed, got \"ignore\""},
      {"limits: { keys: { nobody: { rpm: 1 } } }\n",
       "test.yaml:2:19: limits.keys.nobody: no key named \"nobody\" in this config"},
      {"limits: { groups: { ops: { rpm: 1 } } }\n",
       "test.yaml:2:21: limits.groups.ops: no key in group \"ops\" in this config"},
      {"limits: { models: { chat-x: { rpm: 1 } } }\n",
       "test.yaml:2:21: limits.models.chat-x: no route alias \"chat-x\" in this config"},
      {"limits: { providers: { openai: { rpm: 1 } } }\n",
       "test.yaml:2:24: limits.providers.openai: no provider \"openai\" in this config"},
      {"limits: { key: { concurrency: 3 } }\n",
       "test.yaml:2:18: limits.key.concurrency: unknown field (expected one of: rpm, tpm)"},
      {"limits: { key: { rpm: 0 } }\n",
       "test.yaml:2:23: limits.key.rpm: must be between 1 and 1000000000 (got 0)"},
      {"limits: { groups: { research: {} } }\n",
       "test.yaml:2:31: limits.groups.research: set at least one of rpm, tpm, concurrency"},
      {"limits: { burst: 3 }\n",
       "test.yaml:2:11: limits.burst: unknown field (expected one of: key, keys, groups, models, "
       "providers, instance, lease_ttl_ms)"},
  };
  for (const Case& c : cases) {
    auto result = load(std::string("version: 1\n") + c.section + kRoutesAndKey);
    ASSERT_FALSE(result) << c.section;
    EXPECT_EQ(result.error().message(), c.message) << c.section;
    EXPECT_EQ(result.error().message().find("secret"), std::string::npos) << "secret echoed";
  }
}

}  // namespace
}  // namespace sluice::config
