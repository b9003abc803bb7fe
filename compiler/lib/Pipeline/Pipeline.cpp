//===- Pipeline.cpp - ttir -> ttgir -> llir -> ptx -> cubin ---------------===//

#include "tilec/Pipeline/Pipeline.h"
#include "tilec/Pipeline/StageKey.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Conversion/TileGPUToLLVM/BlockResources.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"
#include "tilec/Dialect/TileGPU/Transforms/Passes.h"
#include "tilec/contract/InterpreterDevice.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/FileIO.h"
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
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <link.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

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
  layoutOptions.numStages = options.numStages;
  layoutOptions.minBlocksPerSM = options.minBlocksPerSM;
  pm.addPass(createConvertTileToTileGPU(layoutOptions));
  pm.addPass(tilegpu::createTileGPUCoalesce());
  pm.addPass(tilegpu::createTileGPURemoveLayoutConversions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  tilegpu::TileGPUPipelineOptions pipelineOptions;
  pipelineOptions.numStages = options.numStages;
  pm.addPass(tilegpu::createTileGPUPipeline(pipelineOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(tilegpu::createTileGPUAllocateSharedMemory());
  pm.addPass(tilegpu::createTileGPUInsertBarriers());
}

namespace {
/// The pipeline's own error codes.
class PipelineErrorCategory : public std::error_category {
public:
  const char *name() const noexcept override { return "tilec-pipeline"; }
  std::string message(int) const override {
    return "the config needs more block resources than the target has";
  }
};
} // namespace

std::error_code blockResourcesExceeded() {
  static const PipelineErrorCategory category;
  return {1, category};
}

llvm::Error
mapErrorMessage(llvm::Error error,
                llvm::function_ref<std::string(std::string)> rewrite) {
  std::optional<std::error_code> code;
  std::string message;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &info) {
    if (!code)
      code = info.convertToErrorCode();
    message += (message.empty() ? "" : "\n") + info.message();
  });
  return llvm::createStringError(code.value_or(llvm::inconvertibleErrorCode()),
                                 rewrite(std::move(message)));
}

llvm::Error withContext(llvm::Error error, const llvm::Twine &prefix,
                        const llvm::Twine &suffix) {
  return mapErrorMessage(std::move(error), [&](std::string message) {
    return (prefix + message + suffix).str();
  });
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
  case CacheResult::RemoteHit:
    return "remote hit";
  case CacheResult::Miss:
    return "miss";
  case CacheResult::NotCached:
    break;
  }
  return "-";
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

static llvm::Error stageError(llvm::StringRef stage, llvm::StringRef detail) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "stage " + stage + " failed: " + detail);
}
static llvm::Error stageError(llvm::StringRef stage, llvm::Error error) {
  return withContext(std::move(error), "stage " + stage + " failed: ");
}

/// What went wrong inside a stage; the driver names the stage.
static llvm::Error makeError(const llvm::Twine &detail) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), detail);
}

