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

#include "TtirMutator.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Interpreter/Interpreter.h"
#include "tilec/Pipeline/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

const mlir::DialectRegistry &pipelineDialects() {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry dialects;
    tilec::registerPipelineDialects(dialects);
    return dialects;
  }();
  return registry;
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  if (seed % 4 != 0) {
    mlir::MLIRContext context(pipelineDialects(),
                              mlir::MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    std::optional<std::string> mutant = tilec::fuzz::mutateTtir(
        context, std::string_view(reinterpret_cast<char *>(data), size),
        seed / 4);
    if (mutant && mutant->size() <= maxSize) {
      std::memcpy(data, mutant->data(), mutant->size());
      return mutant->size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(pipelineDialects(),
                            mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return 0;
  // The kernel's arguments: a buffer per pointer, 5 for an integer (a
  // size small enough that masks cut the blocks), 1.0f's bits for a float.
  mlir::func::FuncOp kernel;
  for (auto func : module->getOps<mlir::func::FuncOp>())
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
  (void)tilec::interp::interpretKernel(*module, {2, 1, 1}, arguments, memory,
                                       options);
  return 0;
}
