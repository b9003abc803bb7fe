//===- BenchCommand.cpp - tilec bench -------------------------------------===//
//
// Runs a benchmark script of the project (scripts/bench/<name>.py) with this
// tilec: the scripts time tilec's kernels next to their peers (Triton,
// cuBLAS) in one Python process, because the peers live in Python. They need
// python3 with torch and triton, and a GPU.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand benchCommand(
    "bench", "Benchmark a kernel against its peers on the GPU, in one process "
             "(gemm: tilec, a Triton kernel of the same algorithm, cuBLAS)");

static cl::OptionCategory category("tilec bench options");
static cl::opt<std::string> benchName(cl::Positional, cl::desc("<gemm>"),
                                      cl::Required, cl::sub(benchCommand),
                                      cl::cat(category));
static cl::opt<std::string> outDir("out",
                                   cl::desc("Where the JSON and PNG go"),
                                   cl::init("bench-out"), cl::sub(benchCommand),
                                   cl::cat(category));
static cl::opt<std::string>
    dtypes("dtypes", cl::desc("Element types, e.g. f16,bf16,f32 (the script's "
                              "default when empty)"),
           cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string>
    shapes("shapes", cl::desc("Shapes MxNxK;... (the script's default when "
                              "empty)"),
           cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string>
    python("python", cl::desc("The Python that has torch and triton"),
           cl::init("python3"), cl::sub(benchCommand), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec bench: error: " << message << "\n";
  return 1;
}

/// scripts/bench/<name>.py: $TILEC_BENCH_DIR, else next to the binary in the
/// source tree (build/bin/../../scripts/bench) or an install
/// (bin/../share/tilec/bench).
static std::string findScript(const std::string &self,
                              const std::string &name) {
  llvm::SmallVector<std::string> directories;
  if (const char *dir = std::getenv("TILEC_BENCH_DIR"))
    directories.push_back(dir);
  llvm::StringRef bin = llvm::sys::path::parent_path(self);
  llvm::StringRef prefix = llvm::sys::path::parent_path(bin);
  directories.push_back(
      (llvm::sys::path::parent_path(prefix) + "/scripts/bench").str());
  directories.push_back((prefix + "/share/tilec/bench").str());
  for (const std::string &dir : directories) {
    std::string path = dir + "/" + name + ".py";
    if (llvm::sys::fs::exists(path))
      return path;
  }
  return "";
}

int runBench(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runBench));
  if (benchName != "gemm")
    return fail("unknown benchmark '" + benchName + "' (known: gemm)");
  std::string script = findScript(self, benchName);
  if (script.empty())
    return fail("scripts/bench/" + benchName +
                ".py not found next to " + self + " (set TILEC_BENCH_DIR)");
  auto interpreter = llvm::sys::findProgramByName(python);
  if (!interpreter)
    return fail("no '" + python + "' on PATH (--python)");
  std::vector<std::string> args = {*interpreter, script, "--tilec", self,
                                   "--out", outDir};
  if (!dtypes.empty())
    args.insert(args.end(), {"--dtypes", dtypes});
  if (!shapes.empty())
    args.insert(args.end(), {"--shapes", shapes});
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*interpreter, argRefs, std::nullopt,
                                         {}, 0, 0, &error);
  if (status < 0)
    return fail("cannot run " + *interpreter + ": " + error);
  return status;
}

} // namespace tilec::tool