/// Finds the one kernel of `module` and records its name and signature.
static llvm::Error readKernel(ModuleOp module, CompiledKernel &result) {
  SmallVector<func::FuncOp> kernels;
  module.walk([&](func::FuncOp func) {
    if (func->hasAttr(tile::TileDialect::getKernelAttrName()))
      kernels.push_back(func);
  });
  if (kernels.size() != 1)
    return stageError(getStageName(Stage::TTIR),
                      "the module must hold exactly one func.func with "
                      "'tile.kernel', found " +
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
  return llvm::Error::success();
}

namespace {
/// What the stages of one compile share.
struct CompileState {
  CompileState(ModuleOp module, const CompileOptions &compileOptions,
               CompiledKernel &result)
      : context(module.getContext()), cache(compileOptions.cache.get()),
        compilerId(cache ? getCompilerId() : ""),
        options(getStageOptions(compileOptions, result.name)), result(result),
        module(module) {}

  MLIRContext *context;
  rt::StageCache *cache;
  std::string compilerId;
  StageOptions options;
  CompiledKernel &result;
  /// The SHA-256 of the last artifact when it came from the cache, which
  /// checked it on read: the next key needs no second pass over it.
  std::optional<std::string> checkedHash;

  /// The module the next MLIR stage runs on, and the stage whose output it
  /// holds (none: the input, or the LLVM dialect the llir stage left). After
  /// a hit it is behind, and a later miss parses the cached text instead.
  ModuleOp module;
  std::optional<Stage> moduleHolds;
  OwningOpRef<ModuleOp> reparsed;

  llvm::LLVMContext llvmContext;
  /// The llir stage's module while it runs; the ptx stage parses the llir
  /// text into it.
  std::unique_ptr<llvm::Module> llvmModule;
};

/// One row of the stage table.
struct StageDef {
  Stage stage;
  /// The artifact the stage reads; null for ttir, which reads the module
  /// (its key hashes the module as printed, without locations: moving a
  /// kernel within its file must not miss).
  std::string CompiledKernel::*input;
  std::string CompiledKernel::*output;
  /// Makes `output` on a miss and returns the meta stored with it.
  llvm::Expected<std::string> (*run)(CompileState &state);
  /// On a hit, restores what the meta holds; false makes the hit a miss.
  /// Null: the stage stores no meta.
  bool (*readMeta)(const std::string &meta, CompiledKernel &result);
};
} // namespace

/// Makes `state.module` hold the output of `stage`, parsing its cached
/// `text` when a hit left the module behind.
static llvm::Error moduleAfter(CompileState &state, Stage stage,
                               const std::string &text) {
  if (state.moduleHolds == stage)
    return llvm::Error::success();
  llvm::StringRef name = getStageName(stage);
  ParserConfig config(state.context);
  state.reparsed =
      parseSourceString<ModuleOp>(text, config, ("cached-" + name).str());
  if (!state.reparsed)
    return makeError("cannot parse the cached " + name +
                     " artifact (see the diagnostics above); run `tilec "
                     "cache clear` or use --no-cache");
  state.module = *state.reparsed;
  state.moduleHolds = stage;
  return llvm::Error::success();
}

/// Runs the passes `build` adds on `state.module`, which then holds the
/// output of `stage`, printed into `artifact`.
static llvm::Error runPasses(CompileState &state, Stage stage,
                             function_ref<void(OpPassManager &)> build,
                             std::string &artifact) {
  PassManager pm(state.context);
  build(pm);
  if (const auto &configure = state.options.compile.configurePasses)
    configure(pm);
  if (failed(pm.run(state.module)))
    return makeError(kSeeDiagnostics);
  artifact = printModule(state.module);
  state.moduleHolds = stage;
  return llvm::Error::success();
}

static llvm::Expected<std::string> runTTIR(CompileState &state) {
  if (auto error = runPasses(
          state, Stage::TTIR, [](OpPassManager &pm) { buildTTIRPipeline(pm); },
          state.result.ttir))
    return std::move(error);
  return "";
}

static llvm::Expected<std::string> runTTGIR(CompileState &state) {
  if (auto error = moduleAfter(state, Stage::TTIR, state.result.ttir))
    return std::move(error);
  if (auto error = runPasses(
          state, Stage::TTGIR,
          [&](OpPassManager &pm) {
            buildTTGIRPipeline(pm, state.options.compile);
          },
          state.result.ttgir))
    return std::move(error);
  // tilegpu-check-block-resources, with the verdict: a config whose sizes
  // the target cannot hold carries its own error code.
  switch (checkBlockResources(state.module)) {
  case BlockResourcesVerdict::Fits:
    return "";
  case BlockResourcesVerdict::ExceedsTarget:
    return llvm::createStringError(blockResourcesExceeded(),
                                   kSeeDiagnostics);
  case BlockResourcesVerdict::Unchecked:
    break;
  }
  return makeError(kSeeDiagnostics);
}

/// The tensor maps tilegpu-pipeline appended to the kernel of `module`
/// (ttgir): each argument's tilegpu.tensor_map, its argument indices named
/// by `signature`, the element type from the base pointer's.
static std::vector<TensorMapParam>
readTensorMaps(ModuleOp module, const std::vector<KernelArgument> &signature) {
  std::vector<TensorMapParam> maps;
  module.walk([&](func::FuncOp func) {
    for (unsigned arg = 0; arg < func.getNumArguments(); ++arg) {
      auto map = func.getArgAttrOfType<DictionaryAttr>(
          arg, tilegpu::TileGPUDialect::getTensorMapAttrName());
      if (!map)
        continue;
      auto field = [&](StringRef name) {
        return static_cast<int64_t>(map.getAs<IntegerAttr>(name).getInt());
      };
      auto name = [&](StringRef key) {
        int64_t index = field(key);
        return index < static_cast<int64_t>(signature.size())
                   ? signature[index].name
                   : std::string();
      };
      TensorMapParam param;
      param.base = name("base");
      param.rows = name("rows");
      param.cols = name("cols");
      param.rowStride = name("row_stride");
      auto pointer = cast<tile::PointerType>(
          func.getArgument(field("base")).getType());
      llvm::raw_string_ostream element(param.element);
      element << pointer.getPointeeType();
      param.boxRows = static_cast<uint32_t>(field("box_rows"));
      param.boxCols = static_cast<uint32_t>(field("box_cols"));
      param.swizzleBytes = static_cast<uint32_t>(field("swizzle"));
      maps.push_back(std::move(param));
    }
  });
  return maps;
}

static llvm::Expected<std::string> runLLIR(CompileState &state) {
  CompiledKernel &result = state.result;
  if (auto error = moduleAfter(state, Stage::TTGIR, result.ttgir))
    return std::move(error);
  result.tensorMaps = readTensorMaps(state.module, result.signature);
  PassManager pm(state.context);
  buildLLIRPipeline(pm);
  if (const auto &configure = state.options.compile.configurePasses)
    configure(pm);
  if (failed(pm.run(state.module)))
    return makeError(kSeeDiagnostics);
  state.moduleHolds = std::nullopt;
  if (auto shared = state.module->getAttrOfType<IntegerAttr>(
          tilegpu::TileGPUDialect::getSharedAttrName()))
    result.sharedBytes = shared.getInt();
  auto translated = translateToLLVMIR(state.module, state.llvmContext);
  if (!translated)
    return translated.takeError();
  state.llvmModule = std::move(*translated);
  if (auto error = optimizeLLVMModule(*state.llvmModule, state.options.ptx))
    return std::move(error);
  result.llir = printLLVMIR(*state.llvmModule);
  // The ptx stage is keyed by the llir text, so it reads that text back
  // rather than this module: the printer does not keep use-list orders,
  // which steer codegen's register numbering, and a PTX made from the
  // in-memory module differed from one made from the cached llir.
  state.llvmModule.reset();
  nlohmann::ordered_json meta;
  meta["shared_bytes"] = result.sharedBytes;
  // A cached llir is read without its ttgir: the maps travel with it.
  if (!result.tensorMaps.empty()) {
    CompileMetadata maps;
    maps.tensorMaps = result.tensorMaps;
    meta["tensor_maps"] =
        nlohmann::ordered_json::parse(maps.toJson())["tensor_maps"];
  }
  return meta.dump();
}

static bool readLLIRMeta(const std::string &meta, CompiledKernel &result) {
  auto json = nlohmann::json::parse(meta, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("shared_bytes") ||
      !json["shared_bytes"].is_number_integer())
    return false;
  result.sharedBytes = json["shared_bytes"].get<int64_t>();
  result.tensorMaps.clear();
  if (!json.contains("tensor_maps"))
    return true;
  // Read through the contract's own reader (every field checked): a
  // minimal compile json around the maps.
  nlohmann::json wrapped = {{"name", "k"},        {"kernel_name", "k"},
                            {"target", "sm_90a"}, {"num_warps", 1},
                            {"num_stages", 1},    {"shared_bytes", 0},
                            {"signature", nlohmann::json::array()},
                            {"tensor_maps", json["tensor_maps"]}};
  for (const KernelArgument &arg : result.signature)
    wrapped["signature"].push_back({{"name", arg.name}, {"type", arg.type}});
  Result<CompileMetadata> parsed = CompileMetadata::parse(wrapped.dump());
  if (!parsed)
    return false;
  result.tensorMaps = parsed->tensorMaps;
  return true;
}

static llvm::Expected<std::string> runPTX(CompileState &state) {
  if (!state.llvmModule) {
    llvm::SMDiagnostic diagnostic;
    state.llvmModule = llvm::parseAssemblyString(state.result.llir, diagnostic,
                                                 state.llvmContext);
    if (!state.llvmModule) {
      std::string message;
      llvm::raw_string_ostream os(message);
      diagnostic.print("llir", os, /*ShowColors=*/false);
      return makeError("cannot parse the llir: " + message);
    }
  }
  auto ptx = emitPTX(*state.llvmModule, state.options.ptx);
  if (!ptx)
    return ptx.takeError();
  state.result.ptx = std::move(*ptx);
  return "";
}

/// The ptxas report in a cubin entry's meta, one list for writing and
/// reading it.
template <class Info, class Visit>
static void visitCubinInfo(Info &info, Visit &&visit) {
  visit("registers", info.registers);
  visit("barriers", info.barriers);
  visit("shared_static_bytes", info.sharedStaticBytes);
  visit("spill_store_bytes", info.spillStoreBytes);
  visit("spill_load_bytes", info.spillLoadBytes);
  visit("stack_frame_bytes", info.stackFrameBytes);
  visit("const_bytes", info.constBytes);
  visit("wgmma_serialized", info.wgmmaSerialized);
}

static llvm::Expected<std::string> runCubin(CompileState &state) {
  CompiledKernel &result = state.result;
  auto cubin = assembleCubin(result.ptx, state.options.cubin);
  if (!cubin)
    return cubin.takeError();
  result.cubin = std::move(cubin->cubin);
  result.cubinInfo = cubin->info;
  nlohmann::ordered_json meta;
  visitCubinInfo(result.cubinInfo, [&](const char *name, const auto &value) {
    meta[name] = value;
  });
  return meta.dump();
}

static bool readCubinMeta(const std::string &meta, CompiledKernel &result) {
  auto json = nlohmann::json::parse(meta, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object())
    return false;
  bool usable = true;
  visitCubinInfo(result.cubinInfo, [&](const char *name, auto &field) {
    usable = usable && json.contains(name) && json[name].is_number_unsigned();
    if (usable)
      field = json[name].get<std::decay_t<decltype(field)>>();
  });
  return usable;
}

// In pipeline order; each stage reads the artifact of the one before.
static const StageDef kStages[] = {
    {Stage::TTIR, nullptr, &CompiledKernel::ttir, runTTIR, nullptr},
    {Stage::TTGIR, &CompiledKernel::ttir, &CompiledKernel::ttgir, runTTGIR,
     nullptr},
    {Stage::LLIR, &CompiledKernel::ttgir, &CompiledKernel::llir, runLLIR,
     readLLIRMeta},
    {Stage::PTX, &CompiledKernel::llir, &CompiledKernel::ptx, runPTX, nullptr},
    {Stage::Cubin, &CompiledKernel::ptx, &CompiledKernel::cubin, runCubin,
     readCubinMeta},
};

/// The SHA-256 of what `def` reads.
static std::string hashInput(const StageDef &def, const CompileState &state) {
  if (!def.input)
    return hashText(printModule(state.module));
  return state.checkedHash ? *state.checkedHash
                           : hashText(state.result.*def.input);
}

/// Takes `def`'s artifact from the cache when `key` hits and the stage can
/// use the entry's meta: Hit or RemoteHit, else Miss (and this process may
/// hold the key's lease on the shared tier until it stores the artifact).
static CacheResult reuseCached(const StageDef &def, CompileState &state,
                               const std::string &key) {
  std::optional<rt::CacheArtifact> hit =
      state.cache->lookupOrLease(getStageName(def.stage), key);
  if (!hit || (def.readMeta && !def.readMeta(hit->meta, state.result)))
    return CacheResult::Miss;
  state.result.*def.output = std::move(hit->payload);
  state.checkedHash = std::move(hit->payloadSha256);
  return hit->fromRemote ? CacheResult::RemoteHit : CacheResult::Hit;
}

/// Records stage `name`'s time since `start`, how the cache served it and
/// its key (what `tilec pack` looks the artifact up by).
static void recordStage(CompileState &state, llvm::StringRef name,
                        std::chrono::steady_clock::time_point start,
                        CacheResult cacheResult, std::string key) {
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  state.result.timings.push_back(
      {name.str(), elapsed.count(), cacheResult, std::move(key)});
}

/// Runs one stage: looks its artifact up when the cache can key it, else
/// makes it and stores it; times both and names the stage in its errors.
static llvm::Error runStage(const StageDef &def, CompileState &state) {
  auto start = std::chrono::steady_clock::now();
  llvm::StringRef name = getStageName(def.stage);
  std::string key;
  if (state.cache)
    key = getStageKey(def.stage, state.compilerId, hashInput(def, state),
                      state.options);
  CacheResult cacheResult =
      key.empty() ? CacheResult::NotCached : reuseCached(def, state, key);
  if (cacheResult == CacheResult::NotCached ||
      cacheResult == CacheResult::Miss) {
    llvm::Expected<std::string> meta = def.run(state);
    if (!meta) {
      // Processes waiting for this build would fail alike: they need not
      // wait for the lease to expire to find out.
      if (!key.empty())
        state.cache->releaseLease(name, key);
      return stageError(name, meta.takeError());
    }
    state.checkedHash.reset();
    if (!key.empty())
      state.cache->store(name, key, state.result.*def.output, *meta);
  }
  recordStage(state, name, start, cacheResult, std::move(key));
  return llvm::Error::success();
}

void CompileOptions::setConfig(const Config &kernelConfig) {
  numWarps = kernelConfig.numWarps;
  numStages = kernelConfig.numStages;
  minBlocksPerSM = kernelConfig.minBlocksPerSM;
  config = kernelConfig.params;
  configTypes = kernelConfig.types;
}

void applyDebugEnvironment(CompileOptions &options) {
  rt::Environment environment = rt::readEnvironment();
  if (options.dumpDir.empty())
    options.dumpDir = environment.dumpDir;
  if (options.overrideDir.empty())
    options.overrideDir = environment.overrideDir;
}

/// <dir>/<kernel>-<id>/<kernel>.<extension>.
static std::string debugPath(llvm::StringRef dir, const CompiledKernel &result,
                             llvm::StringRef extension) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, result.debugName,
                          result.name + "." + extension.str());
  return std::string(path);
}

