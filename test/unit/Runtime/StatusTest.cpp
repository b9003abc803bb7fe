//===- StatusTest.cpp - Status and Result ---------------------------------===//

#include "tilec/contract/Status.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

using tilec::ErrorKind;
using tilec::Result;
using tilec::Status;

TEST(StatusTest, SuccessAndError) {
  EXPECT_TRUE(Status().ok());
  EXPECT_TRUE(Status::success().ok());
  Status error = Status::error("cuInit failed");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.message(), "cuInit failed");
  EXPECT_EQ(error.withContext("loading matmul").message(),
            "loading matmul: cuInit failed");
  EXPECT_TRUE(Status::success().withContext("ignored").ok());
}

TEST(StatusTest, ResultHoldsAValueOrAnError) {
  Result<std::unique_ptr<int>> value(std::make_unique<int>(7));
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(**value, 7);
  std::unique_ptr<int> taken = std::move(value).value();
  EXPECT_EQ(*taken, 7);

  Result<int> error(Status::error("bad"));
  EXPECT_FALSE(error.ok());
  EXPECT_FALSE(static_cast<bool>(error));
  EXPECT_EQ(error.message(), "bad");
}

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
