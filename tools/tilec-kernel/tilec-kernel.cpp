//===- tilec-kernel.cpp - print the ttir of a kernel definition -----------===//
//
// Specializes one of the kernels under kernels/ to a config and prints its
// canonical ttir, or lists the kernels with their meta-parameters and
// candidate configs:
//
//   tilec-kernel --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32
//   tilec-kernel --list
//
//===----------------------------------------------------------------------===//

#include "tilec/Kernel/KernelDefinition.h"
#include "tilec/Kernel/KernelRegistry.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace tilec;
using namespace tilec::kernel;

static llvm::cl::OptionCategory toolCategory("tilec-kernel options");
static llvm::cl::OptionCategory mlirCategory("MLIR options");

static llvm::cl::opt<bool> listKernelsOption(
    "list",
    llvm::cl::desc("List the kernels, their meta-parameters and "
                   "candidate configs"),
    llvm::cl::cat(toolCategory));

static llvm::cl::opt<std::string>
    kernelName("kernel", llvm::cl::desc("Kernel to specialize"),
               llvm::cl::value_desc("name"), llvm::cl::cat(toolCategory));

static llvm::cl::opt<std::string> configText(
    "config",
    llvm::cl::desc("KEY=VALUE,... (meta-parameters, num_warps, num_stages); "
                   "parameters with defaults may be left out"),
    llvm::cl::value_desc("config"), llvm::cl::init(""),
    llvm::cl::cat(toolCategory));

static llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Output file (default: stdout)"),
                   llvm::cl::value_desc("file"), llvm::cl::init("-"),
                   llvm::cl::cat(toolCategory));

static llvm::cl::opt<std::string> argValues(
    "arg-values",
    llvm::cl::desc("Integer argument values of a call (M=4096,N=4096,K=4096) "
                   "to specialize for, as tilec compile --arg-values"),
    llvm::cl::value_desc("values"), llvm::cl::init(""),
    llvm::cl::cat(toolCategory));

static llvm::cl::opt<bool> numberedValues(
    "numbered-values",
    llvm::cl::desc("Print %0, %1, ... instead of the kernel's variable names"),
    llvm::cl::cat(toolCategory));

static void printParameter(llvm::raw_ostream &os,
                           const MetaParameter &parameter) {
  os << "    " << parameter.name;
  llvm::SmallVector<std::string> facts;
  if (parameter.mustBePowerOfTwo)
    facts.push_back("power of two");
  if (parameter.minValue != std::numeric_limits<int64_t>::min())
    facts.push_back(">= " + std::to_string(parameter.minValue));
  if (parameter.maxValue != std::numeric_limits<int64_t>::max())
    facts.push_back("<= " + std::to_string(parameter.maxValue));
  if (parameter.defaultValue)
    facts.push_back("default " + std::to_string(*parameter.defaultValue));
  if (!parameter.derivation.empty())
    facts.push_back("derived: " + parameter.derivation);
  if (!facts.empty())
    os << " (" << llvm::join(facts, ", ") << ")";
  os << "\n";
}

