//===- BenchCommand.cpp - tilec bench -------------------------------------===//
//
// Runs a benchmark script of the project (scripts/bench/<name>.py) with this
// tilec: the scripts time tilec's kernels next to their peers (Triton,
// cuBLAS, spconv-Triton) in one Python process, because the peers live in
// Python. They need python3 with torch and triton, and a GPU. gemm drives
// the tilec binary; spconv calls libtilec_c.so (the C API) through ctypes.
// spconv --frames (scripts/bench/spconv_frames.py) streams scans of new sizes
// through maps and layer stacks next to spconv-Triton and FlexGEMM, then
// from a bundle it makes with this tilec (warmup, pack) in a fresh process.
// spconv --train (scripts/bench/spconv_train.py) times one training step
// (forward, dX, dW, db) of a layer next to FlexGEMM, spconv-Triton and torch.
// spconv --network spunet (scripts/bench/spconv_network.py) checks and times
// a SpUNet-style network of strided, inverse and submanifold layers next to
// spconv-Triton with the same state_dict. plans (PlanBench.cpp) runs in
// this process, with no GPU: the host's planning of a launch of a new size;
// so does stores (StoreBench.cpp): an autotune file's stores replayed.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/runtime/Environment.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand benchCommand(
    "bench", "Benchmark a kernel against its peers on the GPU, in one process "
             "(gemm: tilec, a Triton kernel of the same algorithm, cuBLAS; "
             "spconv: tilec's submanifold convolution, spconv-Triton, torch; "
             "spconv --frames: streams of scans of new sizes, with FlexGEMM; "
             "spconv --train: a layer's training step, with FlexGEMM; "
             "spconv --network spunet: an encoder-decoder network; "
             "plans: the host's planning of launches of new sizes, no GPU; "
             "stores: an autotune file's stores replayed, no GPU)");

static cl::OptionCategory category("tilec bench options");
static cl::opt<std::string> benchName(cl::Positional,
                                      cl::desc("<gemm|spconv|plans|stores>"),
                                      cl::Required, cl::sub(benchCommand),
                                      cl::cat(category));
