//===- LinearLayoutTest.cpp - layouts against their closed forms ----------===//
//
// Each layout's (register, lane, warp) -> coordinates map is checked element
// by element against the formulas it stands for: Triton's blocked layout and
// the PTX mma.sync fragment tables (shared/notes/layouts.md).
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <array>
#include <set>

namespace {

using tilec::tilegpu::LinearLayout;

class LinearLayoutTest : public ::testing::Test {
protected:
  LinearLayoutTest() { context.loadDialect<tilec::tilegpu::TileGPUDialect>(); }
  mlir::MLIRContext context;
};

/// Every element of `shape` is held by some (register, lane, warp).
void expectCovers(const LinearLayout &layout) {
  std::set<std::vector<int64_t>> seen;
  for (unsigned w = 0; w < layout.getNumWarps(); ++w)
    for (unsigned l = 0; l < layout.getNumLanes(); ++l)
      for (unsigned r = 0; r < layout.getNumRegisters(); ++r) {
        auto c = layout.apply(r, l, w);
        seen.insert(std::vector<int64_t>(c.begin(), c.end()));
      }
  int64_t total = 1;
  for (int64_t size : layout.getShape())
    total *= size;
  EXPECT_EQ(static_cast<int64_t>(seen.size()), total);
}

/// Every (register, lane, warp) of `layout` holds the element `expected`
/// gives for it, {row, column}, with g = lane / 4 and t = lane % 4 (the
/// PTX fragments' group and thread in group).
template <typename Expected>
void expectFragments(const LinearLayout &layout, Expected expected) {
  for (unsigned w = 0; w < layout.getNumWarps(); ++w)
    for (unsigned l = 0; l < layout.getNumLanes(); ++l)
      for (unsigned r = 0; r < layout.getNumRegisters(); ++r) {
        std::array<int64_t, 2> want = expected(r, l / 4, l % 4, w);
        auto coords = layout.apply(r, l, w);
        ASSERT_EQ(coords[0], want[0]) << "r=" << r << " l=" << l << " w=" << w;
        ASSERT_EQ(coords[1], want[1]) << "r=" << r << " l=" << l << " w=" << w;
      }
}

TEST_F(LinearLayoutTest, BlockedMatchesTritonFormula) {
  // f16 128x64 row-major, 4 warps: the coalesced layout from layouts.md.
  auto blocked = tilec::tilegpu::BlockedEncodingAttr::get(
      &context, {1, 8}, {4, 8}, {4, 1}, {1, 0});
  LinearLayout layout = blocked.toLinearLayout({128, 64});
  EXPECT_EQ(layout.getNumRegisters(), 64u); // 8 per access, 8 repeats.
  EXPECT_TRUE(layout.hasDisjointBases());
  const int64_t S[2] = {1, 8}, T[2] = {4, 8}, W[2] = {4, 1};
  for (unsigned w = 0; w < 4; ++w)
    for (unsigned l = 0; l < 32; ++l)
      for (unsigned r = 0; r < 64; ++r) {
        // registers: s along dim 1 (3 bits), then repeats along dim 0.
        int64_t s1 = r % 8, k0 = r / 8;
        int64_t l1 = l % T[1], l0 = l / T[1];
        int64_t c0 = (S[0] * (l0 + T[0] * (w + W[0] * k0))) % 128;
        int64_t c1 = (s1 + S[1] * (l1 + T[1] * 0)) % 64;
        auto coords = layout.apply(r, l, w);
        ASSERT_EQ(coords[0], c0) << "r=" << r << " l=" << l << " w=" << w;
        ASSERT_EQ(coords[1], c1) << "r=" << r << " l=" << l << " w=" << w;
      }
  expectCovers(layout);
}

TEST_F(LinearLayoutTest, SmallShapesBroadcast) {
  // 32 lanes along a dimension of 8: lanes 8..31 hold copies.
  auto blocked = tilec::tilegpu::BlockedEncodingAttr::get(&context, {1}, {32},
                                                          {4}, {0});
  LinearLayout layout = blocked.toLinearLayout({8});
  EXPECT_EQ(layout.getNumRegisters(), 1u);
  EXPECT_EQ(layout.apply(0, 9, 3)[0], 1);
  EXPECT_EQ(layout.getRedundantLaneMask(), 0b11000u);
  EXPECT_EQ(layout.getRedundantWarpMask(), 0b11u);
  expectCovers(layout);
}

TEST_F(LinearLayoutTest, SliceDropsTheDimension) {
  auto blocked = tilec::tilegpu::BlockedEncodingAttr::get(
      &context, {1, 4}, {8, 4}, {2, 2}, {1, 0});
  auto slice = tilec::tilegpu::SliceEncodingAttr::get(&context, 1, blocked);
  LinearLayout layout = slice.toLinearLayout({64});
  // Rows of the parent: lanes 0..3 (along dim 1) hold copies.
  EXPECT_EQ(layout.getRedundantLaneMask(), 0b00011u);
  for (unsigned l = 0; l < 32; ++l)
    EXPECT_EQ(layout.apply(0, l, 0)[0], l / 4);
  expectCovers(layout);
}

TEST_F(LinearLayoutTest, MmaV2MatchesPtxAccumulatorFragment) {
  auto mma = tilec::tilegpu::MmaEncodingAttr::get(&context, 2, {2, 2}, {16, 8});
  LinearLayout layout = mma.toLinearLayout({32, 16});
  ASSERT_EQ(layout.getNumRegisters(), 4u);
  // c0,c1 = (g, 2t + {0,1}); c2,c3 = (g + 8, ...); warp id fastest along N.
  expectFragments(layout, [](int64_t r, int64_t g, int64_t t, int64_t w) {
    return std::array<int64_t, 2>{g + 8 * (r / 2) + 16 * (w / 2),
                                  2 * t + (r % 2) + 8 * (w % 2)};
  });
  expectCovers(layout);
}

TEST_F(LinearLayoutTest, DotOperandsMatchPtxM16N8K16Fragments) {
  auto mma = tilec::tilegpu::MmaEncodingAttr::get(&context, 2, {1, 1}, {16, 8});
  auto a = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 0, mma, 2)
               .toLinearLayout({16, 16});
  auto b = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 1, mma, 2)
               .toLinearLayout({16, 8});
  ASSERT_EQ(a.getNumRegisters(), 8u);
  ASSERT_EQ(b.getNumRegisters(), 4u);
  for (unsigned l = 0; l < 32; ++l) {
    int64_t g = l / 4, t = l % 4;
    for (unsigned r = 0; r < 8; ++r) {
      // a0,a1=(g, 2t+{0,1}); a2,a3=(g+8, ..); a4,a5=(g, 2t+8+..); a6,a7.
      auto coords = a.apply(r, l, 0);
      EXPECT_EQ(coords[0], g + 8 * ((r / 2) % 2));
      EXPECT_EQ(coords[1], 2 * t + (r % 2) + 8 * (r / 4));
    }
    for (unsigned r = 0; r < 4; ++r) {
      // b0,b1=(k=2t+{0,1}, n=g); b2,b3=(k=2t+8+{0,1}, n=g).
      auto coords = b.apply(r, l, 0);
      EXPECT_EQ(coords[0], 2 * t + (r % 2) + 8 * (r / 2));
      EXPECT_EQ(coords[1], g);
    }
  }
}

