//===- Pipeline.h - ttir -> ttgir -> llir -> ptx -> cubin -------*- C++ -*-===//
//
// The stages of a tilec compile, each producing one artifact a user can read:
// ttir (the tile dialect, canonical), ttgir (tilegpu, with layouts), llir
// (optimized LLVM IR), ptx, and cubin (ptxas, with its -v report parsed).
// With a stage cache (CompileOptions::cache) each stage first looks its
// artifact up by a key of everything it depends on (docs/cache.md).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_PIPELINE_PIPELINE_H
#define TILEC_PIPELINE_PIPELINE_H

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/Config.h"
#include "tilec/Target/CubinAssembler.h"
#include "tilec/Target/PTXEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tilec::rt {
class StageCache;
} // namespace tilec::rt

namespace tilec {

/// Registers every dialect a tilec compile reads or produces.
void registerPipelineDialects(mlir::DialectRegistry &registry);

struct CompileOptions {
  unsigned numWarps = 4;
  unsigned threadsPerWarp = 32;
  unsigned numStages = 1;
  /// The blocks an SM must hold at once (the kernel's .minnctapersm).
  unsigned minBlocksPerSM = 1;
  /// sm_XX; also the PTX and ptxas target.
  std::string target = "sm_90";
  PTXOptions ptx;
  CubinOptions cubin;
  /// Stop after PTX (no ptxas).
  bool skipCubin = false;
  /// Meta-parameters the ttir was specialized with; recorded in the json.
  std::map<std::string, int64_t> config;
  /// Type parameters the ttir was specialized with (DTYPE=f16); recorded in
  /// the json with `config`, so the json names the whole config.
  std::map<std::string, std::string> configTypes;
  /// The stage cache (docs/cache.md). Null, the default, compiles every
  /// stage and touches no disk, so that library users and tests are
  /// hermetic; `tilec compile` opens $TILEC_CACHE_DIR (~/.tilec/cache).
  std::shared_ptr<rt::StageCache> cache;
  /// Triton's debugging conventions (docs/environment.md): with dumpDir,
  /// every stage's artifact is also written to
  /// <dumpDir>/<kernel>-<id>/<kernel>.<stage> (and <kernel>.json), <id> the
  /// first 16 hex digits of the SHA-256 of the specialized input, the same
  /// for the same kernel, config and specialization in every process. With
  /// overrideDir, a stage whose file exists at the same place under it
  /// (ttir, ttgir, llir or ptx) takes that text instead of its own output,
  /// and the stages after it run on it. applyDebugEnvironment sets both
  /// from TILEC_DUMP_DIR and TILEC_OVERRIDE_DIR.
  std::string dumpDir, overrideDir;
  /// Called on each pass manager a stage runs (ttir, ttgir, llir), before
  /// it runs: `tilec compile` applies MLIR's --mlir-print-ir-* and
  /// --mlir-timing options there. Stages the cache serves run no passes.
  std::function<void(mlir::PassManager &)> configurePasses;

  /// A kernel's config, whole: its warps, stages, blocks an SM, meta-parameters
  /// and type parameters (what a specialized ttir was made with) into the
  /// fields above; the one place a Config becomes compile options.
  void setConfig(const Config &kernelConfig);

  /// Every field: those the ttgir stage reads key it, the rest say why they
  /// key nothing here.
  static constexpr auto fields();
};

constexpr auto CompileOptions::fields() {
  return std::make_tuple(
      keyedField("num_warps", &CompileOptions::numWarps, Stage::TTGIR),
      keyedField("threads_per_warp", &CompileOptions::threadsPerWarp,
                 Stage::TTGIR),
      // tilegpu-pipeline's ring depth.
      keyedField("num_stages", &CompileOptions::numStages, Stage::TTGIR),
      // The ttgir's tilegpu.min-blocks-per-sm.
      keyedField("min_blocks_per_sm", &CompileOptions::minBlocksPerSM,
                 Stage::TTGIR),
      // The later stages run with it as their chip (getStageOptions).
      keyedField("target", &CompileOptions::target, Stage::TTGIR),
      excludedField("ptx", &CompileOptions::ptx,
                    "the llir and ptx stages are keyed field by field by the "
                    "PTXOptions they run with (getStageOptions)"),
      excludedField("cubin", &CompileOptions::cubin,
                    "the cubin stage is keyed field by field by the "
                    "CubinOptions it runs with (getStageOptions)"),
      excludedField("skip_cubin", &CompileOptions::skipCubin,
                    "decides whether the cubin stage runs, not what any stage "
                    "makes"),
      excludedField("config", &CompileOptions::config,
                    "the input is already specialized to it, and its hash keys "
                    "the ttir; only the json records it"),
      excludedField("config_types", &CompileOptions::configTypes,
                    "the input is already specialized to them, and its hash "
                    "keys the ttir; only the json records them"),
      excludedField("cache", &CompileOptions::cache,
                    "where artifacts are kept, not what they are"),
      excludedField("dump_dir", &CompileOptions::dumpDir,
                    "where copies of the artifacts go, not what they are"),
      excludedField("configure_passes", &CompileOptions::configurePasses,
                    "instruments the passes (IR printing, timing); no "
                    "artifact changes"),
      excludedField("override_dir", &CompileOptions::overrideDir,
                    "an overridden stage's text keys the stages after it "
                    "(their input's hash); the override itself is never "
                    "stored"));
}
static_assert(
    listsEveryFieldOnce<CompileOptions>(),
    "CompileOptions::fields() must name every field of CompileOptions once");

/// Where a stage's artifact came from.
enum class CacheResult {
  /// No cache, or the stage cannot be keyed (e.g. no ptxas to identify).
  NotCached,
  Hit,
  /// Not in the local cache but in its shared tier (docs/shared-cache.md),
  /// which verified it and kept it locally.
  RemoteHit,
  Miss,
};

/// "hit", "remote hit", "miss" or "-".
const char *getCacheResultName(CacheResult result);

struct StageTiming {
  std::string stage;
  /// On a hit: computing the key and reading the entry.
  double milliseconds;
  CacheResult cache = CacheResult::NotCached;
  /// The stage's cache key; empty when not cached.
  std::string cacheKey;
};

struct KernelArgument {
  std::string name;
  /// "ptr<f16>", "i32", ...
  std::string type;
  /// What the kernel was specialized for (tile.divisibility, in bytes for a
  /// pointer; tile.equal_to_one): the runtime refuses values that break it.
  int64_t divisibility = 1;
  bool equalToOne = false;
};

/// Everything a compile produced.
struct CompiledKernel {
  std::string name;
  /// For the "interp" target (tilec/contract/InterpreterDevice.h) the
  /// stages stop after ttir and `cubin` is the interpreter device's image.
  std::string ttir, ttgir, llir, ptx, cubin;
  CubinInfo cubinInfo;
  /// Dynamic shared memory the kernel needs at launch, bytes.
  int64_t sharedBytes = 0;
  std::vector<KernelArgument> signature;
  /// The TMA tensor maps the kernel takes after its signature's arguments
  /// (tilegpu-pipeline's, read from the ttgir), named by the signature.
  std::vector<TensorMapParam> tensorMaps;
  std::vector<StageTiming> timings;
  CompileOptions options;
  /// With a dump or override directory: <kernel>-<id>, the compile's
  /// directory under each (CompileOptions::dumpDir), and the files whose
  /// text replaced a stage's output.
  std::string debugName;
  std::vector<std::string> overrides;

