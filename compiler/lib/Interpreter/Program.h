//===- Program.h - one program of an interpreted kernel --------*- C++ -*-===//
//
// Runs the ops of one program (one point of the grid): control flow here
// (Interpreter.cpp), the arith and math ops in ArithOps.cpp, the tile ops
// in TileOps.cpp. Each op's operands are looked up, its results computed on
// whole tensors and bound; a failure is emitted at the op, naming the
// program, and stops the run.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_LIB_INTERPRETER_PROGRAM_H
#define TILEC_LIB_INTERPRETER_PROGRAM_H

#include "Values.h"

#include "tilec/Interpreter/Interpreter.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <string>

namespace tilec::interp {

class Program {
public:
  /// `work` counts the run's work over all its programs (maxWork).
  Program(std::array<int64_t, 3> id, std::array<int64_t, 3> grid,
          KernelMemory &memory, const InterpretOptions &options, int64_t &work)
      : id_(id), grid_(grid), memory_(memory), options_(options), work_(work) {}

  /// Runs `block` with its arguments bound to `arguments`; the values its
  /// terminator passes on (scf.yield, scf.condition's, func.return's) go to
  /// `terminatorOperands`.
  mlir::LogicalResult
  runBlock(mlir::Block &block, llvm::ArrayRef<TensorRef> arguments,
           llvm::SmallVectorImpl<TensorRef> &terminatorOperands);

private:
  mlir::LogicalResult run(mlir::Operation &op);
  // Interpreter.cpp: scf.for, scf.if, scf.while.
  mlir::LogicalResult runControlFlow(mlir::Operation &op, bool &handled);
  // ArithOps.cpp: arith.* and math.*.
  mlir::LogicalResult runArith(mlir::Operation &op, bool &handled);
  /// The casts, with `out` the result's shape and type.
  mlir::LogicalResult runCast(mlir::Operation &op, Tensor &out);
  // TileOps.cpp: tile.*.
  mlir::LogicalResult runTile(mlir::Operation &op, bool &handled);
  mlir::LogicalResult runLoad(mlir::Operation &op);
  mlir::LogicalResult runLoadTile(mlir::Operation &op);
  mlir::LogicalResult runStore(mlir::Operation &op);
  mlir::LogicalResult runAtomic(mlir::Operation &op);
  mlir::LogicalResult runDot(mlir::Operation &op);
  mlir::LogicalResult runReduceOrScan(mlir::Operation &op);
  mlir::LogicalResult runHistogramOrBinRank(mlir::Operation &op);

  const Tensor &operand(mlir::Operation &op, unsigned index) const {
    return *values_.lookup(op.getOperand(index));
  }
  const Tensor &valueOf(mlir::Value value) const {
    return *values_.lookup(value);
  }
  void bind(mlir::Value value, TensorRef tensor) {
    values_[value] = std::move(tensor);
  }
  void bind(mlir::Value value, Tensor tensor) {
    values_[value] = std::make_shared<const Tensor>(std::move(tensor));
  }
  /// The element type of `value`'s type; the op fails where the interpreter
  /// holds no such element.
  mlir::FailureOr<ElementType> typeOf(mlir::Operation &op,
                                      mlir::Value value) const;

  /// "program (x, y, z): " + message, at `op`.
  mlir::InFlightDiagnostic error(mlir::Operation &op) const;

  /// Reads lane `lane` of `out` (of its element type) from `address`, or
  /// writes one element of `type` there: failure (emitted at `op`, naming
  /// the lane) outside the buffers or misaligned.
  mlir::LogicalResult readElement(mlir::Operation &op, uint64_t address,
                                  Tensor &out, size_t lane);
  mlir::LogicalResult writeElement(mlir::Operation &op, uint64_t address,
                                   const ElementType &type, size_t lane,
                                   int64_t intValue, double floatValue);
  uint8_t *access(mlir::Operation &op, uint64_t address, unsigned bytes,
                  size_t lane);

  std::array<int64_t, 3> id_, grid_;
  KernelMemory &memory_;
  const InterpretOptions &options_;
  int64_t &work_;
  llvm::DenseMap<mlir::Value, TensorRef> values_;
};

} // namespace tilec::interp

#endif // TILEC_LIB_INTERPRETER_PROGRAM_H
