//===- StatusTest.cpp - errors, their context and their kind -------------===//

#include "tilec/contract/Status.h"

#include <gtest/gtest.h>

using namespace tilec;

namespace {

Result<int> parseVoxel(bool duplicate) {
  if (duplicate)
    return Status::error(ErrorKind::InvalidInput, "voxel 3 is also voxel 1");
  return 7;
}

TEST(StatusTest, AnErrorKeepsItsKindThroughContext) {
  Status status = parseVoxel(true).status().withContext("build maps");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.kind(), ErrorKind::InvalidInput);
  EXPECT_EQ(status.message(), "build maps: voxel 3 is also voxel 1");
  EXPECT_EQ(status.withContext("conv").kind(), ErrorKind::InvalidInput);
}

TEST(StatusTest, AnErrorWithoutAKindIsUnspecified) {
  Status status = Status::error("ptxas failed").withContext("compiling");
  EXPECT_EQ(status.kind(), ErrorKind::Unspecified);
  EXPECT_EQ(status.message(), "compiling: ptxas failed");
}

TEST(StatusTest, SuccessHasNoKindAndContextLeavesItAlone) {
  Status status = Status::success().withContext("ignored");
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.kind(), ErrorKind::Unspecified);
  EXPECT_TRUE(status.message().empty());
  Result<int> value = parseVoxel(false);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
}

} // namespace