/// Writes `contents` to `path`, its directory created, with the runtime's
/// one atomic writer (the stage cache's).
static llvm::Error writeDebugFile(const std::string &path,
                                  llvm::StringRef contents) {
  if (Status status =
          rt::makeDirectories(std::string(llvm::sys::path::parent_path(path)));
      !status.ok())
    return makeError("the dump directory of " + path + ": " + status.message());
  if (Status status = rt::writeFileAtomically(path, contents); !status.ok())
    return makeError(status.message());
  return llvm::Error::success();
}

/// After stage `def`: its artifact replaced by the override directory's
/// file where there is one (the next MLIR or LLVM stage then parses the
/// text), and written to the dump directory.
static llvm::Error applyDebugDirectories(const StageDef &def,
                                         CompileState &state) {
  const CompileOptions &options = state.result.options;
  std::string &artifact = state.result.*def.output;
  llvm::StringRef name = getStageName(def.stage);
  if (!options.overrideDir.empty() && def.stage != Stage::Cubin) {
    std::string path = debugPath(options.overrideDir, state.result, name);
    if (llvm::sys::fs::exists(path)) {
      auto text = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
      if (!text)
        return makeError("cannot read the override " + path + ": " +
                         text.getError().message());
      artifact = (*text)->getBuffer().str();
      state.checkedHash.reset();
      state.moduleHolds.reset();
      state.result.overrides.push_back(path);
    }
  }
  if (options.dumpDir.empty())
    return llvm::Error::success();
  return writeDebugFile(debugPath(options.dumpDir, state.result, name),
                        artifact);
}

