//===- PTXEmitter.cpp - LLVM dialect -> LLVM IR -> PTX --------------------===//

#include "tilec/Target/PTXEmitter.h"
#include "tilec/runtime/Environment.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <array>
#include <map>
#include <mutex>

// Declared by the NVPTX target libraries. Only these four are called so that a
// static binary pulls in the NVPTX backend and nothing else.
extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

#ifndef TILEC_LIBDEVICE_DEFAULT
#define TILEC_LIBDEVICE_DEFAULT ""
#endif

using namespace tilec;

static constexpr llvm::StringLiteral kTriple = "nvptx64-nvidia-cuda";

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static void initializeNVPTXOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

static llvm::CodeGenOptLevel toCodeGenOptLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const PTXOptions &options) {
  initializeNVPTXOnce();
  llvm::Triple triple(kTriple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("cannot find the NVPTX target for '" + kTriple +
                     "': " + error);
  // An unknown chip or feature is only a warning on stderr inside
  // createTargetMachine; reject it first so that a typo cannot silently
  // produce PTX for another target.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple, /*CPU=*/"", /*Features=*/""));
  if (!generic || !generic->isCPUStringValid(options.chip))
    return makeError("unknown NVPTX chip '" + options.chip +
                     "' (expected e.g. sm_80, sm_90, sm_90a)");
  llvm::SmallVector<llvm::StringRef> features;
  llvm::StringRef(options.features)
      .split(features, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef feature : features) {
    llvm::StringRef name = feature.trim();
    if (!name.consume_front("+") && !name.consume_front("-"))
      return makeError("NVPTX feature '" + feature +
                       "' must start with '+' or '-' (e.g. +ptx90)");
    if (llvm::none_of(
            generic->getAllProcessorFeatures(),
            [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; }))
      return makeError("unknown NVPTX feature '" + feature +
                       "' (expected e.g. +ptx90)");
  }

  llvm::TargetOptions targetOptions;
  targetOptions.AllowFPOpFusion = options.fastFPContraction
                                      ? llvm::FPOpFusion::Fast
                                      : llvm::FPOpFusion::Standard;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.chip, options.features, targetOptions,
      /*RM=*/std::nullopt, /*CM=*/std::nullopt,
      toCodeGenOptLevel(options.optLevel)));
  if (!machine)
    return makeError("cannot create an NVPTX target machine for chip '" +
                     options.chip + "' with features '" + options.features +
                     "'");
  return machine;
}

namespace {
/// Collects the errors that LLVM reports through the context's diagnostic
/// handler (the IR linker does so) while it is alive, then restores the
/// previous handler: the context belongs to the caller.
class CapturedLLVMDiagnostics {
public:
  explicit CapturedLLVMDiagnostics(llvm::LLVMContext &ctx)
      : ctx(ctx), previousHandler(ctx.getDiagnosticHandler()) {
    ctx.setDiagnosticHandler(std::make_unique<Handler>(errors));
  }
  ~CapturedLLVMDiagnostics() {
    ctx.setDiagnosticHandler(std::move(previousHandler));
  }
  std::string takeErrors() { return std::move(errors); }

private:
  struct Handler : llvm::DiagnosticHandler {
    explicit Handler(std::string &errors) : errors(errors) {}
    bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
      // Warnings (e.g. a data layout mismatch) must not fail the compile, and
      // are not printed either: library code keeps stderr clean.
      if (info.getSeverity() != llvm::DS_Error)
        return true;
      llvm::raw_string_ostream os(errors);
      if (!errors.empty())
        os << "\n";
      llvm::DiagnosticPrinterRawOStream printer(os);
      info.print(printer);
      return true;
    }
    std::string &errors;
  };

  llvm::LLVMContext &ctx;
  std::unique_ptr<llvm::DiagnosticHandler> previousHandler;
  std::string errors;
};
} // namespace

void tilec::registerPTXTranslations(mlir::DialectRegistry &registry) {
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
}