  /// The metadata written next to the artifacts (<name>.json), in the
  /// contract's schema.
  CompileMetadata metadata() const;
  /// metadata().toJson().
  std::string metadataJson() const;
};

/// ttir: canonicalize, cse, symbol-dce.
void buildTTIRPipeline(mlir::OpPassManager &pm);
/// ttgir: layouts, coalescing, layout-conversion removal, pipelining, shared
/// memory and barriers. The ttgir stage then checks the block's resources
/// (tilegpu-check-block-resources) on its own, so that a config past the
/// target's limits fails with blockResourcesExceeded().
void buildTTGIRPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// The error code of a compile that a config's block resources (shared
/// memory, registers) stop at the ttgir stage, before ptxas: the config does
/// not fit the target, the compiler is not at fault. It survives the
/// context compileKernel and the JIT add (withContext).
std::error_code blockResourcesExceeded();
/// What a stage's error says when the reason is in the diagnostics the
/// context's handler received (printed before the error by the tools; the
/// JIT puts them in its message instead).
constexpr llvm::StringLiteral kSeeDiagnostics = "see the diagnostics above";
/// `error` with its message (all of its errors', one a line) rewritten by
/// `rewrite`, its error code kept (createStringError with the first error
/// code found).
llvm::Error
mapErrorMessage(llvm::Error error,
                llvm::function_ref<std::string(std::string)> rewrite);
/// `error` with `prefix` and `suffix` around its message, its error code
/// kept.
llvm::Error withContext(llvm::Error error, const llvm::Twine &prefix,
                        const llvm::Twine &suffix = "");
/// ttgir -> LLVM + NVVM dialects.
void buildLLIRPipeline(mlir::OpPassManager &pm);

/// Runs every stage on `module` (ttir, one kernel). Diagnostics go to the
/// context's handler; failures return an error naming the stage.
///
/// Without a cache, `module` ends up lowered to the LLVM dialect. With one,
/// stages that hit are skipped and a stage that misses after a hit runs on
/// the previous stage's cached text, parsed into a new module: `module` is
/// then left in whatever state the stages that ran on it produced.
llvm::Expected<CompiledKernel> compileKernel(mlir::ModuleOp module,
                                             const CompileOptions &options);

/// Runs the stages after `after` on `text`, that stage's artifact read from
/// a file: Stage::LLIR (an .llir) runs ptx and cubin, Stage::PTX (a .ptx)
/// the cubin. The kernel is the text's one entry (`define ptx_kernel` /
/// `.entry`); its signature and shared memory are the ttir's to say, so
/// the result has none. `context` only anchors the compile's state.
llvm::Expected<CompiledKernel>
compileFromArtifact(mlir::MLIRContext &context, Stage after, std::string text,
                    const CompileOptions &options);

/// Sets options.dumpDir and options.overrideDir from TILEC_DUMP_DIR and
/// TILEC_OVERRIDE_DIR where those are set and non-empty and the options
/// have none: every compile path (tilec compile, the JIT behind tune,
/// warmup, run and the C API) calls it.
void applyDebugEnvironment(CompileOptions &options);

/// Identifies the compiler in metadata and cache keys:
/// "tilec-<version> llvm-<version>" followed by the identity of each binary
/// object that holds compiler code (the executable or shared library holding
/// the pipeline, and LLVM's): its GNU build-id when it has one (the linker's
/// hash of its contents), else the SHA-256 of its file. A rebuilt compiler
/// therefore never reuses the artifacts of the previous build. Computed once
/// per process.
std::string getCompilerId();

/// SHA-256 of `text`, hex.
std::string hashText(llvm::StringRef text);

} // namespace tilec

#endif // TILEC_PIPELINE_PIPELINE_H
