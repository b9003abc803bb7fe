//===- Pipeline.cpp - ttir -> ttgir -> llir -> ptx -> cubin ---------------===//

#include "tilec/Pipeline/Pipeline.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"
#include "tilec/Dialect/TileGPU/Transforms/Passes.h"
#include "tilec/runtime/StageCache.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <link.h>

#include <chrono>
#include <cstring>
#include <mutex>

using namespace mlir;

namespace tilec {

void registerPipelineDialects(DialectRegistry &registry) {
  registry.insert<tile::TileDialect, tilegpu::TileGPUDialect,
                  arith::ArithDialect, func::FuncDialect, math::MathDialect,
                  scf::SCFDialect, cf::ControlFlowDialect, LLVM::LLVMDialect,
                  NVVM::NVVMDialect>();
  registerPTXTranslations(registry);
}

void buildTTIRPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSymbolDCEPass());
}

void buildTTGIRPipeline(OpPassManager &pm, const CompileOptions &options) {
  ConvertTileToTileGPUOptions layoutOptions;
  layoutOptions.numWarps = options.numWarps;
  layoutOptions.threadsPerWarp = options.threadsPerWarp;
  layoutOptions.target = options.target;
  pm.addPass(createConvertTileToTileGPU(layoutOptions));
  pm.addPass(tilegpu::createTileGPUCoalesce());
  pm.addPass(tilegpu::createTileGPURemoveLayoutConversions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTileGPUCheckBlockResources());
}

void buildLLIRPipeline(OpPassManager &pm) {
  pm.addPass(createConvertTileGPUToLLVM());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

std::string hashText(llvm::StringRef text) {
  // The runtime's SHA-256: the same digest as llvm::SHA256, and the one the
  // cache checks its entries with.
  return rt::Sha256::hashHex(std::string_view(text.data(), text.size()));
}

namespace {
/// What dl_iterate_phdr found for one code address.
struct LoadedObject {
  const void *address;
  bool found = false;
  std::string path;
  std::string buildId;
};
} // namespace

/// The GNU build-id note of a loaded object, hex; empty when it has none.
static std::string readBuildId(const dl_phdr_info *info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info->dlpi_phdr[i];
    if (header.p_type != PT_NOTE)
      continue;
    const char *note =
        reinterpret_cast<const char *>(info->dlpi_addr + header.p_vaddr);
    const char *end = note + header.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      const auto *nhdr = reinterpret_cast<const ElfW(Nhdr) *>(note);
      const char *name = note + sizeof(ElfW(Nhdr));
      const char *desc = name + llvm::alignTo(nhdr->n_namesz, 4);
      if (nhdr->n_type == NT_GNU_BUILD_ID && nhdr->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && desc + nhdr->n_descsz <= end)
        return llvm::toHex(
            llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(desc),
                                    nhdr->n_descsz),
            /*LowerCase=*/true);
      note = desc + llvm::alignTo(nhdr->n_descsz, 4);
    }
  }
  return "";
}

static int findObject(dl_phdr_info *info, size_t, void *data) {
  auto *object = static_cast<LoadedObject *>(data);
  auto address = reinterpret_cast<uintptr_t>(object->address);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD && address >= start &&
        address < start + header.p_memsz) {
      object->found = true;
      // The main executable has an empty name.
      object->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name
                                                         : "/proc/self/exe";
      object->buildId = readBuildId(info);
      return 1;
    }
  }
  return 0;
}

