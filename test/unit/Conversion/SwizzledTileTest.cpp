//===- SwizzledTileTest.cpp - swizzled shared-memory addresses -----------===//
//
// The element offsets the lowering computes for a #tilegpu.swizzled_shared
// tile must be a bijection onto the tile's elements, or two elements would
// share a place. The offsets are emitted as arith ops on constants and folded.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <set>

namespace {

using namespace mlir;
using tilec::lowering::i32Const;
using tilec::lowering::SwizzledTile;
using tilec::tilegpu::SwizzledSharedEncodingAttr;

class SwizzledTileTest : public ::testing::Test {
protected:
  SwizzledTileTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        tilec::tilegpu::TileGPUDialect>();
  }

  /// The folded offset of every element of `shape` laid out by `encoding`.
  std::vector<int64_t> offsets(tilec::tilegpu::SharedEncodingInterface encoding,
                               std::vector<int64_t> shape,
                               unsigned elementBytes = 2) {
    SwizzledTile tile = SwizzledTile::get(encoding, shape, elementBytes);
    OpBuilder builder(&context);
    Location loc = builder.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    int64_t elements = tile.rows * tile.cols;
    auto func = func::FuncOp::create(
        builder, loc, "offsets",
        builder.getFunctionType(
            {}, SmallVector<Type>(elements, builder.getI32Type())));
    builder.setInsertionPointToEnd(func.addEntryBlock());
    SmallVector<Value> results;
    for (int64_t row = 0; row < tile.rows; ++row)
      for (int64_t col = 0; col < tile.cols; ++col)
        results.push_back(tile.offset(builder, loc, i32Const(builder, loc, row),
                                      i32Const(builder, loc, col)));
    // Returned, the offsets stay alive through folding.
    auto returned = func::ReturnOp::create(builder, loc, results);
    (void)applyPatternsGreedily(*module, RewritePatternSet(&context));
    std::vector<int64_t> values;
    for (Value value : returned.getOperands()) {
      APInt folded;
      EXPECT_TRUE(matchPattern(value, m_ConstantInt(&folded)));
      values.push_back(folded.getSExtValue());
    }
    return values;
  }

  void expectBijection(unsigned vec, unsigned perPhase, unsigned maxPhase,
                       std::vector<unsigned> order,
                       std::vector<int64_t> shape) {
    expectBijection(SwizzledSharedEncodingAttr::get(&context, vec, perPhase,
                                                    maxPhase, order),
                    shape);
  }

  void expectBijection(tilec::tilegpu::SharedEncodingInterface encoding,
                       std::vector<int64_t> shape, unsigned elementBytes = 2) {
    std::vector<int64_t> values = offsets(encoding, shape, elementBytes);
    std::string name;
    llvm::raw_string_ostream(name) << name;
    std::set<int64_t> distinct(values.begin(), values.end());
    int64_t elements = shape[0] * shape[1];
    EXPECT_EQ(static_cast<int64_t>(distinct.size()), elements) << name;
    EXPECT_EQ(*distinct.begin(), 0) << name;
    EXPECT_EQ(*distinct.rbegin(), elements - 1) << name;
  }

  MLIRContext context;
};

TEST_F(SwizzledTileTest, MmaOperandSwizzlesAreBijections) {
  expectBijection(8, 1, 8, {1, 0}, {32, 64}); // 128-B rows
  expectBijection(8, 2, 4, {1, 0}, {64, 32}); // 64-B rows
  expectBijection(8, 4, 2, {0, 1}, {16, 16}); // 32-B columns
}

TEST_F(SwizzledTileTest, OtherSwizzlesAreBijections) {
  expectBijection(4, 1, 8, {1, 0}, {64, 32});
  expectBijection(1, 1, 1, {0, 1}, {8, 16});
  expectBijection(2, 2, 4, {0, 1}, {16, 8});
}

TEST_F(SwizzledTileTest, NvmmaSwizzlesAreBijections) {
  using tilec::tilegpu::NvmmaSharedEncodingAttr;
  // One block per row, and rows of two and four swizzle-wide blocks.
  for (unsigned width : {32u, 64u, 128u}) {
    auto rowMajor = NvmmaSharedEncodingAttr::get(&context, width, {1, 0});
    expectBijection(rowMajor, {16, width / 2});
    expectBijection(rowMajor, {32, width * 2});
    expectBijection(NvmmaSharedEncodingAttr::get(&context, width, {0, 1}),
                    {width, 16});
  }
  expectBijection(NvmmaSharedEncodingAttr::get(&context, 128, {1, 0}),
                  {16, 64}, /*elementBytes=*/4);
}

TEST_F(SwizzledTileTest, NvmmaBlocksFollowWgmmaLayout) {
  // 128-byte swizzle of f16 rows of 128 elements: two blocks of 64 columns,
  // each [rows x 128 B]; chunk c of row r is stored at chunk c ^ (r % 8).
  auto encoding = tilec::tilegpu::NvmmaSharedEncodingAttr::get(&context, 128,
                                                               {1, 0});
  std::vector<int64_t> values = offsets(encoding, {16, 128});
  EXPECT_EQ(values[0 * 128 + 64], 16 * 64);               // block 1, row 0
  EXPECT_EQ(values[3 * 128 + 8], 3 * 64 + (1 ^ 3) * 8);   // chunk 1 of row 3
  EXPECT_EQ(values[9 * 128 + 64 + 17],                    // block 1, row 9
            16 * 64 + 9 * 64 + (2 ^ 1) * 8 + 1);
  // 64-byte swizzle: the phase is (r / 2) % 4.
  auto narrow = tilec::tilegpu::NvmmaSharedEncodingAttr::get(&context, 64,
                                                             {1, 0});
  values = offsets(narrow, {8, 32});
  EXPECT_EQ(values[5 * 32 + 8], 5 * 32 + (1 ^ 2) * 8);
}

TEST_F(SwizzledTileTest, FirstChunksFollowTheFormula) {
  // vec 8, perPhase 2, maxPhase 4: row 2 has phase 1, so its chunk 0 is
  // stored as chunk 1.
  auto encoding = SwizzledSharedEncodingAttr::get(&context, 8, 2, 4, {1, 0});
  std::vector<int64_t> values = offsets(encoding, {8, 32});
  EXPECT_EQ(values[2 * 32 + 0], 2 * 32 + 8);
  EXPECT_EQ(values[2 * 32 + 9], 2 * 32 + 1);
  EXPECT_EQ(values[6 * 32 + 3], 6 * 32 + 3 * 8 + 3);
}

} // namespace