/// Runs the stages after `after` (every stage without it), each followed
/// by the debug directories' override and dump, which name the compile by
/// the hash of `input()`, the text it started from (computed only then).
static llvm::Error runStagesAfter(CompileState &state,
                                  std::optional<Stage> after,
                                  llvm::function_ref<std::string()> input) {
  const CompileOptions &options = state.result.options;
  bool debugging = !options.dumpDir.empty() || !options.overrideDir.empty();
  if (debugging)
    state.result.debugName =
        state.result.name + "-" + hashText(input()).substr(0, 16);
  for (const StageDef &def : kStages) {
    if (after && unsigned(def.stage) <= unsigned(*after))
      continue;
    if (def.stage == Stage::Cubin && options.skipCubin)
      break;
    // The interpreter device runs the ttir itself.
    if (options.target == kInterpreterTarget && def.stage != Stage::TTIR)
      break;
    if (auto error = runStage(def, state))
      return error;
    if (debugging)
      if (auto error = applyDebugDirectories(def, state))
        return stageError(getStageName(def.stage), std::move(error));
  }
  return llvm::Error::success();
}

/// The interpreter device's image: its magic line, the ttir with its
/// locations (so that the device's errors name the kernel builder's lines;
/// the cached artifact has none), a NUL (the driver reads a C string).
static llvm::Error makeInterpreterImage(CompileState &state) {
  if (!state.result.overrides.empty()) {
    // An override's text is the ttir, whatever the module held.
    if (auto error = moduleAfter(state, Stage::TTIR, state.result.ttir))
      return error;
  } else if (state.moduleHolds != Stage::TTIR) {
    // A cache hit left the module as it came: run the stage's passes on it.
    std::string ttir;
    if (auto error = runPasses(
            state, Stage::TTIR,
            [](OpPassManager &pm) { buildTTIRPipeline(pm); }, ttir))
      return stageError(getStageName(Stage::TTIR), std::move(error));
  }
  auto start = std::chrono::steady_clock::now();
  std::string &image = state.result.cubin;
  image = kInterpreterImageMagic;
  llvm::raw_string_ostream os(image);
  state.module.print(os, OpPrintingFlags().enableDebugInfo());
  os.flush();
  image.push_back('\0');
  if (!state.cache)
    return llvm::Error::success();
  // Stored as the kernel's "cubin", keyed by its text: the tuner records the
  // key as a GPU cubin's, and `tilec pack` finds the image by it, so that a
  // bundle of interpreter images serves the interpreter device as a GPU's
  // serves its GPU.
  std::string key = rt::CacheKey("cubin")
                        .add("compiler", state.compilerId)
                        .add("target", kInterpreterTarget)
                        .add("interpreter_image", hashText(image))
                        .str();
  state.cache->store(getStageName(Stage::Cubin), key, image, "{}");
  recordStage(state, getStageName(Stage::Cubin), start, CacheResult::Miss,
              std::move(key));
  return llvm::Error::success();
}

