//===- TtirFuzzer.cpp - libFuzzer target: the compiler on mutated ttir ----===//
//
// A kernel's ttir is text a user hands tilec (`tilec compile k.ttir`,
// `TILEC_OVERRIDE_DIR`): parsed with tilec's dialects, verified, and where
// both pass compiled through the ttgir, llir and ptx stages (no ptxas). Any
// outcome but a diagnostic (a crash, a sanitizer report, a hang, unbounded
// memory) is a finding. The corpus is tilec's own kernels.
//
//===----------------------------------------------------------------------===//

#include "tilec/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const mlir::DialectRegistry registry = [] {
    mlir::DialectRegistry dialects;
    tilec::registerPipelineDialects(dialects);
    return dialects;
  }();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are the expected answer to bad input: kept quiet.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  // NUL-terminated, as every buffer tilec parses is (a file's, a cached
  // stage's std::string): MLIR's lexer reads the terminator.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  tilec::CompileOptions options;
  options.skipCubin = true;
  llvm::Expected<tilec::CompiledKernel> compiled =
      tilec::compileKernel(*module, options);
  if (!compiled)
    llvm::consumeError(compiled.takeError());
  return 0;
}
