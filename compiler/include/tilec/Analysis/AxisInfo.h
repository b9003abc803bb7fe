//===- AxisInfo.h - contiguity, divisibility, constancy ---------*- C++ -*-===//
//
// Per-dimension facts about integer and pointer values, Triton's AxisInfo:
// what the coalescing pass needs to pick a vector width and what the LLVM
// lowering needs to emit vector loads and stores.
//
// For a value of shape S (a scalar counts as shape [1]) and a dimension d, with
// "groups" the aligned runs of indices [g*n, g*n + n) along d (all other
// coordinates fixed):
// - contiguity[d] = C: in every group of C, element j is the group's first
//   element + j (pointers: + j elements of the pointee type);
// - constancy[d] = K: in every group of K all elements are equal;
// - divisibility[d] = D: the first element of every group of C is a multiple of
//   D. Integers count in units of 1; pointers count in BYTES (their address),
//   like Triton and like the `tile.divisibility` argument attribute.
// All three are powers of two; C and K divide the dimension's size (its largest
// power-of-two divisor bounds them). When C[d] == 1 the divisibility holds for
// every element of the tensor. A dense splat or scalar constant also carries
// constantValue.
//
// Like Triton, the analysis assumes that index arithmetic does not overflow
// (a run x, x+1, ... stays a run) and analyses signed division and remainder
// (divsi, remsi) as if their operands were non-negative: offsets computed with
// them are indices. Divisibility facts hold under wrap-around.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_ANALYSIS_AXISINFO_H
#define TILEC_ANALYSIS_AXISINFO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

namespace tilec {

struct AxisInfo {
  /// The largest divisibility the analysis claims (what a zero gets).
  static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

  llvm::SmallVector<int64_t> contiguity, divisibility, constancy;
  std::optional<int64_t> constantValue;

  /// No knowledge: runs of 1, divisibility 1.
  static AxisInfo getPessimistic(unsigned rank);

  unsigned getRank() const { return contiguity.size(); }
  bool operator==(const AxisInfo &other) const;
  bool operator!=(const AxisInfo &other) const { return !(*this == other); }

  /// `contiguity = [..], divisibility = [..], constancy = [..],
  /// constant_value = <none>`, the format of Triton's test-print-alignment.
  void print(llvm::raw_ostream &os) const;
};

/// Axis information for every integer, index, float and pointer value (scalars
/// and tensors) in the functions of a module, computed once at construction.
/// `scf.for` carried values are joined over iterations until a fixed point;
/// `scf.if` results join both branches; values of other region-holding ops and
/// of memory ops are unknown (pessimistic). Function arguments take
/// `tile.divisibility`.
class ModuleAxisInfoAnalysis {
public:
  explicit ModuleAxisInfoAnalysis(mlir::ModuleOp module);

  /// Null when `value` was not analysed (not in a function of the module, or
  /// of a type the analysis ignores).
  const AxisInfo *getAxisInfo(mlir::Value value) const;

  /// Max elements per vector access along `dim` for loads/stores through `ptr`
  /// (a tensor of !tile.ptr): min(contiguity[dim], alignment in elements from
  /// divisibility), capped at 128 bits / element bits. 1 for scalars and
  /// unknown values.
  unsigned getPtrVectorWidth(mlir::Value ptr, unsigned dim) const;

  /// Elements along `dim` over which `mask` is uniform (its constancy), 1 if
  /// unknown; for a null or scalar mask, kUnmasked.
  unsigned getMaskVectorWidth(mlir::Value mask, unsigned dim) const;

  static constexpr unsigned kUnmasked = 1u << 30;

private:
  llvm::DenseMap<mlir::Value, AxisInfo> infos;
};

} // namespace tilec

#endif // TILEC_ANALYSIS_AXISINFO_H
