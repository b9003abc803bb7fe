//===- PackCommand.cpp - tilec pack, tilec bundle -------------------------===//
//
// tilec pack: the winners of the autotune cache and exactly their cubins,
// into one bundle file (and, with --emit-cpp, a C++ source to compile in).
// tilec bundle show | verify | emit-cpp: what a bundle holds, whether it is
// sound, and the C++ form of it. See docs/deploy.md.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/JIT/TilecJIT.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Bundle.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/FileIO.h"
#include "tilec/runtime/Pack.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/StageCache.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <map>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand packCommand("pack",
                           "Pack the autotune cache's winners and exactly "
                           "their cubins into a bundle");
cl::SubCommand bundleCommand("bundle",
                             "Inspect a bundle: show, verify, emit-cpp");

static cl::OptionCategory packCategory("tilec pack options");
static cl::opt<std::string>
    outputPath("o", cl::desc("The bundle file to write (default tilec.bundle)"),
               cl::init("tilec.bundle"), cl::sub(packCommand),
               cl::cat(packCategory));
// The aliased option's subcommand is the alias's.
static cl::alias outputPathLong("output", cl::desc("Alias for -o"),
                                cl::aliasopt(outputPath), cl::NotHidden,
                                cl::cat(packCategory));
static cl::opt<std::string> deviceName(
    "device",
    cl::desc("Only the winners tuned on this device (e.g. \"NVIDIA H200\"); "
             "default: every device in the autotune cache"),
    cl::init(""), cl::sub(packCommand), cl::cat(packCategory));
static cl::list<std::string>
    kernelNames("kernels", cl::desc("Only these kernels (comma-separated)"),
                cl::CommaSeparated, cl::sub(packCommand),
                cl::cat(packCategory));
static cl::opt<bool> noCompile(
    "no-compile",
    cl::desc("Report winners whose cubin the stage cache lost instead of "
             "recompiling them"),
    cl::sub(packCommand), cl::cat(packCategory));
static cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("The stage cache (default: $TILEC_CACHE_DIR, else "
                      "~/.tilec/cache)"),
             cl::init(""), cl::sub(packCommand), cl::cat(packCategory));
static cl::opt<std::string> emitCppDir(
    "emit-cpp",
    cl::desc("Also write <name>.h and <name>.cpp, the bundle as C++, here"),
    cl::init(""), cl::sub(packCommand), cl::cat(packCategory));

static cl::OptionCategory bundleCategory("tilec bundle options");
static cl::opt<std::string> bundleAction(cl::Positional,
                                         cl::desc("<show|verify|emit-cpp>"),
                                         cl::init(""), cl::sub(bundleCommand),
                                         cl::cat(bundleCategory));
static cl::opt<std::string> bundlePath(cl::Positional, cl::desc("<bundle>"),
                                       cl::init(""), cl::sub(bundleCommand),
                                       cl::cat(bundleCategory));
static cl::opt<std::string> targetName(
    "target",
    cl::desc("verify: also check that the bundle serves this target (sm_90)"),
    cl::init(""), cl::sub(bundleCommand), cl::cat(bundleCategory));
static cl::opt<std::string>
    showJson("json",
             cl::desc("show: also write what it prints as JSON to "
                      "this file"),
             cl::init(""), cl::sub(bundleCommand), cl::cat(bundleCategory));
static cl::opt<std::string> outDir("out-dir",
                                   cl::desc("emit-cpp: the output directory"),
                                   cl::init("."), cl::sub(bundleCommand),
                                   cl::cat(bundleCategory));

// The C identifier of the emitted source, for both commands: one category
// of its own, so that each command's help lists it once.
static cl::OptionCategory emitCategory("tilec pack --emit-cpp and tilec "
                                       "bundle emit-cpp options");
static cl::opt<std::string>
    sourceName("name",
               cl::desc("The C identifier of the emitted bundle (default "
                        "tilec_bundle)"),
               cl::init("tilec_bundle"), cl::sub(packCommand),
               cl::sub(bundleCommand), cl::cat(emitCategory));

static int fail(const char *command, const llvm::Twine &message) {
  llvm::errs() << "tilec " << command << ": error: " << message << "\n";
  return 1;
}

