//===- Commands.h - tilec subcommands ---------------------------*- C++ -*-===//

#ifndef TILEC_TOOLS_TILEC_COMMANDS_H
#define TILEC_TOOLS_TILEC_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace tilec::tool {
/// Each subcommand owns its llvm::cl::SubCommand and options and returns a
/// process exit status.
extern llvm::cl::SubCommand compileCommand;
int runCompile();
/// Registers MLIR's pass-manager and timing options (--mlir-print-ir-*,
/// --mlir-timing, ...) as options of `tilec compile`; before parsing.
void registerCompilePassOptions();
extern llvm::cl::SubCommand runCommand;
int runRun();
extern llvm::cl::SubCommand tuneCommand;
int runTune();
extern llvm::cl::SubCommand warmupCommand;
int runWarmup();
extern llvm::cl::SubCommand cacheCommand;
int runCache();
extern llvm::cl::SubCommand benchCommand;
/// `argv0` locates this executable: the benchmark scripts run it.
int runBench(const char *argv0);
/// tilec bench plans (PlanBench.cpp): the results go to `outDir`.
int runPlanBench(const std::string &outDir, bool quick);
/// tilec bench stores (StoreBench.cpp): an autotune file's stores replayed
/// into fresh caches under `outDir`.
int runStoreBench(const std::string &from, const std::string &outDir);
extern llvm::cl::SubCommand packCommand;
int runPack();
extern llvm::cl::SubCommand bundleCommand;
int runBundle();

// The whole tool: parses the command line and runs its subcommand.
int tilecMain(int argc, char **argv);
} // namespace tilec::tool

#endif // TILEC_TOOLS_TILEC_COMMANDS_H
