#include "codec/percent.h"

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

TEST(PercentTest, EncodesAllButUnreservedAndDecodesBack) {
  EXPECT_EQ(percent_encode("team-a_1.x~"), "team-a_1.x~");
  EXPECT_EQ(percent_encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
  EXPECT_EQ(percent_decode(percent_encode("a b&c=d/é?%")), "a b&c=d/é?%");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("100%"), "100%") << "a malformed escape is kept";
}

}  // namespace
}  // namespace sluice::codec
