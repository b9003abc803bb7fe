//===- TensorMapTest.cpp - The tensor map's rules, without a GPU ----------===//
//
// checkTiledArray2D refuses what cuTensorMapEncodeTiled would, with the
// numbers (RuntimeGpuTest encodes maps through the driver).
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/TensorMap.h"

#include <gtest/gtest.h>

namespace rt = tilec::rt;

namespace {

// 1000 x 1000 f16 in rows of 1024, boxes of 128 x 64 (128-byte rows).
rt::TiledArray2D goodArray() {
  return {rt::DevicePtr{0x7f0000000000}, rt::TmaElement::F16, 1000, 1000,
          1024 * 2, 128, 64, rt::TmaSwizzle::Bytes128};
}

std::string refusal(const rt::TiledArray2D &array) {
  tilec::Status status = rt::checkTiledArray2D(array);
  return status.ok() ? "" : status.message();
}

TEST(TensorMapTest, AcceptsWhatTheDriverDoes) {
  EXPECT_EQ(refusal(goodArray()), "");
  rt::TiledArray2D f32 = goodArray();
  f32.element = rt::TmaElement::F32;
  f32.rowStrideBytes = 1024 * 4;
  f32.boxCols = 32;
  EXPECT_EQ(refusal(f32), "");
  rt::TiledArray2D plain = goodArray();
  plain.swizzle = rt::TmaSwizzle::None;
  plain.boxCols = 256;
  EXPECT_EQ(refusal(plain), "");
  EXPECT_EQ(rt::tmaElementBytes(rt::TmaElement::BF16), 2);
  EXPECT_EQ(rt::tmaElementBytes(rt::TmaElement::I32), 4);
}

TEST(TensorMapTest, RefusesEachBrokenRuleWithItsNumbers) {
  rt::TiledArray2D array = goodArray();
  array.base.address += 2;
  EXPECT_EQ(refusal(array), "tensor map: base address 139637976727554 is "
                            "not a multiple of 16 bytes");
  array = goodArray();
  array.rows = 0;
  EXPECT_EQ(refusal(array), "tensor map: 0 x 1000 elements: each dimension "
                            "from 1 to 2^32");
  array = goodArray();
  array.rowStrideBytes = 1111 * 2; // the odd shapes' A: 2-byte aligned rows
  EXPECT_EQ(refusal(array),
            "tensor map: row stride of 2222 bytes is not a multiple of 16");
  array = goodArray();
  array.rowStrideBytes = 992 * 2;
  EXPECT_EQ(refusal(array), "tensor map: row stride of 1984 bytes: at least "
                            "a row (2000 bytes) and below 2^40");
  array = goodArray();
  array.boxRows = 512;
  EXPECT_EQ(refusal(array),
            "tensor map: box of 512 x 64: each side from 1 to 256");
  array = goodArray();
  array.boxCols = 4;
  EXPECT_EQ(refusal(array),
            "tensor map: a box row of 8 bytes is not a multiple of 16");
  array = goodArray();
  array.boxCols = 128;
  EXPECT_EQ(refusal(array), "tensor map: a box row of 256 bytes exceeds the "
                            "128-byte swizzle");
  array.swizzle = rt::TmaSwizzle::Bytes64;
  array.boxCols = 64;
  EXPECT_EQ(refusal(array), "tensor map: a box row of 128 bytes exceeds the "
                            "64-byte swizzle");
}

} // namespace
