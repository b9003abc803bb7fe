//===- TilecMain.cpp - the tilec driver's command line --------------------===//
//
// tilec compile: a kernel (a .ttir file, or a kernel from kernels/ with a
// config) through every stage, writing each stage's artifact.
// tilec run: compile, run on the GPU, check against a float64 reference.
// ... and the other subcommands of Commands.h. tilecMain is the whole tool;
// tilec.cpp's main calls it, and a test's tool may set test hooks first.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "TilecCommit.h"
#include "tilec/Support/LargeStack.h"
#include "tilec/Target/CubinAssembler.h"

#include "llvm/Config/llvm-config.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

int tilec::tool::tilecMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tilec::tool::registerCompilePassOptions();
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tilec " TILEC_VERSION " (commit " TILEC_COMMIT ")\n"
       << "  built with LLVM " LLVM_VERSION_STRING "\n";
    // The ptxas the cubin stage runs ($TILEC_PTXAS, the configure-time
    // path, PATH), with its own version line.
    llvm::Expected<std::string> ptxas = tilec::findPtxas("");
    if (!ptxas) {
      os << "  ptxas: " << llvm::toString(ptxas.takeError()) << "\n";
      return;
    }
    std::string identity = tilec::getPtxasIdentity(tilec::CubinOptions());
    llvm::StringRef release = llvm::StringRef(identity).trim();
    release = release.substr(release.rfind('\n') + 1);
    os << "  ptxas: " << *ptxas << (release.empty() ? "" : " (") << release
       << (release.empty() ? "" : ")") << "\n";
  });
  // The LLVM libraries register hundreds of options at the top level, and
  // tilec reads none of them: its options live in the subcommands, whose
  // help lists only their own.
  llvm::cl::HideUnrelatedOptions(
      llvm::ArrayRef<const llvm::cl::OptionCategory *>());
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "tilec: a tile compiler for NVIDIA GPUs\n\n"
      "  tilec compile kernels/matmul.ttir --dump-dir out --timings\n"
      "  tilec compile --kernel matmul --config "
      "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4 --dump-dir out\n"
      "  tilec run --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32 "
      "--sizes M=203,N=176,K=208\n");
  // The parsers recurse per level of nesting: deeply nested input (a .ttir,
  // --llvm-passes) ends in their error, not a stack overflow.
  return tilec::runOnLargeStack([&] {
    if (tilec::tool::compileCommand)
      return tilec::tool::runCompile();
    if (tilec::tool::runCommand)
      return tilec::tool::runRun();
    if (tilec::tool::tuneCommand)
      return tilec::tool::runTune();
    if (tilec::tool::warmupCommand)
      return tilec::tool::runWarmup();
    if (tilec::tool::cacheCommand)
      return tilec::tool::runCache();
    if (tilec::tool::benchCommand)
      return tilec::tool::runBench(argv[0]);
    if (tilec::tool::packCommand)
      return tilec::tool::runPack();
    if (tilec::tool::bundleCommand)
      return tilec::tool::runBundle();
    llvm::errs()
        << "tilec: a subcommand is required (compile, run, cache, tune, "
           "warmup, bench, pack, bundle); see tilec --help\n";
    return 2;
  });
}
