//===- KernelBuilder.h - Triton-style C++ kernel authoring ------*- C++ -*-===//
//
// An embedded builder that lets a kernel be written the way Triton's tl.* API
// reads: values are `Tensor`s (scalars or statically shaped tensors) whose
// operators broadcast implicitly, and `KernelBuilder` provides program ids,
// ranges, masked loads and stores, dot, reductions, math and loops. Every call
// appends tile/arith/math/scf ops at the builder's insertion point.
//
// Mistakes in a kernel (shapes that do not broadcast, mixed element types, an
// unknown meta-parameter) are reported as MLIR diagnostics at the kernel's
// location and yield a null `Tensor`; operations on null tensors yield null
// tensors silently, so one mistake gives one diagnostic, and `hasErrors()`
// tells the caller to discard what was built. Nothing asserts on user input.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNEL_KERNELBUILDER_H
#define TILEC_KERNEL_KERNELBUILDER_H

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <type_traits>

namespace tilec::kernel {

class KernelBuilder;

/// A value of a kernel under construction: a scalar (i32, f32, a pointer, ...)
/// or a statically shaped tensor. Cheap to copy. A default-constructed Tensor
/// is null: the result of an operation that was diagnosed as an error.
class Tensor {
public:
  Tensor() = default;
  Tensor(mlir::Value value, KernelBuilder &builder)
      : value(value), builder(&builder) {}

  mlir::Value getValue() const { return value; }
  /// The MLIR type; null for a null Tensor.
  mlir::Type getType() const;
  /// The element type of a tensor, or the type of a scalar.
  mlir::Type getElementType() const;
  /// The shape; empty for a scalar.
  llvm::ArrayRef<int64_t> getShape() const;
  int64_t getRank() const { return getShape().size(); }
  bool isScalar() const;
  bool isPointer() const;
  bool isFloat() const;
  bool isInteger() const;
  KernelBuilder *getBuilder() const { return builder; }

  explicit operator bool() const { return static_cast<bool>(value); }

private:
  mlir::Value value;
  KernelBuilder *builder = nullptr;
};

/// A loop body's results, and the results of a loop.
using Tensors = llvm::SmallVector<Tensor, 4>;

/// What an operator or builder function accepts: a Tensor or a C++ number.
/// Numbers take the element type of the Tensor they meet (an integer literal
/// next to an f16 tensor becomes an f16 constant; next to a pointer it is an
/// i32 offset), like Python numbers in Triton. Two numbers alone default to
/// i32 or f32.
class Operand {
public:
  enum class Kind { None, Tensor, Integer, Float };

  /// No operand (an optional argument left out).
  Operand() = default;
  Operand(Tensor tensor) : kind(Kind::Tensor), tensor(tensor) {}
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T number) {
    if constexpr (std::is_floating_point_v<T>) {
      kind = Kind::Float;
      floatValue = static_cast<double>(number);
    } else {
      kind = Kind::Integer;
      intValue = static_cast<int64_t>(number);
    }
  }

  Kind getKind() const { return kind; }
  bool isNone() const { return kind == Kind::None; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isNumber() const { return kind == Kind::Integer || kind == Kind::Float; }
  const Tensor &getTensor() const { return tensor; }
  int64_t getInt() const { return intValue; }
  double getFloat() const { return floatValue; }

private:
  Kind kind = Kind::None;
  Tensor tensor;
  int64_t intValue = 0;
  double floatValue = 0.0;
};

/// The elementwise binary operations behind the operators.
enum class BinaryOpKind {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Xor,
  /// Shifts; Shr is arithmetic (the sign fills in), ShrU logical.
  Shl,
  Shr,
  ShrU,
  Min,
  Max,
};

/// Builds one kernel body. Meta-parameters, type parameters and arguments are
/// bound by whoever creates the builder (KernelDefinition::specialize) and
/// read by the kernel with param(), dtype() and arg().
class KernelBuilder : private mlir::OpBuilder::Listener {
public:
  /// Appends to the end of `body`; `kernelLoc` is where diagnostics point and
  /// what unnamed ops are located at.
  KernelBuilder(mlir::Block *body, mlir::Location kernelLoc);
  KernelBuilder(const KernelBuilder &) = delete;
  KernelBuilder &operator=(const KernelBuilder &) = delete;