static void printKernelList(llvm::raw_ostream &os) {
  for (const KernelDefinition *definition : listKernels()) {
    const KernelDescription *kernel = &definition->getDescription();
    os << kernel->getName() << "(";
    llvm::interleaveComma(kernel->getSignature(), os,
                          [&](const ArgumentDecl &argument) {
                            os << argument.name << ": " << argument.type;
                            if (argument.divisibilityHint)
                              os << " %" << argument.divisibilityHint;
                            if (!argument.defaultValue.empty())
                              os << " = " << argument.defaultValue;
                          });
    os << ")  [" << kernel->getSourceFile() << "]\n";
    // Arguments whose values specialize by divisors below 16, by divisor,
    // and those no value specializes.
    std::map<int64_t, std::vector<std::string>> finer;
    std::vector<std::string> unspecialized;
    for (const ArgumentDecl &argument : kernel->getSignature()) {
      if (!argument.specialized)
        unspecialized.push_back(argument.name);
      else if (argument.specializedFrom != Specialization::kDivisor)
        finer[argument.specializedFrom].push_back(argument.name);
    }
    for (const auto &[divisor, names] : finer)
      os << "  specialized from %" << divisor << ": " << llvm::join(names, ", ")
         << "\n";
    if (!unspecialized.empty())
      os << "  not specialized: " << llvm::join(unspecialized, ", ") << "\n";
    os << "  meta-parameters:\n";
    for (const MetaParameter &parameter : kernel->getMetaParameters())
      printParameter(os, parameter);
    for (const TypeParameter &parameter : kernel->getTypeParameters()) {
      os << "    " << parameter.name << " (one of "
         << llvm::join(parameter.allowed, ", ");
      if (parameter.defaultValue)
        os << ", default " << *parameter.defaultValue;
      os << ")\n";
    }
    os << "  autotune key: ";
    llvm::interleaveComma(kernel->getAutotuneKey(), os,
                          [&](const AutotuneKeyEntry &entry) {
                            os << entry.name;
                            if (!entry.derivation.empty())
                              os << " = " << entry.derivation;
                          });
    os << "\n  grid: (" << llvm::join(kernel->getGrid(), ", ") << ")\n";
    os << "  configs:\n";
    for (const Config &config : kernel->getConfigs())
      os << "    " << config.str() << "\n";
    if (kernel->getPredictions().empty())
      continue;
    os << "  predictions (a first use without tuning runs the first that "
          "holds):\n";
    for (const KernelDescription::Prediction &prediction :
         kernel->getPredictions())
      os << "    "
         << (prediction.conditions.empty()
                 ? std::string("otherwise")
                 : llvm::join(prediction.conditions, " and "))
         << ": " << prediction.config.str() << "\n";
  }
}

/// Registers MLIR's printing and context options (--mlir-print-debuginfo,
/// ...), which apply to the ttir printed here, in `category`: help lists
/// whatever this MLIR declares there, and hides the LLVM options that nothing
/// here reads.
static void registerMLIROptions(llvm::cl::OptionCategory &category) {
  llvm::DenseMap<llvm::StringRef, llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  llvm::DenseSet<llvm::cl::Option *> before;
  for (const auto &[name, option] : options)
    before.insert(option);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  for (const auto &[name, option] : options)
    if (!before.contains(option))
      option->addCategory(category);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerMLIROptions(mlirCategory);
  llvm::cl::HideUnrelatedOptions({&toolCategory, &mlirCategory});
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "tilec-kernel: print the ttir of a kernel definition\n");

  if (listKernelsOption) {
    printKernelList(llvm::outs());
    return 0;
  }
  if (kernelName.empty()) {
    llvm::errs() << "tilec-kernel: error: give --kernel <name> or --list\n";
    return 1;
  }
  const KernelDefinition *kernel = lookupKernel(kernelName);
  if (!kernel) {
    llvm::errs() << "tilec-kernel: error: unknown kernel '" << kernelName
                 << "'; known kernels: ";
    llvm::interleaveComma(listKernels(), llvm::errs(),
                          [](const KernelDefinition *known) {
                            llvm::errs() << known->getName();
                          });
    llvm::errs() << "\n";
    return 1;
  }
  tilec::Result<Config> config = Config::parse(configText);
  if (!config) {
    llvm::errs() << "tilec-kernel: error: " << config.message() << "\n";
    return 1;
  }

  tilec::Result<std::map<std::string, int64_t>> values =
      tilec::parseNamedIntegers(argValues.getValue());
  tilec::Result<Specialization> facts =
      values ? kernel->getDescription().specializationOfArguments(*values)
             : tilec::Result<Specialization>(values.status());
  if (!facts) {
    llvm::errs() << "tilec-kernel: error: --arg-values " << facts.message()
                 << "\n";
    return 1;
  }

  mlir::MLIRContext context;
  // Prints `kernels/matmul.cpp:79:1: error: ...`, with the source line when
  // the kernel's file is found from the working directory.
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  auto module = kernel->specialize(context, *config, *facts);
  if (mlir::failed(module))
    return 1;

  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "tilec-kernel: error: " << error << "\n";
    return 1;
  }
  mlir::OpPrintingFlags flags;
  if (!numberedValues)
    flags.printNameLocAsPrefix();
  (*module)->print(output->os(), flags);
  output->os() << "\n";
  output->keep();
  return 0;
}