TEST_F(LinearLayoutTest, DotOperandsMatchPtxM16N8K8Tf32Fragments) {
  auto mma = tilec::tilegpu::MmaEncodingAttr::get(&context, 2, {1, 1}, {16, 8});
  auto a = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 0, mma, 1)
               .toLinearLayout({16, 8});
  auto b = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 1, mma, 1)
               .toLinearLayout({8, 8});
  ASSERT_EQ(a.getNumRegisters(), 4u);
  ASSERT_EQ(b.getNumRegisters(), 2u);
  for (unsigned l = 0; l < 32; ++l) {
    int64_t g = l / 4, t = l % 4;
    // a0 = (g, t), a1 = (g + 8, t), a2 = (g, t + 4), a3 = (g + 8, t + 4).
    const int64_t aRow[4] = {g, g + 8, g, g + 8};
    const int64_t aCol[4] = {t, t, t + 4, t + 4};
    for (unsigned r = 0; r < 4; ++r) {
      auto coords = a.apply(r, l, 0);
      EXPECT_EQ(coords[0], aRow[r]) << "a" << r << " lane " << l;
      EXPECT_EQ(coords[1], aCol[r]) << "a" << r << " lane " << l;
    }
    // b0 = (k = t, n = g), b1 = (k = t + 4, n = g).
    const int64_t bK[2] = {t, t + 4};
    for (unsigned r = 0; r < 2; ++r) {
      auto coords = b.apply(r, l, 0);
      EXPECT_EQ(coords[0], bK[r]) << "b" << r << " lane " << l;
      EXPECT_EQ(coords[1], g) << "b" << r << " lane " << l;
    }
  }
  expectCovers(a);
  expectCovers(b);
}

TEST_F(LinearLayoutTest, Tf32DotOperandsRepeatWholeFragments) {
  // 2x2 warps, A 64x32 and B 32x32: K repeats (every 8) come before the
  // repeats along M (every 16 * wm = 32) or N (every 8 * wn = 16); warps are
  // ordered N fastest, and warps along the other operand's dim hold copies.
  auto mma = tilec::tilegpu::MmaEncodingAttr::get(&context, 2, {2, 2}, {16, 8});
  auto a = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 0, mma, 1)
               .toLinearLayout({64, 32});
  auto b = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 1, mma, 1)
               .toLinearLayout({32, 32});
  ASSERT_EQ(a.getNumRegisters(), 4u * 4 * 2);
  ASSERT_EQ(b.getNumRegisters(), 2u * 4 * 2);
  for (unsigned w = 0; w < 4; ++w)
    for (unsigned l = 0; l < 32; ++l) {
      int64_t g = l / 4, t = l % 4, wm = w / 2, wn = w % 2;
      for (unsigned r = 0; r < a.getNumRegisters(); ++r) {
        unsigned frag = r % 4, kRep = (r / 4) % 4, mRep = r / 16;
        auto coords = a.apply(r, l, w);
        EXPECT_EQ(coords[0], g + 8 * (frag % 2) + 16 * wm + 32 * mRep);
        EXPECT_EQ(coords[1], t + 4 * (frag / 2) + 8 * kRep);
      }
      for (unsigned r = 0; r < b.getNumRegisters(); ++r) {
        unsigned frag = r % 2, kRep = (r / 2) % 4, nRep = r / 8;
        auto coords = b.apply(r, l, w);
        EXPECT_EQ(coords[0], t + 4 * frag + 8 * kRep);
        EXPECT_EQ(coords[1], g + 8 * wn + 16 * nRep);
      }
    }
  expectCovers(a);
  expectCovers(b);
}

