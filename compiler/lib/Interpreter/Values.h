//===- Values.h - the interpreter's tensors and element types --*- C++ -*-===//
//
// A value of a running program: a scalar or a tensor of integers (held
// sign-extended from their width, i1 true as -1), pointers (the
// interpreter's addresses) or floats (held as doubles already rounded to
// their format). The element formats' conversions live here too.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_LIB_INTERPRETER_VALUES_H
#define TILEC_LIB_INTERPRETER_VALUES_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tilec::interp {

enum class ElementKind { Int, Float, Pointer };
enum class FloatFormat { F16, BF16, F32, F64 };

struct ElementType {
  ElementKind kind = ElementKind::Int;
  /// Bits of an integer or a float; 64 for a pointer.
  unsigned width = 32;
  FloatFormat format = FloatFormat::F32;
  /// For a pointer: the pointee's element type's bytes in memory (an i1 is a
  /// byte).
  unsigned pointeeBytes = 0;

  bool isInt() const { return kind == ElementKind::Int; }
  bool isFloat() const { return kind == ElementKind::Float; }
  /// Bytes of one element in memory.
  unsigned bytes() const { return width == 1 ? 1 : width / 8; }
};

/// The element type of a scalar or tensor type, or nothing for a type the
/// interpreter does not hold (vectors, memrefs, ...).
std::optional<ElementType> elementTypeOf(mlir::Type type);
/// The element type of a tile.ptr's pointee (or of a tensor of them).
std::optional<ElementType> pointeeTypeOf(mlir::Type pointerType);

struct Tensor {
  /// Empty for a scalar.
  std::vector<int64_t> shape;
  ElementType type;
  /// Int and Pointer elements.
  std::vector<int64_t> ints;
  /// Float elements.
  std::vector<double> floats;

  Tensor() = default;
  Tensor(std::vector<int64_t> shape, ElementType type);
  size_t size() const { return type.isFloat() ? floats.size() : ints.size(); }
  bool isScalar() const { return shape.empty(); }
};
using TensorRef = std::shared_ptr<const Tensor>;

/// Number of elements of `shape`.
size_t elementCount(const std::vector<int64_t> &shape);

/// `value` wrapped to `width` bits and sign-extended back (how every
/// integer is held).
int64_t wrapToWidth(int64_t value, unsigned width);
/// The same bits, zero-extended: the value an unsigned op reads.
uint64_t unsignedOf(int64_t value, unsigned width);

/// `value` rounded to `format` once (to nearest even; overflow to
/// infinity; a NaN keeps its payload's top bits).
double roundToFormat(double value, FloatFormat format);
/// `value` (an f32) with its mantissa cut to tf32's 10 bits, as sm_90a's
/// wgmma reads an f32 operand (the low 13 bits dropped; mma.sync's
/// cvt.rna rounds instead: the error is at most twice as large here).
double truncateToTF32(double value);
/// llvm.maximum and llvm.minimum (PTX max.NaN, min.NaN), what arith's
/// maximumf/minimumf and the reductions' max/min lower to: NaN wins, and
/// -0 orders below +0.
double maximumOf(double a, double b);
double minimumOf(double a, double b);
/// The bits of `value` in `format`, and back.
uint64_t floatBits(double value, FloatFormat format);
double floatFromBits(uint64_t bits, FloatFormat format);

} // namespace tilec::interp

#endif // TILEC_LIB_INTERPRETER_VALUES_H