/// "build-id:<hex>" of the object holding `address`, else "sha256:<hex>" of
/// its file; hashing a large binary costs tens of milliseconds, the note
/// nothing.
static std::string getObjectIdentity(const void *address) {
  LoadedObject object{address};
  dl_iterate_phdr(findObject, &object);
  if (!object.found)
    return "unknown-object";
  if (!object.buildId.empty())
    return "build-id:" + object.buildId;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(object.path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return "unreadable:" + object.path;
  return "sha256:" + hashText((*file)->getBuffer());
}

std::string getCompilerId() {
  static const std::string id = [] {
    std::string text =
        std::string("tilec-" TILEC_VERSION " llvm-") + LLVM_VERSION_STRING;
    // The pipeline's own object (tilec, or a shared library embedding it),
    // then LLVM's (libLLVM.so when linked dynamically); each once.
    std::vector<std::string> seen;
    for (const void *address :
         {reinterpret_cast<const void *>(&getCompilerId),
          reinterpret_cast<const void *>(&llvm::SHA256::hash),
          reinterpret_cast<const void *>(
              static_cast<std::unique_ptr<Pass> (*)()>(
                  &mlir::createCanonicalizerPass))}) {
      std::string identity = getObjectIdentity(address);
      if (llvm::is_contained(seen, identity))
        continue;
      seen.push_back(identity);
      text += " " + identity;
    }
    return text;
  }();
  return id;
}

const char *getCacheResultName(CacheResult result) {
  switch (result) {
  case CacheResult::Hit:
    return "hit";
  case CacheResult::Miss:
    return "miss";
  case CacheResult::NotCached:
    break;
  }
  return "-";
}

/// The output of `<ptxas> --version`, which names the toolkit build; empty
/// when ptxas cannot be found or run (the cubin stage then runs uncached and
/// reports the problem itself). Run once per ptxas per process.
static std::string getPtxasVersion(const CubinOptions &options) {
  if (options.backend != CubinBackend::Ptxas)
    return "";
  llvm::Expected<std::string> ptxas = findPtxas(options.ptxasPath);
  if (!ptxas) {
    llvm::consumeError(ptxas.takeError());
    return "";
  }
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = versions.try_emplace(*ptxas);
  if (!inserted)
    return it->second;
  llvm::SmallString<128> output;
  if (llvm::sys::fs::createTemporaryFile("tilec-ptxas-version", "txt", output))
    return "";
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(output), llvm::StringRef(output)};
  int status = llvm::sys::ExecuteAndWait(*ptxas, {*ptxas, "--version"},
                                         std::nullopt, redirects,
                                         /*SecondsToWait=*/30);
  auto text = llvm::MemoryBuffer::getFile(output);
  llvm::sys::fs::remove(output);
  if (status == 0 && text)
    it->second = (*text)->getBuffer().trim().str();
  return it->second;
}

/// SHA-256 of the libdevice file the llir stage would link, "none" when
/// none is configured or it does not exist (a module that needs it then fails
/// uncached, with the reason). Hashed once per path per process.
static std::string getLibdeviceIdentity(const PTXOptions &options) {
  std::string path = resolveLibdevicePath(options);
  if (path.empty())
    return "none";
  static std::mutex mutex;
  static std::map<std::string, std::string> identities;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = identities.try_emplace(path);
  if (inserted) {
    auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    it->second = file ? hashText((*file)->getBuffer()) : "none";
  }
  return it->second;
}

static std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

static std::string typeSpelling(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto ptr = dyn_cast<tile::PointerType>(type)) {
    os << "ptr<";
    ptr.getPointeeType().print(os);
    os << ">";
  } else {
    type.print(os);
  }
  return text;
}

namespace {
/// Times one stage and records it.
class StageTimer {
public:
  StageTimer(std::vector<StageTiming> &timings, std::string stage)
      : timings(timings), stage(std::move(stage)),
        start(std::chrono::steady_clock::now()) {}
  ~StageTimer() {
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    timings.push_back({stage, elapsed.count(), cache, cacheKey});
  }
  void setCache(CacheResult result, std::string key) {
    cache = result;
    cacheKey = std::move(key);
  }

private:
  std::vector<StageTiming> &timings;
  std::string stage;
  std::chrono::steady_clock::time_point start;
  CacheResult cache = CacheResult::NotCached;
  std::string cacheKey;
};
} // namespace

static llvm::Error stageError(llvm::StringRef stage, llvm::StringRef detail) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "stage " + stage + " failed: " + detail);
}