  mlir::MLIRContext *getContext() { return opBuilder.getContext(); }
  /// The underlying builder, for ops this API does not cover.
  mlir::OpBuilder &getOpBuilder() { return opBuilder; }
  mlir::Location getKernelLoc() const { return kernelLoc; }
  /// Wraps a value built directly with getOpBuilder().
  Tensor wrap(mlir::Value value) { return Tensor(value, *this); }

  /// True once any error has been diagnosed.
  bool hasErrors() const { return errorReported; }
  /// Reports an error at the kernel's location and marks the build failed.
  mlir::InFlightDiagnostic emitError();

  //===--------------------------------------------------------------------===//
  // Specialization: meta-parameters, type parameters, arguments
  //===--------------------------------------------------------------------===//

  void bindParam(llvm::StringRef name, int64_t value);
  void bindType(llvm::StringRef name, mlir::Type type);
  void bindArg(llvm::StringRef name, mlir::Value value);

  /// The value of an integer meta-parameter (BLOCK_M, ...); 1 after an error.
  int64_t param(llvm::StringRef name);
  /// The type a type parameter (DTYPE, ...) is specialized to.
  mlir::Type dtype(llvm::StringRef name);
  /// A kernel argument by name.
  Tensor arg(llvm::StringRef name);

  mlir::Type i1Type() { return opBuilder.getI1Type(); }
  mlir::Type i32Type() { return opBuilder.getI32Type(); }
  mlir::Type i64Type() { return opBuilder.getI64Type(); }
  mlir::Type f16Type() { return opBuilder.getF16Type(); }
  mlir::Type bf16Type() { return opBuilder.getBF16Type(); }
  mlir::Type f32Type() { return opBuilder.getF32Type(); }
  mlir::Type pointerType(mlir::Type pointee) {
    return tilec::tile::PointerType::get(pointee);
  }

  /// Names the ops built since the previous statement (let, store, loop)
  /// after the variable they compute, located at the kernel source line of the
  /// call: `auto offs = kb.let("offs", pid * BLOCK + kb.arange(0, BLOCK));`
  /// prints as `%offs = ...` with name prefixes on. Returns `value`.
  Tensor let(llvm::StringRef name, Tensor value,
             unsigned line = __builtin_LINE());
  /// Names a loop after the variable holding its results.
  Tensors let(llvm::StringRef name, Tensors values,
              unsigned line = __builtin_LINE());

  //===--------------------------------------------------------------------===//
  // Program instance
  //===--------------------------------------------------------------------===//

  /// tl.program_id(axis): axis 0, 1 or 2.
  Tensor programId(int axis);
  /// tl.num_programs(axis).
  Tensor numPrograms(int axis);

  //===--------------------------------------------------------------------===//
  // Creation
  //===--------------------------------------------------------------------===//

  /// tl.arange(start, end): i32 [start, end); end - start a power of two.
  Tensor arange(int64_t start, int64_t end);
  /// A scalar constant of `type` (an integer or float type).
  Tensor constant(Operand number, mlir::Type type);
  /// tl.full(shape, value, type): a number becomes a dense constant, a scalar
  /// Tensor is splat.
  Tensor full(llvm::ArrayRef<int64_t> shape, Operand value, mlir::Type type);
  Tensor zeros(llvm::ArrayRef<int64_t> shape, mlir::Type type);

  //===--------------------------------------------------------------------===//
  // Shapes
  //===--------------------------------------------------------------------===//

  /// Inserts a size-1 dimension: expandDims(x, 1) is x[:, None] for 1-D x,
  /// expandDims(x, 0) is x[None, :].
  Tensor expandDims(Tensor x, int axis);
  /// Broadcasts size-1 dimensions (or a scalar) to `shape`.
  Tensor broadcastTo(Tensor x, llvm::ArrayRef<int64_t> shape);
  Tensor reshape(Tensor x, llvm::ArrayRef<int64_t> shape);
  /// Transposes a 2-D tensor.
  Tensor trans(Tensor x);

  //===--------------------------------------------------------------------===//
  // Elementwise
  //===--------------------------------------------------------------------===//