TEST_F(LinearLayoutTest, FmaDotOperandHoldsWholeK) {
  auto parent = tilec::tilegpu::BlockedEncodingAttr::get(
      &context, {1, 1}, {2, 16}, {4, 1}, {1, 0});
  LinearLayout c = parent.toLinearLayout({32, 16});
  LinearLayout a = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 0,
                                                               parent, 0)
                       .toLinearLayout({32, 8});
  // For every accumulator element a thread holds, it holds the whole row of a.
  for (unsigned w = 0; w < 4; ++w)
    for (unsigned l = 0; l < 32; ++l) {
      std::set<std::pair<int64_t, int64_t>> held;
      for (unsigned r = 0; r < a.getNumRegisters(); ++r) {
        auto coords = a.apply(r, l, w);
        held.insert({coords[0], coords[1]});
      }
      for (unsigned r = 0; r < c.getNumRegisters(); ++r) {
        int64_t row = c.apply(r, l, w)[0];
        for (int64_t k = 0; k < 8; ++k)
          EXPECT_TRUE(held.count({row, k})) << "row " << row << " k " << k;
      }
    }
}

TEST_F(LinearLayoutTest, TransposedMmaV3IsTheTransposeOfDT) {
  // D (256x128) computed as D^T: two warpgroups along D^T's rows (D's
  // columns), m64n256 instructions along D's rows. d_i of D^T: row =
  // 16 (w mod 4) + 64 (w / 4) + g + 8 ((i >> 1) & 1), col = 8 (i >> 2) + 2t +
  // (i & 1) (CUTLASS CLayout_64xN); D holds it at (col, row).
  auto mma = tilec::tilegpu::MmaEncodingAttr::get(&context, 3, {8, 1},
                                                  {16, 256, 8}, true);
  LinearLayout layout = mma.toLinearLayout({256, 128});
  ASSERT_EQ(layout.getNumRegisters(), 128u);
  expectFragments(layout, [](int64_t i, int64_t g, int64_t t, int64_t w) {
    int64_t row = 16 * (w % 4) + 64 * (w / 4) + g + 8 * ((i >> 1) & 1);
    int64_t col = 8 * (i >> 2) + 2 * t + (i & 1);
    return std::array<int64_t, 2>{col, row};
  });
  expectCovers(layout);
}

TEST_F(LinearLayoutTest, WarpGroupRegisterAMatchesTf32Fragment) {
  // B (32x128, K x N) of a transposed dot on one warpgroup: B^T's m64n?k8
  // A fragments, a0 = (g, t), a1 = (g + 8, t), a2 = (g, t + 4),
  // a3 = (g + 8, t + 4) in B^T's (n, k), warp w at rows 16 w; registers
  // 4 (m * kSteps + k) + j hold fragment j of instruction (m, k), m the
  // 64-row repeat along N, k the 8-wide step along K.
  auto mma = tilec::tilegpu::MmaEncodingAttr::get(&context, 3, {4, 1},
                                                  {16, 128, 8}, true);
  auto b = tilec::tilegpu::DotOperandEncodingAttr::get(&context, 1, mma, 1)
               .toLinearLayout({32, 128});
  const unsigned kSteps = 4;
  ASSERT_EQ(b.getNumRegisters(), 4u * kSteps * 2);
  expectFragments(b, [&](int64_t r, int64_t g, int64_t t, int64_t w) {
    int64_t j = r % 4, k = (r / 4) % kSteps, m = r / (4 * kSteps);
    return std::array<int64_t, 2>{t + 4 * (j / 2) + 8 * k,
                                  g + 8 * (j % 2) + 16 * w + 64 * m};
  });
  expectCovers(b);
  // Warpgroups along the instruction's N hold copies.
  auto split = tilec::tilegpu::MmaEncodingAttr::get(&context, 3, {4, 2},
                                                    {16, 64, 8}, true);
  auto copies =
      tilec::tilegpu::DotOperandEncodingAttr::get(&context, 1, split, 1)
          .toLinearLayout({8, 64});
  EXPECT_EQ(copies.getRedundantWarpMask(), 0b100u);
  expectCovers(copies);
}

} // namespace