llvm::Expected<CompiledKernel> compileKernel(ModuleOp module,
                                             const CompileOptions &options) {
  CompiledKernel result;
  result.options = options;
  MLIRContext *context = module.getContext();

  SmallVector<func::FuncOp> kernels;
  module.walk([&](func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::getKernelAttrName()))
      kernels.push_back(func);
  });
  if (kernels.size() != 1)
    return stageError("ttir", "the module must hold exactly one func.func "
                              "with 'tile.kernel', found " +
                                  std::to_string(kernels.size()));
  func::FuncOp kernel = kernels.front();
  result.name = kernel.getSymName().str();
  for (auto [index, type] :
       llvm::enumerate(kernel.getFunctionType().getInputs())) {
    std::string name = "arg" + std::to_string(index);
    if (auto loc = dyn_cast<NameLoc>(kernel.getArgument(index).getLoc()))
      name = loc.getName().str();
    KernelArgument argument{name, typeSpelling(type)};
    if (auto divisibility = kernel.getArgAttrOfType<IntegerAttr>(
            index, tile::TileDialect::getDivisibilityAttrName()))
      argument.divisibility = divisibility.getInt();
    argument.equalToOne = static_cast<bool>(
        kernel.getArgAttr(index, tile::TileDialect::getEqualToOneAttrName()));
    result.signature.push_back(std::move(argument));
  }

  rt::StageCache *cache = options.cache.get();
  std::string compilerId = cache ? getCompilerId() : "";

  // The module the next MLIR stage runs on and the stage whose output it
  // holds. After a hit the module is behind; a later miss parses the cached
  // text of the stage before it.
  ModuleOp current = module;
  std::string currentStage = "input";
  OwningOpRef<ModuleOp> reparsed;
  auto moduleAfter = [&](llvm::StringRef stage,
                         const std::string &text) -> llvm::Error {
    if (currentStage == stage)
      return llvm::Error::success();
    ParserConfig config(context);
    reparsed =
        parseSourceString<ModuleOp>(text, config, ("cached-" + stage).str());
    if (!reparsed)
      return stageError(stage, ("cannot parse the cached " + stage +
                                " artifact (see the diagnostics above); run "
                                "`tilec cache clear` or use --no-cache")
                                   .str());
    current = *reparsed;
    currentStage = stage.str();
    return llvm::Error::success();
  };

  // SHA-256 of the artifacts that came from the cache, checked on read:
  // the next key needs no second pass over them.
  std::map<std::string, std::string> cachedHashes;
  auto hashOf = [&](llvm::StringRef stage, const std::string &artifact) {
    auto it = cachedHashes.find(stage.str());
    return it != cachedHashes.end() ? it->second : hashText(artifact);
  };

  // Runs one stage: with a cache, `makeKey` names the artifact, and a hit
  // fills `artifact` (and `meta`) unless `acceptHit` rejects the entry's
  // meta; `compute` runs on a miss and its result is stored. An empty key
  // runs the stage uncached.
  auto runStage = [&](llvm::StringRef stage,
                      function_ref<std::string()> makeKey,
                      std::string &artifact, std::string *meta,
                      function_ref<bool(const std::string &meta)> acceptHit,
                      function_ref<llvm::Error()> compute) -> llvm::Error {
    StageTimer timer(result.timings, stage.str());
    std::string key = cache ? makeKey() : "";
    if (!key.empty()) {
      if (std::optional<rt::CacheArtifact> hit = cache->lookup(stage, key)) {
        if (!acceptHit || acceptHit(hit->meta)) {
          artifact = std::move(hit->payload);
          if (meta)
            *meta = std::move(hit->meta);
          cachedHashes[stage.str()] = std::move(hit->payloadSha256);
          timer.setCache(CacheResult::Hit, key);
          return llvm::Error::success();
        }
      }
    }
    if (llvm::Error error = compute())
      return error;
    if (!key.empty()) {
      cache->store(stage, key, artifact, meta ? *meta : "");
      timer.setCache(CacheResult::Miss, key);
    }
    return llvm::Error::success();
  };

  auto runPasses = [&](llvm::StringRef stage,
                       function_ref<void(OpPassManager &)> build,
                       std::string &artifact) -> llvm::Error {
    PassManager pm(context);
    build(pm);
    if (failed(pm.run(current)))
      return stageError(stage, "see the diagnostics above");
    artifact = printModule(current);
    currentStage = stage.str();
    return llvm::Error::success();
  };

  // ttir: keyed by the input as printed (without locations: moving a kernel
  // within its file must not miss).
  if (auto error = runStage(
          "ttir",
          [&] {
            return rt::CacheKey("ttir")
                .add("compiler", compilerId)
                .add("input", hashText(printModule(module)))
                .str();
          },
          result.ttir, nullptr, nullptr,
          [&] {
            return runPasses(
                "ttir", [](OpPassManager &pm) { buildTTIRPipeline(pm); },
                result.ttir);
          }))
    return std::move(error);

  if (auto error = runStage(
          "ttgir",
          [&] {
            return rt::CacheKey("ttgir")
                .add("compiler", compilerId)
                .add("ttir", hashOf("ttir", result.ttir))
                .add("num_warps", int64_t(options.numWarps))
                .add("threads_per_warp", int64_t(options.threadsPerWarp))
                .add("target", options.target)
                .add("num_stages", int64_t(options.numStages))
                .str();
          },
          result.ttgir, nullptr, nullptr,
          [&]() -> llvm::Error {
            if (auto error = moduleAfter("ttir", result.ttir))
              return error;
            return runPasses(
                "ttgir",
                [&](OpPassManager &pm) { buildTTGIRPipeline(pm, options); },
                result.ttgir);
          }))
    return std::move(error);

  PTXOptions ptxOptions = options.ptx;
  ptxOptions.chip = options.target;
  // Everything in PTXOptions reaches the target machine that the llir
  // stage's pass pipeline queries, so all of it keys the llir.
  auto addCodegenOptions = [&](rt::CacheKey &key) {
    key.add("chip", ptxOptions.chip)
        .add("features", ptxOptions.features)
        .add("opt_level", int64_t(ptxOptions.optLevel))
        .add("llvm_passes", ptxOptions.llvmPasses.empty()
                                ? std::string(kKernelPassPipeline)
                                : ptxOptions.llvmPasses)
        .add("fast_fp_contraction", int64_t(ptxOptions.fastFPContraction));
  };
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  std::string llirMeta;
  if (auto error = runStage(
          "llir",
          [&] {
            rt::CacheKey key("llir");
            key.add("compiler", compilerId)
                .add("ttgir", hashOf("ttgir", result.ttgir));
            addCodegenOptions(key);
            key.add("flush_denormals", int64_t(ptxOptions.flushDenormals))
                .add("libdevice", getLibdeviceIdentity(ptxOptions));
            return key.str();
          },
          result.llir, &llirMeta,
          [&](const std::string &meta) {
            auto json = nlohmann::json::parse(meta, nullptr,
                                              /*allow_exceptions=*/false);
            if (!json.is_object() || !json.contains("shared_bytes") ||
                !json["shared_bytes"].is_number_integer())
              return false;
            result.sharedBytes = json["shared_bytes"].get<int64_t>();
            return true;
          },
          [&]() -> llvm::Error {
            if (auto error = moduleAfter("ttgir", result.ttgir))
              return error;
            PassManager pm(context);
            buildLLIRPipeline(pm);
            if (failed(pm.run(current)))
              return stageError("llir", "see the diagnostics above");
            currentStage = "llvm-dialect";
            if (auto shared = current->getAttrOfType<IntegerAttr>(
                    tilegpu::TileGPUDialect::getSharedAttrName()))
              result.sharedBytes = shared.getInt();
            auto translated = translateToLLVMIR(current, llvmContext);
            if (!translated)
              return stageError("llir", llvm::toString(translated.takeError()));
            llvmModule = std::move(*translated);
            if (auto error = optimizeLLVMModule(*llvmModule, ptxOptions))
              return stageError("llir", llvm::toString(std::move(error)));
            result.llir = printLLVMIR(*llvmModule);
            nlohmann::ordered_json meta;
            meta["shared_bytes"] = result.sharedBytes;
            llirMeta = meta.dump();
            return llvm::Error::success();
          }))
    return std::move(error);

  if (auto error = runStage(
          "ptx",
          [&] {
            rt::CacheKey key("ptx");
            key.add("compiler", compilerId)
                .add("llir", hashOf("llir", result.llir));
            addCodegenOptions(key);
            return key.str();
          },
          result.ptx, nullptr, nullptr,
          [&]() -> llvm::Error {
            if (!llvmModule) {
              // The llir came from the cache.
              llvm::SMDiagnostic diagnostic;
              llvmModule = llvm::parseAssemblyString(result.llir, diagnostic,
                                                     llvmContext);
              if (!llvmModule) {
                std::string message;
                llvm::raw_string_ostream os(message);
                diagnostic.print("cached-llir", os, /*ShowColors=*/false);
                return stageError("ptx",
                                  "cannot parse the cached llir: " + message);
              }
            }
            auto ptx = emitPTX(*llvmModule, ptxOptions);
            if (!ptx)
              return stageError("ptx", llvm::toString(ptx.takeError()));
            result.ptx = std::move(*ptx);
            return llvm::Error::success();
          }))
    return std::move(error);

  if (options.skipCubin)
    return result;

  CubinOptions cubinOptions = options.cubin;
  cubinOptions.chip = options.target;
  cubinOptions.kernelName = result.name;
  std::string cubinMeta;
  if (auto error = runStage(
          "cubin",
          [&]() -> std::string {
            // Without a ptxas to identify, the cubin cannot be keyed.
            std::string ptxasVersion = getPtxasVersion(cubinOptions);
            if (ptxasVersion.empty())
              return "";
            rt::CacheKey key("cubin");
            key.add("compiler", compilerId)
                .add("ptx", hashOf("ptx", result.ptx))
                .add("chip", cubinOptions.chip)
                .add("opt_level", int64_t(cubinOptions.optLevel))
                .add("kernel", cubinOptions.kernelName)
                .add("ptxas", ptxasVersion)
                .add("flags", int64_t(cubinOptions.extraFlags.size()));
            for (const std::string &flag : cubinOptions.extraFlags)
              key.add("flag", flag);
            return key.str();
          },
          result.cubin, &cubinMeta,
          [&](const std::string &meta) {
            auto json = nlohmann::json::parse(meta, nullptr,
                                              /*allow_exceptions=*/false);
            if (!json.is_object())
              return false;
            CubinInfo &info = result.cubinInfo;
            auto read = [&](const char *name, auto &field) {
              if (!json.contains(name) || !json[name].is_number_unsigned())
                return false;
              field = json[name].get<std::decay_t<decltype(field)>>();
              return true;
            };
            return read("registers", info.registers) &&
                   read("barriers", info.barriers) &&
                   read("shared_static_bytes", info.sharedStaticBytes) &&
                   read("spill_store_bytes", info.spillStoreBytes) &&
                   read("spill_load_bytes", info.spillLoadBytes) &&
                   read("stack_frame_bytes", info.stackFrameBytes) &&
                   read("const_bytes", info.constBytes);
          },
          [&]() -> llvm::Error {
            auto cubin = assembleCubin(result.ptx, cubinOptions);
            if (!cubin)
              return stageError("cubin", llvm::toString(cubin.takeError()));
            result.cubin = std::move(cubin->cubin);
            result.cubinInfo = cubin->info;
            const CubinInfo &info = result.cubinInfo;
            nlohmann::ordered_json meta;
            meta["registers"] = info.registers;
            meta["barriers"] = info.barriers;
            meta["shared_static_bytes"] = info.sharedStaticBytes;
            meta["spill_store_bytes"] = info.spillStoreBytes;
            meta["spill_load_bytes"] = info.spillLoadBytes;
            meta["stack_frame_bytes"] = info.stackFrameBytes;
            meta["const_bytes"] = info.constBytes;
            cubinMeta = meta.dump();
            return llvm::Error::success();
          }))
    return std::move(error);
  return result;
}