llvm::Expected<std::unique_ptr<llvm::Module>>
tilec::translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmCtx) {
  mlir::MLIRContext *ctx = module.getContext();
  // Extensions are keyed by TypeID, so appending the registry again to a
  // context that already has these translations is a no-op.
  mlir::DialectRegistry registry;
  registerPTXTranslations(registry);
  ctx->appendDialectRegistry(registry);

  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &diag) {
    if (!diagnostics.empty())
      diagOS << "\n";
    diagOS << diag.getLocation() << ": " << diag.str();
    for (const mlir::Diagnostic &note : diag.getNotes())
      diagOS << "\n  note: " << note.getLocation() << ": " << note.str();
    return mlir::success();
  });
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmCtx);
  if (!llvmModule)
    return makeError("cannot translate the MLIR module to LLVM IR" +
                     llvm::Twine(diagnostics.empty() ? "" : ":\n") +
                     diagnostics);
  return llvmModule;
}

std::string tilec::resolveLibdevicePath(const PTXOptions &options) {
  if (!options.libdevicePath.empty())
    return options.libdevicePath;
  if (std::string env = rt::readEnvironment().libdevice; !env.empty())
    return env;
  return TILEC_LIBDEVICE_DEFAULT;
}

std::string tilec::getLibdeviceIdentity(const PTXOptions &options) {
  std::string path = resolveLibdevicePath(options);
  if (path.empty())
    return "none";
  static std::mutex mutex;
  static std::map<std::string, std::string> identities;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = identities.try_emplace(path);
  if (!inserted)
    return it->second;
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return it->second = "none";
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef((*file)->getBuffer()));
  return it->second = llvm::toHex(digest, /*LowerCase=*/true);
}

/// True if `module` calls a libdevice function that it does not define.
static bool needsLibdevice(const llvm::Module &module) {
  for (const llvm::Function &func : module)
    if (func.isDeclaration() && func.getName().starts_with("__nv_") &&
        !func.use_empty())
      return true;
  return false;
}

static llvm::Error linkLibdevice(llvm::Module &module,
                                 const PTXOptions &options) {
  std::string path = resolveLibdevicePath(options);
  if (path.empty())
    return makeError("the module calls __nv_* functions but no libdevice is "
                     "configured: set PTXOptions::libdevicePath or the "
                     "environment variable TILEC_LIBDEVICE to "
                     "<cuda>/nvvm/libdevice/libdevice.10.bc");
  if (!llvm::sys::fs::exists(path))
    return makeError("libdevice not found at '" + path +
                     "' (set PTXOptions::libdevicePath or TILEC_LIBDEVICE)");

  llvm::LLVMContext &ctx = module.getContext();
  // Loaded lazily: with LinkOnlyNeeded only the bodies of the functions that
  // are called get materialized, a few out of libdevice's ~1000.
  llvm::SMDiagnostic parseError;
  std::unique_ptr<llvm::Module> libdevice =
      llvm::getLazyIRFileModule(path, parseError, ctx);
  if (!libdevice) {
    std::string message;
    llvm::raw_string_ostream os(message);
    parseError.print("libdevice", os, /*ShowColors=*/false);
    return makeError("cannot load libdevice '" + path + "': " + message);
  }
  // libdevice says nvptx64-nvidia-gpulibs with an older data layout; adopt
  // ours so that the linker does not warn about a mismatch.
  libdevice->setTargetTriple(module.getTargetTriple());
  libdevice->setDataLayout(module.getDataLayout());

  CapturedLLVMDiagnostics captured(ctx);
  bool failed = llvm::Linker::linkModules(
      module, std::move(libdevice), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module &linked, const llvm::StringSet<> &fromLibdevice) {
        // Internalize what libdevice brought in so that O3 can inline it and
        // drop the bodies; the user's own symbols keep their linkage.
        llvm::internalizeModule(linked, [&](const llvm::GlobalValue &gv) {
          return !gv.hasName() || !fromLibdevice.contains(gv.getName());
        });
      });
  if (failed)
    return makeError("cannot link libdevice '" + path +
                     "': " + captured.takeErrors());
  return llvm::Error::success();
}

// instcombine as LLVM's own pipelines run it: the textual pass checks that
// one iteration reached a fixpoint and aborts the process when it did not,
// a debugging aid that a pipelined wgmma kernel trips.
const char tilec::kKernelPassPipeline[] =
    "cgscc(inline),globaldce,"
    "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,"
    "simplifycfg,loop-mssa(licm),gvn,instcombine<no-verify-fixpoint>,adce,"
    "simplifycfg)";

std::string tilec::getLLVMPassPipeline(const PTXOptions &options) {
  return options.llvmPasses.empty() ? std::string(kKernelPassPipeline)
                                    : options.llvmPasses;
}

