//===- Interpreter.h - run a ttir kernel on the CPU -------------*- C++ -*-===//
//
// Triton's TRITON_INTERPRET=1 for tilec: a `tile`-dialect kernel (the ttir
// stage, one func.func with `tile.kernel`) executed on the host, program by
// program, each op on whole tensors as the block-level program says, with
// no GPU, no layouts and no PTX. What it is for: checking a kernel's
// algorithm against its float64 reference where no GPU is (CI, a laptop),
// and finding its out-of-bounds and misaligned accesses with the op's
// location, the program and the lane that made them.
//
// Semantics, and where they differ from a GPU's:
// - Programs run one after another, x fastest, then y, then z. A program
//   that waits in a loop for a later program's atomics never finishes:
//   loops stop after InterpretOptions::maxLoopIterations with an error.
// - Memory is the buffers given in a KernelMemory, at addresses the
//   interpreter makes up (buffer i starts at (i + 1) << 40), so that a
//   pointer outside every buffer or past a buffer's end is an error, never
//   a host access; an access must be aligned to its element's size.
// - Arithmetic is the element type's: integers wrap at their width, f32,
//   f16 and bf16 round to nearest even after every op (once, from the
//   exact value). A dot adds its exact products one after another along K,
//   rounding each sum to the accumulator's format as the MMA's fused
//   multiply-adds do; a float reduction or scan rounds each combination to
//   the element's format (its order is not the GPU's tree); tf32 operands
//   are cut to 10 mantissa bits as sm_90a's wgmma reads them. LLVM's
//   contraction of a mulf and an addf into one fma is not modelled.
// - Integer division by zero gives 0 (a GPU gives an unspecified value, no
//   trap); a masked-off load without `other` gives 0.
// - The lanes of an atomic op update memory in row-major order.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_INTERPRETER_INTERPRETER_H
#define TILEC_INTERPRETER_INTERPRETER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tilec::interp {

/// The host buffers a kernel may read and write, each at an address of its
/// own in the interpreter's address space.
class KernelMemory {
public:
  /// Adds `bytes` bytes at `data` (kept by the caller, alive while the
  /// kernel runs) and returns the address a pointer argument passes; 0 once
  /// the address space holds its 2^24 - 1 buffers (released ones count).
  uint64_t add(std::string name, uint8_t *data, size_t bytes);
  /// Forgets the buffer at `address` (as add() returned it): an access to
  /// it is then an error that says it was released. False when `address`
  /// is no live buffer's start.
  bool release(uint64_t address);

  struct Buffer {
    std::string name;
    uint8_t *data = nullptr;
    size_t bytes = 0;
    bool released = false;
  };
  /// The buffer and offset `address` is at with `size` bytes from it in
  /// the same buffer; null with `error` set where there is none.
  uint8_t *resolve(uint64_t address, size_t size, std::string &error) const;

private:
  std::vector<Buffer> buffers_;
};

struct InterpretOptions {
  /// Iterations of one scf.for or scf.while before the run stops with an
  /// error (a program spinning on a flag no earlier program sets).
  int64_t maxLoopIterations = int64_t(1) << 24;
  /// Elements of one tensor (the dialect allows 2^20), and multiply-adds of
  /// one tile.dot, past which the op is an error rather than gigabytes or
  /// hours (a kernel's blocks are far smaller: 128 x 256 at most in
  /// kernels/).
  int64_t maxTensorElements = int64_t(1) << 20;
  int64_t maxDotMultiplyAdds = int64_t(1) << 27;
  /// The run's work, every op's result elements and every dot's
  /// multiply-adds summed over all programs, past which it stops with an
  /// error (a loop of millions of short iterations as much as one op).
  int64_t maxWork = int64_t(1) << 34;
};

/// Runs `kernel` (the module's one func.func with `tile.kernel`) on every
/// program of `grid`, with `arguments` in signature order: a pointer's
/// address from `memory`, an integer's value, a float's bits. Errors go to the
/// context's diagnostic handler at the failing op, naming the program.
mlir::LogicalResult interpretKernel(mlir::ModuleOp module,
                                    std::array<int64_t, 3> grid,
                                    llvm::ArrayRef<int64_t> arguments,
                                    KernelMemory &memory,
                                    const InterpretOptions &options = {});

} // namespace tilec::interp

#endif // TILEC_INTERPRETER_INTERPRETER_H
