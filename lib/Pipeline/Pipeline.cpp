//===- Pipeline.cpp - ttir -> ttgir -> llir -> ptx -> cubin ---------------===//

#include "tilec/Pipeline/Pipeline.h"

#include "tilec/Conversion/Passes.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Dialect/TileGPU/IR/TileGPU.h"
#include "tilec/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>

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
}

void buildLLIRPipeline(OpPassManager &pm) {
  pm.addPass(createConvertTileGPUToLLVM());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

std::string hashText(llvm::StringRef text) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(text.bytes_begin(), text.bytes_end()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string getCompilerId() {
  return std::string("tilec-" TILEC_VERSION " llvm-") + LLVM_VERSION_STRING;
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
    timings.push_back({stage, elapsed.count()});
  }

private:
  std::vector<StageTiming> &timings;
  std::string stage;
  std::chrono::steady_clock::time_point start;
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
    result.signature.push_back({name, typeSpelling(type)});
  }

  auto runStage = [&](llvm::StringRef stage,
                      function_ref<void(OpPassManager &)> build,
                      std::string &artifact) -> llvm::Error {
    StageTimer timer(result.timings, stage.str());
    PassManager pm(context);
    build(pm);
    if (failed(pm.run(module)))
      return stageError(stage, "see the diagnostics above");
    artifact = printModule(module);
    return llvm::Error::success();
  };

  if (auto error = runStage(
          "ttir", [](OpPassManager &pm) { buildTTIRPipeline(pm); },
          result.ttir))
    return std::move(error);
  if (auto error = runStage(
          "ttgir",
          [&](OpPassManager &pm) { buildTTGIRPipeline(pm, options); },
          result.ttgir))
    return std::move(error);

  PTXOptions ptxOptions = options.ptx;
  ptxOptions.chip = options.target;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    StageTimer timer(result.timings, "llir");
    std::string lowered;
    PassManager pm(context);
    buildLLIRPipeline(pm);
    if (failed(pm.run(module)))
      return stageError("llir", "see the diagnostics above");
    if (auto shared = module->getAttrOfType<IntegerAttr>(
            tilegpu::TileGPUDialect::getSharedAttrName()))
      result.sharedBytes = shared.getInt();
    auto translated = translateToLLVMIR(module, llvmContext);
    if (!translated)
      return stageError("llir", llvm::toString(translated.takeError()));
    llvmModule = std::move(*translated);
    if (auto error = optimizeLLVMModule(*llvmModule, ptxOptions))
      return stageError("llir", llvm::toString(std::move(error)));
    result.llir = printLLVMIR(*llvmModule);
  }
  {
    StageTimer timer(result.timings, "ptx");
    auto ptx = emitPTX(*llvmModule, ptxOptions);
    if (!ptx)
      return stageError("ptx", llvm::toString(ptx.takeError()));
    result.ptx = std::move(*ptx);
  }
  if (options.skipCubin)
    return result;
  {
    StageTimer timer(result.timings, "cubin");
    CubinOptions cubinOptions = options.cubin;
    cubinOptions.chip = options.target;
    cubinOptions.kernelName = result.name;
    auto cubin = assembleCubin(result.ptx, cubinOptions);
    if (!cubin)
      return stageError("cubin", llvm::toString(cubin.takeError()));
    result.cubin = std::move(cubin->cubin);
    result.cubinInfo = cubin->info;
  }
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
  for (const KernelArgument &arg : signature)
    json["signature"].push_back({{"name", arg.name}, {"type", arg.type}});
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
  return json.dump(2) + "\n";
}

} // namespace tilec