static cl::opt<std::string>
    storesFrom("from",
               cl::desc("stores: the autotune file whose entries are stored "
                        "again, in the order their tunings started"),
               cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string> outDir("out", cl::desc("Where the JSON and PNG go"),
                                   cl::init("bench-out"), cl::sub(benchCommand),
                                   cl::cat(category));
static cl::opt<std::string>
    dtypes("dtypes",
           cl::desc("Element types, e.g. f16,bf16,f32 (gemm: the "
                    "script's default when empty; spconv: keeps the "
                    "rows of these; --train: every row in each)"),
           cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string>
    shapes("shapes",
           cl::desc("gemm's shapes MxNxK;... (the script's default "
                    "when empty)"),
           cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string>
    rows("rows",
         cl::desc("spconv's rows scene/C/dtype;..., e.g. "
                  "shell128/64/f16;uniform500k@512/64/f16;lidar/32/f16 "
                  "(--train: scene/C, e.g. shell128/64;street/64; the "
                  "script's default when empty)"),
         cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<bool> quick("quick",
                           cl::desc("spconv: five rows, shorter timing "
                                    "(plans: 2,000 sizes a kernel, not "
                                    "20,000; "
                                    "--frames: two configs, fewer frames; "
                                    "--train: four rows, one dtype's first "
                                    "steps)"),
                           cl::sub(benchCommand), cl::cat(category));
static cl::opt<bool>
    frames("frames",
           cl::desc("spconv: a stream of scans of new sizes through maps "
                    "and layer stacks next to spconv-Triton and FlexGEMM, "
                    "then from a bundle with the JIT off, and the map "
                    "build next to FlexGEMM's neighbour cache "
                    "(scripts/bench/spconv_frames.py)"),
           cl::sub(benchCommand), cl::cat(category));
static cl::opt<bool>
    train("train",
          cl::desc("spconv: one training step (forward, dX, dW, db) of a "
                   "3x3x3 layer next to FlexGEMM, spconv-Triton and torch's "
                   "gather-then-GEMM, checked against float64, and each "
                   "one's first step in a fresh process "
                   "(scripts/bench/spconv_train.py)"),
          cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string>
    network("network",
            cl::desc("spconv: a network's forward and training step next to "
                     "spconv-Triton with the same state_dict, checked "
                     "against float64, and each one's first call in a fresh "
                     "process: spunet (scripts/bench/spconv_network.py)"),
            cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string>
    peers("peers",
          cl::desc("spconv --frames, --train, --network: the peers to run, "
                   "e.g. tilec,flexgemm (tilec always runs; the script's "
                   "default, every peer, when unset)"),
          cl::init(""), cl::sub(benchCommand), cl::cat(category));
static cl::opt<double>
    budgetS("budget-s",
            cl::desc("spconv: no row (--frames: no section; --train: no "
                     "row or first step) starts after this many seconds "
                     "(the script's default when unset)"),
            cl::sub(benchCommand), cl::cat(category));
static cl::opt<std::string> library(
    "lib",
    cl::desc(
        "libtilec_c.so, through which both launch tilec's kernels (default: "
        "<bin>/../lib/libtilec_c.so)"),
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
  if (std::string dir = rt::readEnvironment().benchDir; !dir.empty())
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

/// An error for the first of `options` given on the command line, which
/// `mode` does not take.
static llvm::Error refuseGiven(std::initializer_list<cl::Option *> options,
                               llvm::StringRef mode) {
  for (cl::Option *option : options)
    if (option->getNumOccurrences())
      return llvm::createStringError("--" + option->ArgStr +
                                     " is not an option of " + mode);
  return llvm::Error::success();
}

/// --quick and --budget-s, as every spconv run takes them.
static void appendRunLimits(std::vector<std::string> &args) {
  if (quick)
    args.push_back("--quick");
  if (budgetS.getNumOccurrences())
    args.insert(args.end(), {"--budget-s", std::to_string(budgetS)});
}

/// --peers, as the spconv runs with several peers take it.
static void appendPeers(std::vector<std::string> &args) {
  if (peers.getNumOccurrences())
    args.insert(args.end(), {"--peers", peers});
}

/// The script's own arguments: the options that the benchmark takes, and
/// an error for one that belongs to the other benchmark.
static llvm::Expected<std::vector<std::string>>
scriptArguments(const std::string &self) {
  auto misplaced = [](llvm::StringRef option, llvm::StringRef owner) {
    return llvm::createStringError("--" + option + " is " + owner +
                                   "'s option, not " + benchName + "'s");
  };
  // Both launch tilec's kernels through the C API. The library's place in
  // the build tree (build/bin, build/lib) and in the GPU bundle (bin, lib).
  std::string lib = library;
  if (lib.empty())
    lib = (llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)) +
           "/lib/libtilec_c.so")
              .str();
  if (!llvm::sys::fs::exists(lib))
    return llvm::createStringError("no C API library at " + lib + " (--lib)");
  std::vector<std::string> args = {"--lib", lib};
  if (benchName == "spconv" && !network.empty()) {
    if (network != "spunet")
      return llvm::createStringError("--network " + network +
                                     ": the networks are spunet");
    if (llvm::Error refused = refuseGiven(
            {&rows, &dtypes, &shapes, &train, &frames}, "spconv --network"))
      return std::move(refused);
    args.insert(args.end(), {"--network", network});
    appendRunLimits(args);
    appendPeers(args);
    return args;
  }
  if (benchName == "spconv" && frames) {
    // The frames run f16 3x3x3 stacks of their own: the table's row
    // choices do not apply.
    if (llvm::Error refused =
            refuseGiven({&rows, &dtypes, &shapes, &train}, "spconv --frames"))
      return std::move(refused);
    // The tilec that runs warmup and pack for the bundle stream.
    args.insert(args.end(), {"--tilec", self});
    appendRunLimits(args);
    appendPeers(args);
    return args;
  }
  if (!dtypes.empty())
    args.insert(args.end(), {"--dtypes", dtypes});
  if (benchName == "gemm") {
    for (cl::Option *option : std::initializer_list<cl::Option *>{
             &rows, &quick, &budgetS, &frames, &train, &network, &peers})
      if (option->getNumOccurrences())
        return misplaced(option->ArgStr, "spconv");
    args.insert(args.end(), {"--tilec", self});
    if (!shapes.empty())
      args.insert(args.end(), {"--shapes", shapes});
    return args;
  }
  if (train) {
    if (llvm::Error refused = refuseGiven({&shapes}, "spconv --train"))
      return std::move(refused);
    appendPeers(args);
  } else if (llvm::Error refused = refuseGiven({&peers}, "spconv")) {
    // The table's peers are every one installed.
    return std::move(refused);
  }
  if (shapes.getNumOccurrences())
    return misplaced(shapes.ArgStr, "gemm");
  if (!rows.empty())
    args.insert(args.end(), {"--rows", rows});
  appendRunLimits(args);
  return args;
}

int runBench(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runBench));
  if (benchName == "plans") {
    if (llvm::Error refused =
            refuseGiven({&dtypes, &shapes, &rows, &frames, &train, &network,
                         &budgetS, &library, &python, &peers, &storesFrom},
                        "plans"))
      return fail(llvm::toString(std::move(refused)));
    return runPlanBench(outDir, quick);
  }
  if (benchName == "stores") {
    if (llvm::Error refused =
            refuseGiven({&dtypes, &shapes, &rows, &frames, &train, &network,
                         &budgetS, &library, &python, &peers, &quick},
                        "stores"))
      return fail(llvm::toString(std::move(refused)));
    return runStoreBench(storesFrom, outDir);
  }
  if (storesFrom.getNumOccurrences())
    return fail("--from is an option of tilec bench stores");
  if (benchName != "gemm" && benchName != "spconv")
    return fail("unknown benchmark '" + benchName +
                "' (known: gemm, spconv, plans, stores)");
  std::string name = std::string(benchName);
  if (benchName == "spconv" && !network.empty())
    name = "spconv_network";
  else if (benchName == "spconv" && frames)
    name = "spconv_frames";
  else if (benchName == "spconv" && train)
    name = "spconv_train";
  std::string script = findScript(self, name);
  if (script.empty())
    return fail("scripts/bench/" + name + ".py not found next to " + self +
                " (set TILEC_BENCH_DIR)");
  auto interpreter = llvm::sys::findProgramByName(python);
  if (!interpreter)
    return fail("no '" + python + "' on PATH (--python)");
  auto own = scriptArguments(self);
  if (!own)
    return fail(llvm::toString(own.takeError()));
  std::vector<std::string> args = {*interpreter, script, "--out", outDir};
  args.insert(args.end(), own->begin(), own->end());
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*interpreter, argRefs, std::nullopt,
                                         {}, 0, 0, &error);
  if (status < 0)
    return fail("cannot run " + *interpreter + ": " + error);
  return status;
}

} // namespace tilec::tool
