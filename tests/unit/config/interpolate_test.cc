#include "config/interpolate.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace sluice::config {
namespace {

EnvLookup fake_env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    if (auto it = values.find(name); it != values.end()) {
      return it->second;
    }
    return std::nullopt;
  };
}

TEST(InterpolateTest, Expands) {
  const EnvLookup env = fake_env({{"A", "alpha"}, {"EMPTY", ""}, {"_x1", "y"}});
  struct Case {
    const char* in;
    const char* out;
  };
  for (const Case& c : {
           Case{"", ""},
           Case{"plain text", "plain text"},
           Case{"${A}", "alpha"},
           Case{"pre-${A}-post", "pre-alpha-post"},
           Case{"${A}${A}", "alphaalpha"},
           Case{"${_x1}", "y"},
           Case{"${EMPTY}", ""},
           Case{"${EMPTY:-fallback}", "fallback"},
           Case{"${UNSET:-fallback}", "fallback"},
           Case{"${UNSET:-}", ""},
           Case{"${A:-fallback}", "alpha"},
           Case{"${UNSET:-a:b-c d}", "a:b-c d"},
           Case{"$$", "$"},
           Case{"$${A}", "${A}"},
           Case{"$$$$", "$$"},
           Case{"cost: $5", "cost: $5"},
           Case{"trailing $", "trailing $"},
           Case{"$A", "$A"},
       }) {
    SCOPED_TRACE(c.in);
    auto result = interpolate(c.in, env);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(*result, c.out);
  }
}

TEST(InterpolateTest, Errors) {
  const EnvLookup env = fake_env({{"A", "alpha"}});
  struct Case {
    const char* in;
    const char* message;
  };
  for (const Case& c : {
           Case{"${UNSET}",
                "environment variable UNSET is not set (use ${UNSET:-default} to give a default)"},
           Case{"sk-${A",
                "unterminated ${ (expected ${NAME} or ${NAME:-default}; write $$ for a "
                "literal $)"},
           Case{"${}", "empty variable name in ${}"},
           Case{"${:-x}", "empty variable name in ${}"},
           Case{"${1A}",
                "invalid variable name in ${...} (names are [A-Za-z_][A-Za-z0-9_]*; "
                "write $$ for a literal $)"},
           Case{"${A-x}",
                "invalid variable name in ${...} (names are [A-Za-z_][A-Za-z0-9_]*; "
                "write $$ for a literal $)"},
           Case{"${A:x}", "invalid ${...} expression: use ${NAME} or ${NAME:-default}"},
           Case{"${A:-${B}}", "nested ${...} in a default value is not supported"},
       }) {
    SCOPED_TRACE(c.in);
    auto result = interpolate(c.in, env);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message(), c.message);
  }
}

TEST(InterpolateTest, ErrorsNeverEchoTheText) {
  const EnvLookup env = fake_env({});
  for (const char* text : {"sk-secret-${", "sk-secret-${bad name}", "sk-secret-${X:y}"}) {
    auto result = interpolate(text, env);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message().find("sk-secret"), std::string::npos);
  }
}

TEST(InterpolateTest, EnvNames) {
  EXPECT_TRUE(is_env_name("OPENAI_API_KEY"));
  EXPECT_TRUE(is_env_name("_a9"));
  EXPECT_FALSE(is_env_name(""));
  EXPECT_FALSE(is_env_name("9A"));
  EXPECT_FALSE(is_env_name("A-B"));
}

}  // namespace
}  // namespace sluice::config