  /// `lhs <kind> rhs` after Triton's broadcasting: scalars are splat and
  /// size-1 dimensions broadcast; ranks must already agree (use expandDims).
  /// Pointer +/- integer is pointer arithmetic (tile.addptr).
  Tensor binary(BinaryOpKind kind, const Operand &lhs, const Operand &rhs);
  Tensor neg(Tensor x);
  Tensor minimum(const Operand &lhs, const Operand &rhs) {
    return binary(BinaryOpKind::Min, lhs, rhs);
  }
  Tensor maximum(const Operand &lhs, const Operand &rhs) {
    return binary(BinaryOpKind::Max, lhs, rhs);
  }
  /// Ceiling division of integers: (lhs + rhs - 1) / rhs.
  Tensor cdiv(const Operand &lhs, const Operand &rhs);
  /// tl.where(cond, a, b): arith.select after broadcasting all three.
  Tensor where(const Operand &cond, const Operand &a, const Operand &b);
  Tensor exp(Tensor x);
  Tensor log(Tensor x);
  Tensor sqrt(Tensor x);
  /// Converts elements to `elementType` (extf/truncf, extsi/trunci, sitofp,
  /// fptosi, pointer bitcast, int_to_ptr/ptr_to_int); the shape is kept.
  Tensor cast(Tensor x, mlir::Type elementType);

  //===--------------------------------------------------------------------===//
  // Memory
  //===--------------------------------------------------------------------===//

  /// tl.load(ptrs, mask, other): `mask` and `ptrs` broadcast together;
  /// `other` (a number or Tensor) fills masked-off lanes and needs a mask.
  Tensor load(Tensor ptrs, Tensor mask = {}, Operand other = {},
              tile::CacheModifier cache = tile::CacheModifier::None,
              tile::EvictionPolicy evict = tile::EvictionPolicy::Normal);
  /// tl.load(..., volatile=True): every execution reads memory again
  /// (ld.volatile), for words other programs write while this one runs,
  /// such as a flag it waits on in a whileLoop.
  Tensor loadVolatile(Tensor ptrs, Tensor mask = {}, Operand other = {});
  /// The blockRows x blockCols block at (row, col) of the row-major array
  /// at `base` with `rows` x `cols` elements and the given strides, zeros
  /// outside the array (tile.load_tile; a TMA copy where the target has it).
  /// Every operand but `base` is an i32 scalar; `base` a scalar pointer.
  struct TileOfArray {
    Tensor base, rows, cols, rowStride, colStride;
  };
  Tensor loadTile(const TileOfArray &array, Tensor row, Tensor col,
                  int64_t blockRows, int64_t blockCols);
  /// tl.store(ptrs, value, mask): `value` and `mask` broadcast to `ptrs`.
  /// The ops of the statement are located at the calling line.
  void store(Tensor ptrs, Operand value, Tensor mask = {},
             tile::CacheModifier cache = tile::CacheModifier::None,
             tile::EvictionPolicy evict = tile::EvictionPolicy::Normal,
             unsigned line = __builtin_LINE());

  /// tl.atomic_add / atomic_max / ... : `kind` at `ptrs` with `vals` (a
  /// number or Tensor; it and `mask` broadcast to `ptrs`) where `mask` holds,
  /// once per element; yields the old values (0 where masked off).
  Tensor atomicRmw(tile::AtomicRMWKind kind, Tensor ptrs, Operand vals,
                   Tensor mask = {},
                   tile::MemSemantic sem = tile::MemSemantic::AcqRel,
                   tile::MemSyncScope scope = tile::MemSyncScope::GPU);
  /// tl.atomic_cas: where memory holds `cmp` it becomes `val`; yields the old
  /// values (equal to `cmp` where the swap happened).
  Tensor atomicCas(Tensor ptrs, Operand cmp, Operand val, Tensor mask = {},
                   tile::MemSemantic sem = tile::MemSemantic::AcqRel,
                   tile::MemSyncScope scope = tile::MemSyncScope::GPU);

  /// tl.debug_barrier(): the program's threads wait for each other; memory
  /// operations before it are ordered before those after it. Needed where a
  /// scalar atomic (performed by one thread) is to publish the whole
  /// program's earlier stores.
  void barrier(unsigned line = __builtin_LINE());

