#include "codec/request_id.h"

#include <string>

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

TEST(RequestId, KeepsShortVisibleIdsOnly) {
  EXPECT_TRUE(acceptable_request_id("deploy-42/a.b_c:7"));
  EXPECT_TRUE(acceptable_request_id(std::string(128, 'x')));
  EXPECT_FALSE(acceptable_request_id(std::string(129, 'x')));
  EXPECT_FALSE(acceptable_request_id(""));
  EXPECT_FALSE(acceptable_request_id("two words"));
  EXPECT_FALSE(acceptable_request_id("quote\"d"));
  EXPECT_FALSE(acceptable_request_id("back\\slash"));
  EXPECT_FALSE(acceptable_request_id("tab\there"));
  EXPECT_FALSE(acceptable_request_id("caf\xc3\xa9"));  // visible ASCII only
}

}  // namespace
}  // namespace sluice::codec
