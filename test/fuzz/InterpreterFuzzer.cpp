//===- InterpreterFuzzer.cpp - libFuzzer target: the interpreter ----------===//
//
// The interpreter (docs/interpreter.md) runs whatever ttir parses and
// verifies: a kernel from a file, or one a mutation broke. Every pointer
// argument gets a 4 KiB buffer and every other argument a small value;
// two programs run, with loops and work bounded low. Any outcome but a
// finished run or a diagnostic (a crash, a sanitizer report, a hang,
// unbounded memory) is a finding. Corpus and mutations: the ttir fuzzer's
// (its structural mutator three times in four).
//
//===----------------------------------------------------------------------===//

#include "TtirFuzzing.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  return tilec::fuzz::mutateTtirInput(data, size, maxSize, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tilec::fuzz::ParsedTtir input(data, size);
  if (!input.module)
    return 0;
  // The kernel's arguments: a buffer per pointer, 5 for an integer (a
  // size small enough that masks cut the blocks), 1.0f's bits for a float.
  mlir::func::FuncOp kernel;
  for (auto func : input.module->getOps<mlir::func::FuncOp>())
    if (func->hasAttr("tile.kernel") && !func.isExternal())
      kernel = func;
  if (!kernel)
    return 0;
  tilec::interp::KernelMemory memory;
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<int64_t> arguments;
  for (mlir::Type type : kernel.getArgumentTypes()) {
    if (llvm::isa<tilec::tile::PointerType>(type)) {
      buffers.emplace_back(4096, 0);
      arguments.push_back(static_cast<int64_t>(
          memory.add("buffer", buffers.back().data(), buffers.back().size())));
    } else if (type.isF32()) {
      arguments.push_back(0x3f800000);
    } else {
      arguments.push_back(5);
    }
  }
  tilec::interp::InterpretOptions options;
  options.maxLoopIterations = 1 << 12;
  options.maxTensorElements = 1 << 16;
  options.maxDotMultiplyAdds = 1 << 20;
  options.maxWork = 1 << 23;
  (void)tilec::interp::interpretKernel(*input.module, {2, 1, 1}, arguments,
                                       memory, options);
  return 0;
}