  //===--------------------------------------------------------------------===//
  // Compute
  //===--------------------------------------------------------------------===//

  /// tl.dot(a, b, acc): a is MxK, b KxN, acc MxN; without acc, the product is
  /// accumulated into f32 zeros (i32 for integer inputs).
  Tensor dot(Tensor a, Tensor b, Tensor acc = {},
             tile::InputPrecision precision = tile::InputPrecision::IEEE);
  /// dot(a, b, acc) for the rows whose group (row / rowsPerGroup) has its
  /// bit set in the i32 scalar `rowGroups`; the other rows keep acc
  /// (tile.dot's row_groups: the warpgroup MMA skips them).
  Tensor dotOfRowGroups(Tensor a, Tensor b, Tensor acc,
                        tile::InputPrecision precision, Tensor rowGroups,
                        int64_t rowsPerGroup);
  /// Reduces one axis; a 1-D tensor reduces to a scalar.
  Tensor reduce(Tensor x, int axis, tile::ReduceKind kind);
  Tensor sum(Tensor x, int axis) {
    return reduce(x, axis, tile::ReduceKind::Add);
  }
  Tensor max(Tensor x, int axis) {
    return reduce(x, axis, tile::ReduceKind::Max);
  }
  Tensor min(Tensor x, int axis) {
    return reduce(x, axis, tile::ReduceKind::Min);
  }

  /// tl.associative_scan with a built-in combine: the inclusive scan along
  /// `axis` (from the end when `reverse`); the shape is kept.
  Tensor scan(Tensor x, int axis, tile::ReduceKind kind, bool reverse = false);
  /// tl.cumsum.
  Tensor cumsum(Tensor x, int axis, bool reverse = false) {
    return scan(x, axis, tile::ReduceKind::Add, reverse);
  }

  /// tl.histogram(x, bins, mask): a tensor of `bins` i32 counts, element b
  /// the elements of the 1-D i32 tensor `x` equal to b where `mask` holds
  /// (values outside [0, bins) count nowhere). The counting of a radix
  /// sort's digits, without a [keys x bins] one-hot tile.
  Tensor histogram(Tensor x, int64_t bins, Tensor mask = {});
  /// Each element's rank among the equal elements before it: element i of
  /// the result counts the j < i with x[j] == x[i] where `mask` holds, for
  /// x[i] in [0, bins) and mask[i]; 0 elsewhere (tile.bin_rank). A stable
  /// counting sort puts element i after the smaller bins' elements at this
  /// rank, without a [keys x keys] tile.
  Tensor binRank(Tensor x, int64_t bins, Tensor mask = {});

  //===--------------------------------------------------------------------===//
  // Loops
  //===--------------------------------------------------------------------===//

  /// The body of forRange: given the i32 induction variable and the carried
  /// values of this iteration, returns the carried values of the next one.
  using LoopBody =
      llvm::function_ref<Tensors(Tensor iv, llvm::ArrayRef<Tensor> carried)>;

  /// `for iv in range(lb, ub, step)` with loop-carried values (scf.for with
  /// iter_args and an i32 induction variable). Returns the final carried
  /// values; the body must yield values of the same types.
  Tensors forRange(const Operand &lb, const Operand &ub, const Operand &step,
                   llvm::ArrayRef<Tensor> carried, LoopBody body);

  /// The condition of whileLoop: given the carried values of this
  /// iteration, whether to run the body (an i1 scalar).
  using WhileCondition =
      llvm::function_ref<Tensor(llvm::ArrayRef<Tensor> carried)>;
  /// The body of whileLoop: the carried values of the next iteration.
  using WhileBody = llvm::function_ref<Tensors(llvm::ArrayRef<Tensor> carried)>;

  /// `while cond(carried): carried = body(carried)` (scf.while: `cond` in
  /// its before region, `body` in its after region). Returns the carried
  /// values the first false condition saw. The condition must be the same
  /// for every thread of the program (computed from scalars every thread
  /// holds alike, such as a reduction's result, never from a scalar load of
  /// memory another program writes, which each thread loads for itself), so
  /// that the threads leave the loop together and a barrier in it stays
  /// legal. A loop whose condition waits for another program needs that
  /// program to have started first (a ticket taken with an atomic add, not
  /// the program id): programs run in no guaranteed order.
  Tensors whileLoop(llvm::ArrayRef<Tensor> carried, WhileCondition cond,
                    WhileBody body);

