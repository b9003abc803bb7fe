//===- SwizzledTileTest.cpp - swizzled shared-memory addresses -----------===//
//
// The element offsets the lowering computes for a #tilegpu.swizzled_shared
// tile must be a bijection onto the tile's elements, or two elements would
// share a place. The offsets are emitted as arith ops on constants and folded,
// and compared with the same formula on integers.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/bit.h"

#include <gtest/gtest.h>

#include <map>
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
    // The lowering also takes offsets of constant coordinates from the
    // formula on integers: both must agree.
    for (int64_t row = 0; row < tile.rows; ++row)
      for (int64_t col = 0; col < tile.cols; ++col)
        EXPECT_EQ(tile.offset(row, col), values[row * tile.cols + col])
            << "row " << row << " col " << col;
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

  /// The offset of every element is the XOR of the offsets of its
  /// coordinates' bits (the lowering adds the offsets of register bits that
  /// share no bit with the thread's as constants).
  void expectLinearOverXor(tilec::tilegpu::SharedEncodingInterface encoding,
                           std::vector<int64_t> shape,
                           unsigned elementBytes = 2) {
    SwizzledTile tile = SwizzledTile::get(encoding, shape, elementBytes);
    for (int64_t row = 0; row < tile.rows; ++row)
      for (int64_t col = 0; col < tile.cols; ++col) {
        int64_t expected = 0;
        for (int64_t bit = 1; bit < tile.rows; bit <<= 1)
          if (row & bit)
            expected ^= tile.offset(bit, 0);
        for (int64_t bit = 1; bit < tile.cols; bit <<= 1)
          if (col & bit)
            expected ^= tile.offset(0, bit);
        ASSERT_EQ(tile.offset(row, col), expected)
            << "row " << row << " col " << col;
      }
  }

  /// The register bits getThreadDependentRegisters leaves out of the
  /// per-thread part of the offsets of `layout` in `encoding` add constants:
  /// every element's offset is the per-thread part plus that constant.
  unsigned expectConstantRegisterOffsets(
      const tilec::tilegpu::LinearLayout &layout,
      tilec::tilegpu::SharedEncodingInterface encoding, unsigned elementBytes,
      unsigned vec = 1) {
    SwizzledTile tile =
        SwizzledTile::get(encoding, layout.getShape(), elementBytes);
    auto offsetOf = [&](llvm::ArrayRef<int64_t> coords) {
      return tile.offset(coords[tile.rowDim], coords[tile.colDim]);
    };
    unsigned mask =
        tilec::lowering::getThreadDependentRegisters(layout, vec, offsetOf);
    for (unsigned w = 0; w < layout.getNumWarps(); ++w)
      for (unsigned l = 0; l < layout.getNumLanes(); ++l)
        for (unsigned r = 0; r < layout.getNumRegisters(); r += vec) {
          int64_t perThread = offsetOf(layout.apply(r & mask, l, w));
          int64_t constant = offsetOf(layout.registerCoords(r & ~mask));
          EXPECT_EQ(offsetOf(layout.apply(r, l, w)), perThread + constant)
              << "register " << r << " lane " << l << " warp " << w;
        }
    return mask;
  }

  /// The most distinct words one bank serves in a read of one register of
  /// `layout` by every lane of a warp, through `encoding`'s offsets as the
  /// lowering emits them: 1 is free of bank conflicts.
  size_t maxWordsPerBank(const tilec::tilegpu::LinearLayout &layout,
                         tilec::tilegpu::SharedEncodingInterface encoding,
                         unsigned elementBytes) {
    std::vector<int64_t> shape(layout.getShape().begin(),
                               layout.getShape().end());
    std::vector<int64_t> table = offsets(encoding, shape, elementBytes);
    SwizzledTile tile = SwizzledTile::get(encoding, shape, elementBytes);
    size_t worst = 0;
    for (unsigned w = 0; w < layout.getNumWarps(); ++w)
      for (unsigned r = 0; r < layout.getNumRegisters(); ++r) {
        std::map<int64_t, std::set<int64_t>> wordsPerBank;
        for (unsigned l = 0; l < layout.getNumLanes(); ++l) {
          auto coords = layout.apply(r, l, w);
          int64_t word =
              table[coords[tile.rowDim] * tile.cols + coords[tile.colDim]] *
              elementBytes / 4;
          wordsPerBank[word % 32].insert(word);
        }
        for (const auto &[bank, words] : wordsPerBank)
          worst = std::max(worst, words.size());
      }
    return worst;
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

TEST_F(SwizzledTileTest, OffsetsAreLinearOverXor) {
  using tilec::tilegpu::NvmmaSharedEncodingAttr;
  auto swizzled = [&](unsigned vec, unsigned perPhase, unsigned maxPhase,
                      std::vector<unsigned> order) {
    return SwizzledSharedEncodingAttr::get(&context, vec, perPhase, maxPhase,
                                           order);
  };
  expectLinearOverXor(swizzled(8, 1, 8, {1, 0}), {32, 64});
  expectLinearOverXor(swizzled(8, 2, 4, {1, 0}), {64, 32});
  expectLinearOverXor(swizzled(8, 4, 2, {0, 1}), {16, 16});
  expectLinearOverXor(swizzled(4, 1, 8, {1, 0}), {32, 128}, 4);
  expectLinearOverXor(swizzled(1, 1, 1, {0, 1}), {8, 16});
  for (unsigned width : {32u, 64u, 128u}) {
    expectLinearOverXor(NvmmaSharedEncodingAttr::get(&context, width, {1, 0}),
                        {32, width * 2});
    expectLinearOverXor(NvmmaSharedEncodingAttr::get(&context, width, {0, 1}),
                        {width, 16});
  }
  expectLinearOverXor(NvmmaSharedEncodingAttr::get(&context, 128, {1, 0}),
                      {64, 64}, 4);
}

TEST_F(SwizzledTileTest, ThreadIndependentRegistersAddConstants) {
  using namespace tilec::tilegpu;
  auto swizzled = [&](unsigned vec, unsigned perPhase, unsigned maxPhase,
                      std::vector<unsigned> order) {
    return SwizzledSharedEncodingAttr::get(&context, vec, perPhase, maxPhase,
                                           order);
  };
  // A blocked f32 tile, 16-byte vectors: its rows 16 apart are 16 rows of
  // the 8-row swizzle pattern apart, constants; the 4 registers of a
  // vector are one group.
  LinearLayout rows =
      BlockedEncodingAttr::get(&context, {1, 4}, {4, 8}, {4, 1}, {1, 0})
          .toLinearLayout({64, 32});
  EXPECT_EQ(expectConstantRegisterOffsets(rows, swizzled(4, 1, 8, {1, 0}), 4,
                                          /*vec=*/4),
            0u);
  // The transposing copy into wgmma's K-major tile, one element each.
  LinearLayout transposing =
      BlockedEncodingAttr::get(&context, {1, 1}, {4, 8}, {1, 4}, {1, 0})
          .toLinearLayout({32, 64});
  expectConstantRegisterOffsets(
      transposing, NvmmaSharedEncodingAttr::get(&context, 128, {0, 1}), 4);
  // f16 rows of two 128-byte swizzle blocks.
  expectConstantRegisterOffsets(
      BlockedEncodingAttr::get(&context, {1, 8}, {8, 4}, {4, 1}, {1, 0})
          .toLinearLayout({64, 128}),
      NvmmaSharedEncodingAttr::get(&context, 128, {1, 0}), 2, /*vec=*/8);
  // tf32 fragments, both operands in both orders, two swizzles.
  auto mma = MmaEncodingAttr::get(&context, 2, {2, 2}, {16, 8});
  LinearLayout a = DotOperandEncodingAttr::get(&context, 0, mma, 1)
                       .toLinearLayout({128, 32});
  LinearLayout b = DotOperandEncodingAttr::get(&context, 1, mma, 1)
                       .toLinearLayout({32, 128});
  for (auto encoding : {swizzled(4, 1, 8, {1, 0}), swizzled(4, 1, 8, {0, 1}),
                        swizzled(8, 1, 4, {1, 0}), swizzled(8, 1, 4, {0, 1})}) {
    expectConstantRegisterOffsets(a, encoding, 4);
    expectConstantRegisterOffsets(b, encoding, 4);
  }
  // wgmma's register A (B^T of a transposed tf32 dot) from an N-contiguous
  // tile in 32-byte chunks: only the fragment's second 8 columns (n + 8)
  // move the swizzle; K steps and row halves are constants.
  auto transposed = MmaEncodingAttr::get(&context, 3, {8, 1}, {16, 256, 8},
                                         /*transposed=*/true);
  LinearLayout bt = DotOperandEncodingAttr::get(&context, 1, transposed, 1)
                        .toLinearLayout({32, 128});
  EXPECT_EQ(llvm::popcount(expectConstantRegisterOffsets(
                bt, swizzled(8, 1, 4, {1, 0}), 4)),
            1);
  expectConstantRegisterOffsets(bt, swizzled(4, 1, 8, {1, 0}), 4);
}

TEST_F(SwizzledTileTest, Tf32FragmentsReadTheirTilesWithoutBankConflicts) {
  using namespace tilec::tilegpu;
  Type f32 = Float32Type::get(&context);
  auto ldmatrixStyle = [&](std::vector<unsigned> order) {
    return SwizzledSharedEncodingAttr::get(&context, 4, 1, 8, order);
  };
  // Each case: the operand's tile, its order, and whether a warp's fragment
  // read covers 4 rows by 8 words (M or N contiguous), which ldmatrix's
  // swizzle serves with 2-way conflicts, or 8 rows by 4 words (K
  // contiguous), which it serves without.
  struct Case {
    DotOperandEncodingAttr operand;
    std::vector<int64_t> shape;
    std::vector<unsigned> order;
    bool acrossRows;
  };
  // B^T as wgmma's register A (transposed tf32 dot: row-major B), and
  // mma.sync's m16n8k8 tf32 operands.
  auto wgmma = MmaEncodingAttr::get(&context, 3, {8, 1}, {16, 256, 8},
                                    /*transposed=*/true);
  auto mma = MmaEncodingAttr::get(&context, 2, {4, 2}, {16, 8});
  auto wgmmaB = DotOperandEncodingAttr::get(&context, 1, wgmma, 1);
  auto mmaA = DotOperandEncodingAttr::get(&context, 0, mma, 1);
  auto mmaB = DotOperandEncodingAttr::get(&context, 1, mma, 1);
  const Case cases[] = {
      {wgmmaB, {16, 128}, {1, 0}, true}, {mmaB, {16, 64}, {1, 0}, true},
      {mmaA, {64, 32}, {0, 1}, true},    {mmaB, {16, 32}, {1, 0}, true},
      {mmaA, {64, 32}, {1, 0}, false},   {mmaB, {32, 64}, {0, 1}, false},
  };
  for (const Case &c : cases) {
    auto type = RankedTensorType::get(c.shape, f32, c.operand);
    SwizzledSharedEncodingAttr encoding =
        getOperandSharedEncoding(type, c.order, c.operand);
    LinearLayout layout = c.operand.toLinearLayout(c.shape);
    std::string name;
    llvm::raw_string_ostream(name)
        << type << " order " << c.order[0] << c.order[1];
    EXPECT_EQ(maxWordsPerBank(layout, encoding, 4), 1u) << name;
    if (c.acrossRows) {
      EXPECT_EQ(encoding,
                SwizzledSharedEncodingAttr::get(&context, 8, 1, 4, c.order))
          << name;
      EXPECT_EQ(maxWordsPerBank(layout, ldmatrixStyle(c.order), 4), 2u) << name;
    } else {
      EXPECT_EQ(encoding, ldmatrixStyle(c.order)) << name;
    }
  }
  // Rows of 16 words keep the default (the 4 phases of 32-byte chunks do
  // not fit them).
  auto narrow = RankedTensorType::get({32, 16}, f32, mmaB);
  EXPECT_EQ(getOperandSharedEncoding(narrow, {1, 0}, mmaB).getVec(), 4u);
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
