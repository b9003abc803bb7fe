//===- LinearLayout.h - (register, lane, warp) -> coordinates ---*- C++ -*-===//
//
// A distributed layout as a linear map over GF(2): every bit of the register
// index, of the lane id and of the warp id contributes one basis vector of
// tensor coordinates, and an element's coordinates are the XOR of the bases of
// its set bits. A zero basis means the bit does not move the element
// (broadcast: several threads hold copies). Shapes are powers of two.
//
// For the layouts tilec builds, nonzero bases are distinct powers of two along
// one dimension each, so XOR equals addition; lowering relies on that to split
// coordinates into a per-thread part computed once and a per-register constant.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_DIALECT_TILEGPU_IR_LINEARLAYOUT_H
#define TILEC_DIALECT_TILEGPU_IR_LINEARLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <string>

namespace tilec::tilegpu {

class LinearLayout {
public:
  using Basis = llvm::SmallVector<int64_t, 4>;

  LinearLayout() = default;
  LinearLayout(llvm::ArrayRef<int64_t> shape,
               llvm::SmallVector<Basis> registerBases,
               llvm::SmallVector<Basis> laneBases,
               llvm::SmallVector<Basis> warpBases);

  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  unsigned getRank() const { return shape.size(); }
  llvm::ArrayRef<Basis> getRegisterBases() const { return registerBases; }
  llvm::ArrayRef<Basis> getLaneBases() const { return laneBases; }
  llvm::ArrayRef<Basis> getWarpBases() const { return warpBases; }
  unsigned getNumRegisters() const { return 1u << registerBases.size(); }
  unsigned getNumLanes() const { return 1u << laneBases.size(); }
  unsigned getNumWarps() const { return 1u << warpBases.size(); }

  /// Coordinates of register `reg` in lane `lane` of warp `warp`.
  Basis apply(unsigned reg, unsigned lane, unsigned warp) const;
  /// The register-only part of the coordinates of `reg`.
  Basis registerCoords(unsigned reg) const;

  /// Zeroes every basis component >= the dimension size (elements wrap
  /// around: broadcast), then drops register bases that became zero.
  LinearLayout wrappedTo(llvm::ArrayRef<int64_t> newShape) const;
  /// Removes dimension `dim` (whose bases must be zero) from every basis.
  LinearLayout withoutDim(unsigned dim) const;
  /// Drops dimension `dim` from every basis whatever its value: the layout
  /// of the values left after combining everything along `dim`.
  LinearLayout projectOutDim(unsigned dim) const;
  /// Prepends register bases (they become the fastest register bits).
  LinearLayout withLeadingRegisterBases(llvm::ArrayRef<Basis> bases) const;

  /// True when the nonzero bases are distinct single-dimension powers of two,
  /// i.e. XOR of bases equals their sum.
  bool hasDisjointBases() const;
  /// The bases (by lane / warp bit index) that are zero: those bits select
  /// copies of the same elements.
  unsigned getRedundantLaneMask() const;
  unsigned getRedundantWarpMask() const;

  bool operator==(const LinearLayout &other) const;
  std::string toString() const;

private:
  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<Basis> registerBases, laneBases, warpBases;
};

/// For each register of `dst`, the register of `src` (same thread) holding
/// the element `dstToSrc(coords)`; fails when the element lives in another
/// thread, i.e. the layouts do not agree on the lane and warp bits.
llvm::FailureOr<llvm::SmallVector<unsigned>> mapRegisters(
    const LinearLayout &src, const LinearLayout &dst,
    llvm::function_ref<LinearLayout::Basis(const LinearLayout::Basis &)>
        dstToSrc);

} // namespace tilec::tilegpu

#endif // TILEC_DIALECT_TILEGPU_IR_LINEARLAYOUT_H
