//===- RadixSizingTest.cpp - The radix sort's programs and their scratch -===//
//
// A radix pass's programs take more keys as the size bucket grows
// (radixPerProgram), so a sort of fewer keys can launch more programs than
// one of more: scratch that sorts of up to n keys share is sized by
// radixProgramsUpTo(n), which must bound every one of them.
//
//===----------------------------------------------------------------------===//

#include "MapBuild.h"

#include <gtest/gtest.h>

using namespace tilec::sparse;

namespace {

TEST(RadixSizingTest, ProgramsTakeKeysByBucket) {
  EXPECT_EQ(radixPerProgram(1), 128);
  EXPECT_EQ(radixPerProgram(1 << 16), 128);
  EXPECT_EQ(radixPerProgram((1 << 16) + 1), 256);
  EXPECT_EQ(radixPerProgram(1 << 18), 512);
  EXPECT_EQ(radixPerProgram((1 << 18) + 1), 1024);
  EXPECT_EQ(radixPerProgram(int64_t(1) << 24), 1024);
  // Every count of a bucket takes its bucket's programs.
  for (int log2 = 1; log2 < 24; ++log2)
    EXPECT_EQ(radixPerProgram((int64_t(1) << (log2 - 1)) + 1),
              radixPerProgram(int64_t(1) << log2))
        << "bucket 2^" << log2;
}

TEST(RadixSizingTest, ScratchBoundsEverySmallerSort) {
  // A bucket's first count launches fewer programs than the top of the
  // bucket below: 65,537 keys take 257 programs, 65,536 take 512.
  EXPECT_LT(radixPrograms((1 << 16) + 1), radixPrograms(1 << 16));
  int64_t most = 0;
  for (int64_t n = 1; n <= (int64_t(1) << 21); n += n < 4096 ? 1 : 97) {
    most = std::max(most, radixPrograms(n));
    ASSERT_GE(radixProgramsUpTo(n), most) << "n = " << n;
  }
  for (int log2 = 1; log2 < 30; ++log2) {
    int64_t top = int64_t(1) << log2;
    EXPECT_GE(radixProgramsUpTo(top + 1), radixPrograms(top));
    EXPECT_GE(radixProgramsUpTo(top), radixPrograms(top));
  }
}

} // namespace