llvm::Expected<CompiledKernel> compileKernel(ModuleOp module,
                                             const CompileOptions &options) {
  CompiledKernel result;
  result.options = options;
  if (auto error = readKernel(module, result))
    return std::move(error);
  CompileState state(module, options, result);
  if (auto error = runStagesAfter(state, std::nullopt,
                                  [&] { return printModule(module); }))
    return std::move(error);
  if (options.target == kInterpreterTarget)
    if (auto error = makeInterpreterImage(state))
      return std::move(error);
  if (!options.dumpDir.empty())
    if (auto error = writeDebugFile(debugPath(options.dumpDir, result, "json"),
                                    result.metadataJson()))
      return std::move(error);
  return result;
}

/// The name of the one kernel entry of an llir or ptx text.
static llvm::Expected<std::string> entryName(Stage stage,
                                             llvm::StringRef text) {
  llvm::Regex entry(
      stage == Stage::LLIR
          ? "define[^@\n]* ptx_kernel [^@\n]*@([A-Za-z_.$][A-Za-z0-9_.$]*)\\("
          : "\\.entry[ \t]+([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*\\(");
  std::vector<std::string> names;
  for (llvm::StringRef rest = text;;) {
    llvm::SmallVector<llvm::StringRef, 2> match;
    if (!entry.match(rest, &match))
      break;
    names.push_back(match[1].str());
    rest = rest.substr(match[0].data() - rest.data() + match[0].size());
  }
  if (names.size() != 1)
    return stageError(getStageName(stage),
                      "the input must hold exactly one kernel entry, found " +
                          std::to_string(names.size()));
  return names.front();
}