std::string CompiledKernel::metadataJson() const {
  nlohmann::ordered_json json;
  json["name"] = name;
  json["kernel_name"] = name;
  json["target"] = options.target;
  json["num_warps"] = options.numWarps;
  json["threads_per_warp"] = options.threadsPerWarp;
  json["num_stages"] = options.numStages;
  json["shared_bytes"] = sharedBytes;
  json["registers"] = cubinInfo.registers;
  json["spill_stores"] = cubinInfo.spillStoreBytes;
  json["spill_loads"] = cubinInfo.spillLoadBytes;
  json["stack_frame_bytes"] = cubinInfo.stackFrameBytes;
  json["config"] = nlohmann::ordered_json::object();
  for (const auto &[key, value] : options.config)
    json["config"][key] = value;
  json["signature"] = nlohmann::ordered_json::array();
  for (const KernelArgument &arg : signature) {
    nlohmann::ordered_json entry = {{"name", arg.name}, {"type", arg.type}};
    if (arg.divisibility > 1)
      entry["divisibility"] = arg.divisibility;
    if (arg.equalToOne)
      entry["equal_to_one"] = true;
    json["signature"].push_back(std::move(entry));
  }
  nlohmann::ordered_json hashes;
  hashes["ttir"] = hashText(ttir);
  hashes["ttgir"] = hashText(ttgir);
  hashes["llir"] = hashText(llir);
  hashes["ptx"] = hashText(ptx);
  if (!cubin.empty())
    hashes["cubin"] = hashText(cubin);
  json["hashes"] = hashes;
  json["compiler_id"] = getCompilerId();
  nlohmann::ordered_json stageTimes;
  for (const StageTiming &timing : timings)
    stageTimes[timing.stage] = timing.milliseconds;
  json["compile_ms"] = stageTimes;
  // Each stage's cache key (what `tilec pack` looks cubins up by) and
  // whether this compile found it.
  nlohmann::ordered_json cacheJson = nlohmann::ordered_json::object();
  for (const StageTiming &timing : timings)
    if (timing.cache != CacheResult::NotCached)
      cacheJson[timing.stage] = {{"key", timing.cacheKey},
                                 {"result", getCacheResultName(timing.cache)}};
  if (!cacheJson.empty())
    json["cache"] = cacheJson;
  return json.dump(2) + "\n";
}

} // namespace tilec