static Status emitCpp(const rt::KernelBundle &bundle, const std::string &dir) {
  Result<rt::EmbeddedSource> source = rt::emitEmbeddedBundle(bundle, sourceName);
  if (!source)
    return source.status();
  TILEC_RETURN_IF_ERROR(rt::makeDirectories(dir));
  for (const auto &[suffix, text] :
       {std::pair{".h", &source->header}, std::pair{".cpp", &source->source}}) {
    std::string path = dir + "/" + sourceName + suffix;
    TILEC_RETURN_IF_ERROR(rt::writeFileAtomically(path, *text));
    llvm::outs() << "wrote " << path << " ("
                 << rt::formatByteSize(text->size()) << ")\n";
  }
  return Status::success();
}

// The stage cache's size, and its cubins' size, for the size report.
static std::string cacheSizeReport(rt::StageCache &cache, uint64_t bundleBytes) {
  Result<rt::CacheStats> stats = cache.stats();
  if (!stats)
    return "";
  uint64_t total = 0, cubins = 0, cubinEntries = 0;
  for (const rt::CacheStats::Stage &stage : stats->stages) {
    total += stage.bytes;
    if (stage.name == "cubin") {
      cubins = stage.bytes;
      cubinEntries = stage.entries;
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the stage cache " << cache.directory() << " holds "
     << rt::formatByteSize(total) << " (its " << cubinEntries << " cubins "
     << rt::formatByteSize(cubins) << ")";
  if (total > 0)
    os << llvm::format("; the bundle is %.1f%% of it",
                       100.0 * double(bundleBytes) / double(total));
  return text;
}

int runPack() {
  rt::AutotuneCache autotuneCache(rt::readEnvironment().autotuneCachePath(),
                                  rt::RemoteCache::fromEnvironment());
  if (Status status = autotuneCache.load(); !status.ok())
    return fail("pack", status.message());
  auto stageCache = std::make_shared<rt::StageCache>(
      cacheDir.empty() ? rt::readEnvironment().stageCacheDirectory()
                       : std::string(cacheDir),
      rt::RemoteCache::fromEnvironment());
  jit::JITOptions jitOptions;
  jitOptions.cache = stageCache;
  jit::TilecJIT compiler(jitOptions);
  rt::PackOptions options;
  options.recompile = !noCompile;
  options.device = deviceName;
  options.kernels.assign(kernelNames.begin(), kernelNames.end());
  options.packedBy = getCompilerId();
  Result<rt::PackResult> packed = rt::packBundle(
      autotuneCache, stageCache.get(), &compiler, options);
  if (!packed)
    return fail("pack", packed.message());
  std::string bytes = rt::KernelBundle::encode(packed->contents);
  if (Status status = rt::writeFileAtomically(outputPath, bytes); !status.ok())
    return fail("pack", status.message());
  // Read back what was written, with every check a program makes.
  Result<std::shared_ptr<const rt::KernelBundle>> bundle =
      rt::KernelBundle::open(outputPath);
  if (!bundle)
    return fail("pack", "the bundle written does not read back: " +
                            bundle.message());
  std::map<std::string, int> sources;
  for (const rt::PackedWinner &winner : packed->winners) {
    llvm::outs() << "  " << winner.device << "  " << winner.kernel << "  "
                 << winner.key << "\n      " << winner.config << "  ("
                 << winner.source << ")\n";
    ++sources[winner.source];
  }
  // Winners no call of this build looks up: their cubins could stand in
  // for the current kernel's of the same config, so they stay out.
  for (const rt::PackedWinner &winner : packed->stale)
    llvm::outs() << "  " << winner.device << "  " << winner.kernel << "  "
                 << winner.key << "\n      left out: its key predates the "
                 << "kernel's current autotune key\n";
  llvm::outs() << "packed " << packed->winners.size() << " winners, "
               << (*bundle)->cubins().size() << " cubins ("
               << rt::formatByteSize((*bundle)->cubinBytesTotal()) << "; ";
  bool first = true;
  for (const auto &[source, count] : sources) {
    llvm::outs() << (first ? "" : ", ") << count << " " << source;
    first = false;
  }
  llvm::outs() << ") into " << outputPath << ": "
               << rt::formatByteSize(bytes.size()) << "\n"
               << cacheSizeReport(*stageCache, bytes.size()) << "\n";
  if (!emitCppDir.empty())
    if (Status status = emitCpp(**bundle, emitCppDir); !status.ok())
      return fail("pack", status.message());
  return 0;
}

static void showBundle(const rt::KernelBundle &bundle) {
  llvm::outs() << bundle.origin() << ": "
               << rt::formatByteSize(bundle.fileBytes()) << ", "
               << bundle.kernels().size() << " kernels, "
               << bundle.cubins().size() << " cubins ("
               << rt::formatByteSize(bundle.cubinBytesTotal()) << "), "
               << bundle.selections().size() << " selections\n"
               << "packed " << bundle.createdAt() << " by " << bundle.packedBy()
               << "\n";
  for (const rt::BundleSelection &selection : bundle.selections()) {
    const rt::BundleCubin &cubin = bundle.cubins()[selection.cubin];
    llvm::outs() << "  " << selection.device << " (" << selection.target
                 << ")  " << selection.kernel << "  " << selection.key
                 << "\n      " << cubin.config << "  cubin " << selection.cubin
                 << " " << rt::formatByteSize(cubin.bytes.size());
    if (selection.medianUs > 0)
      llvm::outs() << llvm::format("  %.1f us", selection.medianUs);
    llvm::outs() << "\n";
  }
}

// show --json: the bundle's summary and one object per selection.
static Status writeShowJson(const rt::KernelBundle &bundle) {
  nlohmann::ordered_json json;
  json["bundle"] = bundle.origin();
  json["bytes"] = bundle.fileBytes();
  json["kernels"] = bundle.kernels().size();
  json["cubins"] = bundle.cubins().size();
  json["cubin_bytes"] = bundle.cubinBytesTotal();
  json["created_at"] = bundle.createdAt();
  json["packed_by"] = bundle.packedBy();
  json["selections"] = nlohmann::ordered_json::array();
  for (const rt::BundleSelection &selection : bundle.selections()) {
    const rt::BundleCubin &cubin = bundle.cubins()[selection.cubin];
    json["selections"].push_back({{"device", selection.device},
                                  {"target", selection.target},
                                  {"kernel", selection.kernel},
                                  {"key", selection.key},
                                  {"config", cubin.config},
                                  {"cubin", selection.cubin},
                                  {"cubin_bytes", cubin.bytes.size()},
                                  {"median_us", selection.medianUs}});
  }
  return rt::writeFileAtomically(showJson.getValue(), json.dump(2) + "\n");
}

int runBundle() {
  if (bundleAction != "show" && bundleAction != "verify" &&
      bundleAction != "emit-cpp")
    return fail("bundle", "the action must be show, verify or emit-cpp, got '" +
                              bundleAction + "'");
  if (bundlePath.empty())
    return fail("bundle", "no bundle file given");
  Result<std::shared_ptr<const rt::KernelBundle>> bundle =
      rt::KernelBundle::open(bundlePath);
  if (!bundle)
    return fail("bundle", bundle.message());
  if (bundleAction == "show") {
    showBundle(**bundle);
    if (!showJson.empty())
      if (Status status = writeShowJson(**bundle); !status.ok())
        return fail("bundle", status.message());
    return 0;
  }
  if (bundleAction == "emit-cpp") {
    if (Status status = emitCpp(**bundle, outDir); !status.ok())
      return fail("bundle", status.message());
    return 0;
  }
  if (!targetName.empty())
    if (Status status = (*bundle)->checkTarget(targetName); !status.ok())
      return fail("bundle", status.message());
  for (const rt::BundleKernel &kernel : (*bundle)->kernels())
    if (auto description = (*bundle)->description(kernel.name); !description)
      return fail("bundle", description.message());
  llvm::outs() << (*bundle)->origin() << ": ok ("
               << (*bundle)->cubins().size() << " cubins, "
               << (*bundle)->selections().size()
               << " selections, every checksum matches)\n";
  return 0;
}

} // namespace tilec::tool