llvm::Expected<CompiledKernel>
compileFromArtifact(MLIRContext &context, Stage after, std::string text,
                    const CompileOptions &options) {
  if (after != Stage::LLIR && after != Stage::PTX)
    return makeError("an artifact input is llir or ptx");
  if (options.target == kInterpreterTarget)
    return makeError("the interpreter device runs ttir, not llir or ptx");
  CompiledKernel result;
  result.options = options;
  llvm::Expected<std::string> name = entryName(after, text);
  if (!name)
    return name.takeError();
  result.name = *name;
  (after == Stage::LLIR ? result.llir : result.ptx) = std::move(text);
  OwningOpRef<ModuleOp> anchor(ModuleOp::create(UnknownLoc::get(&context)));
  CompileState state(*anchor, options, result);
  if (auto error = runStagesAfter(state, after, [&] {
        return after == Stage::LLIR ? result.llir : result.ptx;
      }))
    return std::move(error);
  return result;
}

CompileMetadata CompiledKernel::metadata() const {
  CompileMetadata md;
  md.name = name;
  md.kernelName = name;
  md.target = options.target;
  md.numWarps = options.numWarps;
  md.threadsPerWarp = options.threadsPerWarp;
  md.numStages = options.numStages;
  md.minBlocksPerSM = options.minBlocksPerSM;
  md.sharedBytes = sharedBytes;
  if (!cubin.empty()) {
    md.registers = cubinInfo.registers;
    md.spillStores = cubinInfo.spillStoreBytes;
    md.spillLoads = cubinInfo.spillLoadBytes;
    md.stackFrameBytes = cubinInfo.stackFrameBytes;
    if (cubinInfo.wgmmaSerialized)
      md.wgmmaSerialized = true;
  }
  md.config = options.config;
  md.types = options.configTypes;
  for (const KernelArgument &arg : signature) {
    KernelArg entry;
    entry.name = arg.name;
    entry.spelling = arg.type;
    // The signature came from the verified module: its spellings parse.
    if (Result<ArgType> type = parseArgType(arg.type))
      entry.type = *type;
    entry.divisibility = arg.divisibility;
    entry.equalToOne = arg.equalToOne;
    md.signature.push_back(std::move(entry));
  }
  md.tensorMaps = tensorMaps;
  for (auto [stage, text] : {std::pair("ttir", &ttir), std::pair("ttgir", &ttgir),
                             std::pair("llir", &llir), std::pair("ptx", &ptx),
                             std::pair("cubin", &cubin)})
    if (!text->empty())
      md.hashes[stage] = hashText(*text);
  md.compilerId = getCompilerId();
  for (const StageTiming &timing : timings) {
    md.compileMs[timing.stage] = timing.milliseconds;
    // Each stage's cache key: what `tilec pack` looks cubins up by.
    if (timing.cache != CacheResult::NotCached)
      md.cache[timing.stage] = {timing.cacheKey,
                                getCacheResultName(timing.cache)};
  }
  return md;
}

std::string CompiledKernel::metadataJson() const { return metadata().toJson(); }

} // namespace tilec
