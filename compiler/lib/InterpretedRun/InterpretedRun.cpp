//===- InterpretedRun.cpp - a kernel's run on the interpreter -------------===//

#include "tilec/Interpreter/InterpretedRun.h"

#include "tilec/Pipeline/Pipeline.h"

#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cstring>

namespace tilec::interp {
namespace {

/// The kernel's arguments in signature order, its pointers to the problem's
/// tensors in `memory` (the output poisoned, all bits set, as on the GPU).
Result<std::vector<int64_t>> bindArguments(const KernelDescription &kernel,
                                           harness::HostProblem &problem,
                                           KernelMemory &memory) {
  auto signature = harness::signatureArguments(kernel, problem);
  if (!signature)
    return signature.status();
  std::vector<int64_t> arguments;
  for (const harness::HostArgument &argument : *signature) {
    if (!argument.tensor) {
      arguments.push_back(argument.value);
      continue;
    }
    std::vector<uint8_t> &bytes = argument.tensor->bytes;
    if (argument.isOutput)
      std::memset(bytes.data(), 0xff, bytes.size());
    arguments.push_back(static_cast<int64_t>(
        memory.add(argument.name, bytes.data(), bytes.size())));
  }
  return arguments;
}

} // namespace

Result<harness::RunReport> interpretAndCheck(
    mlir::MLIRContext &context, const kernel::KernelDefinition &definition,
    const harness::RunRequest &request, const InterpretOptions &options) {
  const KernelDescription &description = definition.getDescription();
  auto module = definition.specialize(
      context, request.config, description.specializationOf(request.call));
  if (mlir::failed(module))
    return Status::error("cannot specialize " + description.getName() + " to " +
                         request.config.str() + ": " + kSeeDiagnostics.str());
  // The ttir stage's passes: the module the interpreter runs is the .ttir
  // artifact `tilec compile` writes.
  mlir::PassManager passes(&context);
  buildTTIRPipeline(passes);
  if (mlir::failed(passes.run(**module)))
    return Status::error("the ttir stage failed: " + kSeeDiagnostics.str());

  auto grid = description.evaluateGrid(request.config, request.call);
  if (!grid)
    return grid.status();
  auto problem = harness::buildHostProblem(request, /*withReference=*/true);
  if (!problem)
    return problem.status();
  KernelMemory memory;
  auto arguments = bindArguments(description, *problem, memory);
  if (!arguments)
    return arguments.status();
  // Launched as often as the request asks, on the same buffers (the
  // tuner's repeated timing runs), then checked.
  for (int launch = 0; launch < std::max(request.launches, 1); ++launch)
    if (mlir::failed(interpretKernel(**module, {grid->x, grid->y, grid->z},
                                     *arguments, memory, options)))
      return Status::error("interpreting " + description.getName() +
                           (launch ? " again on the same buffers" : "") +
                           " failed: " + kSeeDiagnostics.str());
  const harness::ReferenceProblem &reference = problem->reference;
  return harness::compareOutput(reference.tensors.at(reference.output),
                                reference.expected, reference.tolerance);
}

} // namespace tilec::interp