llvm::Error tilec::optimizeLLVMModule(llvm::Module &module,
                                      const PTXOptions &options) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  module.setTargetTriple(llvm::Triple(kTriple));
  module.setDataLayout((*machine)->createDataLayout());
  // Read by NVVMReflect, which resolves libdevice's __nvvm_reflect calls.
  module.setModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                       options.flushDenormals ? 1u : 0u);
  if (options.flushDenormals)
    for (llvm::Function &func : module)
      if (!func.isDeclaration())
        func.addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");

  if (needsLibdevice(module))
    if (llvm::Error error = linkLibdevice(module, options))
      return error;

  std::string verifierMessage;
  llvm::raw_string_ostream verifierOS(verifierMessage);
  if (llvm::verifyModule(module, &verifierOS))
    return makeError("invalid LLVM IR before optimization:\n" +
                     verifierMessage);

  // The target machine registers the NVPTX callbacks (NVVMReflect, address
  // space inference, ...) with the pass builder.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder passBuilder(machine->get());
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cgam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cgam, mam);

  if (options.optLevel == 0)
    return llvm::Error::success();
  std::string pipeline = getLLVMPassPipeline(options);
  // The NVPTX target's pipeline-start passes first (NVVMReflect with the
  // target's SM version, so that libdevice picks the code for this chip;
  // intrinsic ranges), as default<O3> runs them; then the chosen passes.
  llvm::ModulePassManager passes;
  passBuilder.invokePipelineStartEPCallbacks(passes,
                                             llvm::OptimizationLevel::O3);
  if (llvm::Error error = passBuilder.parsePassPipeline(passes, pipeline))
    return makeError("bad LLVM pass pipeline '" + pipeline +
                     "': " + llvm::toString(std::move(error)));
  passes.run(module, mam);
  return llvm::Error::success();
}

llvm::Expected<std::string> tilec::emitPTX(llvm::Module &module,
                                           const PTXOptions &options) {
  for (const llvm::Function &func : module)
    if (func.isDeclaration() && func.getName().starts_with("__nv_") &&
        !func.use_empty())
      return makeError("'" + func.getName() +
                       "' is called but not defined: libdevice was not "
                       "linked (run optimizeLLVMModule before emitPTX)");

  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  if (module.getTargetTriple().str() != kTriple)
    module.setTargetTriple(llvm::Triple(kTriple));
  module.setDataLayout((*machine)->createDataLayout());

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, /*DwoOut=*/nullptr,
                                      llvm::CodeGenFileType::AssemblyFile))
    return makeError("the NVPTX target machine cannot emit assembly");
  CapturedLLVMDiagnostics captured(module.getContext());
  codegen.run(module);
  std::string errors = captured.takeErrors();
  if (!errors.empty())
    return makeError("NVPTX code generation failed: " + errors);
  return std::string(ptx.str());
}

std::string tilec::printLLVMIR(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, /*AAW=*/nullptr);
  return text;
}

llvm::SmallVector<std::string, 1>
tilec::getPTXKernelNames(llvm::StringRef ptx) {
  llvm::SmallVector<std::string, 1> names;
  static constexpr llvm::StringLiteral kEntry = ".visible .entry";
  while (!ptx.empty()) {
    auto [line, rest] = ptx.split('\n');
    ptx = rest;
    line = line.trim();
    if (!line.consume_front(kEntry))
      continue;
    // `.visible .entry name(` with the parameters on the following lines.
    llvm::StringRef name = line.ltrim().take_until(
        [](char c) { return c == '(' || c == ' ' || c == '\t'; });
    if (!name.empty())
      names.push_back(name.str());
  }
  return names;
}

llvm::Expected<PTXArtifacts> tilec::compileToPTX(mlir::ModuleOp module,
                                                 const PTXOptions &options) {
  llvm::LLVMContext llvmCtx;
  llvm::Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translateToLLVMIR(module, llvmCtx);
  if (!llvmModule)
    return llvmModule.takeError();
  if (llvm::Error error = optimizeLLVMModule(**llvmModule, options))
    return std::move(error);
  PTXArtifacts artifacts;
  artifacts.llir = printLLVMIR(**llvmModule);
  llvm::Expected<std::string> ptx = emitPTX(**llvmModule, options);
  if (!ptx)
    return ptx.takeError();
  artifacts.ptx = std::move(*ptx);
  artifacts.kernelNames = getPTXKernelNames(artifacts.ptx);
  return artifacts;
}