  /// `if cond:` around `body`, which yields nothing (scf.if without results
  /// or else): `cond` is an i1 scalar, the same for every thread of the
  /// program, so that a barrier in the body stays legal.
  void ifThen(const Operand &cond, llvm::function_ref<void()> body);

private:
  void notifyOperationInserted(mlir::Operation *op,
                               mlir::OpBuilder::InsertPoint previous) override;

  Tensor make(mlir::Value value) { return Tensor(value, *this); }
  /// `line` of the kernel's source file.
  mlir::Location sourceLineLoc(unsigned line) const;
  llvm::SmallVector<mlir::Value> carriedValuesOf(llvm::StringRef loop,
                                                 llvm::ArrayRef<Tensor> carried,
                                                 Tensors yielded);
  /// Moves the ops built since the previous statement to `location`.
  void locateUnnamedOps(mlir::Location location, mlir::Value namedValue);
  /// Location for new ops.
  mlir::Location loc() const { return kernelLoc; }
  /// The attribute of a number as an `elementType` constant.
  mlir::FailureOr<mlir::TypedAttr> numberAttr(const Operand &number,
                                              mlir::Type elementType);
  /// Turns numbers into scalar constants of `elementType`; null on error.
  Tensor materialize(const Operand &operand, mlir::Type elementType);
  /// Broadcasts `operands` in place to their common shape.
  mlir::LogicalResult broadcastTogether(llvm::MutableArrayRef<Tensor> operands,
                                        llvm::StringRef what);
  Tensor splatTo(Tensor scalar, llvm::ArrayRef<int64_t> shape);
  mlir::LogicalResult requireFloat(Tensor x, llvm::StringRef what);
  /// Checks an atomic's pointers (global) and mask, turns `numbers` into
  /// pointee-typed `values` and broadcasts everything to one shape.
  mlir::LogicalResult
  prepareAtomicOperands(llvm::StringRef what, Tensor &ptrs,
                        llvm::MutableArrayRef<Tensor> values,
                        llvm::ArrayRef<const Operand *> numbers, Tensor &mask);

  mlir::OpBuilder opBuilder;
  mlir::Location kernelLoc;
  bool errorReported = false;
  llvm::StringMap<int64_t> params;
  llvm::StringMap<mlir::Type> types;
  llvm::StringMap<mlir::Value> args;
  /// Ops built since the last statement; let() names them.
  llvm::SmallVector<mlir::Operation *> unnamedOps;
};

// Arithmetic, comparison and bitwise operators with Triton's broadcasting.
// Integer division and remainder are signed (Triton's `//` and `%`); `/` on
// floats is true division. `&` and `|` combine masks (i1) or integers.
Tensor operator+(const Operand &lhs, const Operand &rhs);
Tensor operator-(const Operand &lhs, const Operand &rhs);
Tensor operator*(const Operand &lhs, const Operand &rhs);
Tensor operator/(const Operand &lhs, const Operand &rhs);
Tensor operator%(const Operand &lhs, const Operand &rhs);
Tensor operator<(const Operand &lhs, const Operand &rhs);
Tensor operator<=(const Operand &lhs, const Operand &rhs);
Tensor operator>(const Operand &lhs, const Operand &rhs);
Tensor operator>=(const Operand &lhs, const Operand &rhs);
Tensor operator==(const Operand &lhs, const Operand &rhs);
Tensor operator!=(const Operand &lhs, const Operand &rhs);
Tensor operator&(const Operand &lhs, const Operand &rhs);
Tensor operator|(const Operand &lhs, const Operand &rhs);
Tensor operator^(const Operand &lhs, const Operand &rhs);
Tensor operator<<(const Operand &lhs, const Operand &rhs);
/// Arithmetic shift (integers are signless; Triton's >> on signed ints);
/// binary(BinaryOpKind::ShrU, ...) shifts zeros in.
Tensor operator>>(const Operand &lhs, const Operand &rhs);
Tensor operator-(const Tensor &x);

} // namespace tilec::kernel

#endif // TILEC_KERNEL_KERNELBUILDER_H
