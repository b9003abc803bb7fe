//===- TtirFuzzer.cpp - libFuzzer target: the compiler on mutated ttir ----===//
//
// A kernel's ttir is text a user hands tilec (`tilec compile k.ttir`,
// `TILEC_OVERRIDE_DIR`): parsed with tilec's dialects, verified, and where
// both pass compiled through the ttgir, llir and ptx stages (no ptxas). Any
// outcome but a diagnostic (a crash, a sanitizer report, a hang, unbounded
// memory) is a finding. The corpus is tilec's own kernels. Mutations are
// structural where the input parses (TtirMutator.h: most mutants reach the
// verifiers and the passes) and libFuzzer's byte mutations otherwise, and
// one time in four (the parser's own edges).
//
//===----------------------------------------------------------------------===//

#include "TtirMutator.h"

#include "tilec/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstring>
#include <string>

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
  // Diagnostics are the expected answer to bad input: kept quiet.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  // NUL-terminated, as every buffer tilec parses is (a file's, a cached
  // stage's std::string): MLIR's lexer reads the terminator.
  // The parser verifies what it parsed (ParserConfig's default), as
  // `tilec compile` reads a file: a module that fails is null.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return 0;
  tilec::CompileOptions options;
  options.skipCubin = true;
  llvm::Expected<tilec::CompiledKernel> compiled =
      tilec::compileKernel(*module, options);
  if (!compiled)
    llvm::consumeError(compiled.takeError());
  return 0;
}
