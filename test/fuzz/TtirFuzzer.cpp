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

#include "TtirFuzzing.h"

#include "tilec/Pipeline/Pipeline.h"

#include "llvm/Support/Error.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  return tilec::fuzz::mutateTtirInput(data, size, maxSize, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The parser verifies what it parsed (ParserConfig's default): a module
  // that fails is null.
  tilec::fuzz::ParsedTtir input(data, size);
  if (!input.module)
    return 0;
  tilec::CompileOptions options;
  options.skipCubin = true;
  llvm::Expected<tilec::CompiledKernel> compiled =
      tilec::compileKernel(*input.module, options);
  if (!compiled)
    llvm::consumeError(compiled.takeError());
  return 0;
}
