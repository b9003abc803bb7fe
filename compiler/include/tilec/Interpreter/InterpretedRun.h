//===- InterpretedRun.h - a kernel's run on the interpreter -----*- C++ -*-===//
//
// `tilec run --interpret`: a registered kernel specialized for a request,
// through the ttir stage, run by the interpreter on the harness's random
// inputs (the output poisoned) and checked against the float64 reference,
// as `tilec run` checks the GPU's run. No GPU and no driver are needed.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_INTERPRETER_INTERPRETEDRUN_H
#define TILEC_INTERPRETER_INTERPRETEDRUN_H

#include "tilec/Harness/KernelHarness.h"
#include "tilec/Interpreter/Interpreter.h"
#include "tilec/Kernel/KernelDefinition.h"

#include "mlir/IR/MLIRContext.h"

namespace tilec::interp {

/// Interprets `definition` for `request` (its config and call) and checks
/// the output. The kernel's and the interpreter's errors are diagnostics
/// on `context`; the result's error then says to see them.
Result<harness::RunReport> interpretAndCheck(
    mlir::MLIRContext &context, const kernel::KernelDefinition &definition,
    const harness::RunRequest &request, const InterpretOptions &options = {});

} // namespace tilec::interp

#endif // TILEC_INTERPRETER_INTERPRETEDRUN_H
