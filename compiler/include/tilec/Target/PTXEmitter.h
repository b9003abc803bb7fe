//===- PTXEmitter.h - LLVM dialect -> LLVM IR -> PTX ------------*- C++ -*-===//
//
// The llir and ptx stages of tilec: translate an MLIR module made of LLVM and
// NVVM dialect ops into an llvm::Module, link libdevice when it is needed, run
// an LLVM pass pipeline (kKernelPassPipeline unless told otherwise) for
// nvptx64-nvidia-cuda and print PTX with the NVPTX backend, all in process.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TARGET_PTXEMITTER_H
#define TILEC_TARGET_PTXEMITTER_H

#include "tilec/Support/OptionFields.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <tuple>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace tilec {

/// Code generation options shared by the llir and ptx stages.
struct PTXOptions {
  /// Target SM, e.g. "sm_80", "sm_90", "sm_90a" (wgmma and setmaxnreg need the
  /// "a" variant, which ptxas must then be given too).
  std::string chip = "sm_90";
  /// NVPTX subtarget features. PTX ISA 9.0 is the newest that both LLVM 22's
  /// NVPTX backend and CUDA 13.0's ptxas accept.
  std::string features = "+ptx90";
  /// 0..3: the codegen level; 0 also skips the LLVM IR pipeline.
  unsigned optLevel = 3;
  /// The LLVM IR pass pipeline, in `opt -passes=` syntax ("default<O3>" is
  /// what Triton runs). Empty: kKernelPassPipeline.
  std::string llvmPasses;
  /// Contract mul+add into fma (AllowFPOpFusion = Fast). LLVM's default is
  /// Standard, which keeps separate mul.rn/add.rn.
  bool fastFPContraction = true;
  /// Sets the "nvvm-reflect-ftz" module flag, which selects the
  /// flush-to-zero variants of libdevice functions.
  bool flushDenormals = false;
  /// libdevice bitcode, linked only when the module calls __nv_* functions.
  /// Empty: the environment variable TILEC_LIBDEVICE, else the file found at
  /// configure time (CMake variable TILEC_LIBDEVICE).
  std::string libdevicePath;

  /// Every field, with the stages whose cache keys hold it.
  static constexpr auto fields();
};

/// The LLVM IR pass pipeline optimizeLLVMModule runs: `options.llvmPasses`,
/// else kKernelPassPipeline.
std::string getLLVMPassPipeline(const PTXOptions &options);

/// SHA-256 of the libdevice file optimizeLLVMModule would link (see
/// resolveLibdevicePath), "none" when there is none (a module that needs it
/// then fails with the reason). Hashed once per path per process.
std::string getLibdeviceIdentity(const PTXOptions &options);

// The llir stage runs optimizeLLVMModule and the ptx stage emitPTX, and both
// build their target machine from chip, features, optLevel and
// fastFPContraction. What only the llir reads reaches the ptx through the
// llir text, which the ptx key hashes.
constexpr auto PTXOptions::fields() {
  constexpr StageSet both = Stage::LLIR | Stage::PTX;
  return std::make_tuple(
      keyedField("chip", &PTXOptions::chip, both),
      keyedField("features", &PTXOptions::features, both),
      keyedField("opt_level", &PTXOptions::optLevel, both),
      derivedField("llvm_passes", &PTXOptions::llvmPasses, Stage::LLIR,
                   &getLLVMPassPipeline),
      keyedField("fast_fp_contraction", &PTXOptions::fastFPContraction, both),
      keyedField("flush_denormals", &PTXOptions::flushDenormals, Stage::LLIR),
      derivedField("libdevice", &PTXOptions::libdevicePath, Stage::LLIR,
                   &getLibdeviceIdentity));
}
static_assert(listsEveryFieldOnce<PTXOptions>(),
              "PTXOptions::fields() must name every field of PTXOptions once");

/// The LLVM IR pipeline tilec runs by default, after the NVPTX target's
/// pipeline-start passes (NVVMReflect for the target SM), which every
/// pipeline gets. The input is one kernel with
/// one loop nest, already free of allocas and calls (libdevice aside), and
/// ptxas optimizes its output again: what is left for LLVM is to fold the
/// per-register index arithmetic (instcombine, CSE, GVN), hoist loop-invariant
/// addresses (LICM), drop dead registers and inline libdevice. default<O3>
/// does that too, for about three times the time (docs/target.md).
extern const char kKernelPassPipeline[];

/// The artifacts of the llir and ptx stages.
struct PTXArtifacts {
  /// Optimized LLVM IR text (the .llir artifact), libdevice linked in.
  std::string llir;
  /// PTX assembly (the .ptx artifact).
  std::string ptx;
  /// Names of the `.visible .entry` functions in `ptx`, in order.
  llvm::SmallVector<std::string, 1> kernelNames;
};

/// Adds the LLVM IR translations of the builtin, LLVM and NVVM dialects (and
/// nothing else) to `registry`.
void registerPTXTranslations(mlir::DialectRegistry &registry);

/// Translates `module` (LLVM + NVVM dialect ops only) to LLVM IR in `llvmCtx`.
/// Kernels are llvm.func ops carrying the `nvvm.kernel` attribute or the
/// `ptx_kernelcc` calling convention; both become `ptx_kernel` functions. The
/// needed translation interfaces are registered on the module's context if
/// they are missing. Diagnostics are returned in the error, not printed.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmCtx);

/// Prepares `module` for PTX emission: sets the nvptx64-nvidia-cuda triple and
/// data layout, links libdevice (only when a `__nv_*` function is called) and
/// internalizes what came from it, verifies the result, then runs the LLVM
/// pipeline `options.llvmPasses` (kKernelPassPipeline by default; none at
/// optLevel 0). A pipeline that does not parse is an error.
llvm::Error optimizeLLVMModule(llvm::Module &module, const PTXOptions &options);

/// Runs NVPTX code generation on `module` and returns the PTX text. It does
/// not optimize or link: call optimizeLLVMModule first. Fails if the module
/// still calls an undefined `__nv_*` function, which ptxas would reject.
llvm::Expected<std::string> emitPTX(llvm::Module &module,
                                    const PTXOptions &options);

/// translateToLLVMIR + optimizeLLVMModule + emitPTX, keeping the artifacts.
llvm::Expected<PTXArtifacts> compileToPTX(mlir::ModuleOp module,
                                          const PTXOptions &options);

/// Prints `module` as LLVM IR text (the .llir artifact).
std::string printLLVMIR(const llvm::Module &module);

/// Returns the names of the `.visible .entry` functions of a PTX text.
llvm::SmallVector<std::string, 1> getPTXKernelNames(llvm::StringRef ptx);

/// The libdevice file that optimizeLLVMModule would use for `options`.
std::string resolveLibdevicePath(const PTXOptions &options);

} // namespace tilec

#endif // TILEC_TARGET_PTXEMITTER_H
