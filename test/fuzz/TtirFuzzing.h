//===- TtirFuzzing.h - what the two ttir fuzzers share ----------*- C++ -*-===//
//
// TtirFuzzer (the compiler) and InterpreterFuzzer (the interpreter) read
// the same inputs the same way: tilec's dialects, quiet diagnostics, and a
// custom mutation that is structural three times in four (TtirMutator.h)
// and libFuzzer's byte mutation otherwise (the parser's own edges).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_FUZZ_TTIRFUZZING_H
#define TILEC_TEST_FUZZ_TTIRFUZZING_H

#include "TtirMutator.h"

#include "tilec/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <cstring>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace tilec::fuzz {

inline const mlir::DialectRegistry &pipelineDialects() {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry dialects;
    registerPipelineDialects(dialects);
    return dialects;
  }();
  return registry;
}

/// Both fuzzers' LLVMFuzzerCustomMutator.
inline size_t mutateTtirInput(uint8_t *data, size_t size, size_t maxSize,
                              unsigned int seed) {
  if (seed % 4 != 0) {
    mlir::MLIRContext context(pipelineDialects(),
                              mlir::MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    std::optional<std::string> mutant = mutateTtir(
        context, std::string_view(reinterpret_cast<char *>(data), size),
        seed / 4);
    if (mutant && mutant->size() <= maxSize) {
      std::memcpy(data, mutant->data(), mutant->size());
      return mutant->size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

/// An input parsed and verified as `tilec compile` reads a file, in a
/// context of its own whose diagnostics (the expected answer to bad input)
/// are kept quiet; `module` is null where it does not parse or verify.
struct ParsedTtir {
  mlir::MLIRContext context{pipelineDialects(),
                            mlir::MLIRContext::Threading::DISABLED};
  mlir::ScopedDiagnosticHandler quiet{
      &context, [](mlir::Diagnostic &) { return mlir::success(); }};
  mlir::OwningOpRef<mlir::ModuleOp> module;

  ParsedTtir(const uint8_t *data, size_t size) {
    context.loadAllAvailableDialects();
    // NUL-terminated, as every buffer tilec parses is (a file's, a cached
    // stage's std::string): MLIR's lexer reads the terminator.
    std::string text(reinterpret_cast<const char *>(data), size);
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
};

} // namespace tilec::fuzz

#endif // TILEC_TEST_FUZZ_TTIRFUZZING_H
