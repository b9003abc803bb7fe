//===- KernelDefinition.h - a kernel's body and its description -*- C++ -*-===//
//
// A kernel is defined once, in one file of kernels/: a body written with
// KernelBuilder and its KernelDescription (the kernel contract: signature,
// meta-parameters, candidates, key, grid, argument values, test sizes; see
// tilec/contract/KernelDescription.h). specialize() turns it plus one Config
// into canonical ttir: a module holding one func.func with `tile.kernel`.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_KERNEL_KERNELDEFINITION_H
#define TILEC_KERNEL_KERNELDEFINITION_H

#include "tilec/contract/KernelDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <functional>

namespace tilec::kernel {

class KernelBuilder;

class KernelDefinition {
public:
  using BodyFn = std::function<void(KernelBuilder &)>;

  KernelDefinition(KernelDescription description, BodyFn body)
      : description(std::move(description)), body(std::move(body)) {}

  const KernelDescription &getDescription() const { return description; }
  const std::string &getName() const { return description.getName(); }

  /// Loads the dialects a specialized kernel uses. specialize() does it too;
  /// call it first when specializing from several threads on one context.
  static void loadDialects(mlir::MLIRContext &context);

  /// Builds the kernel for `config`, verifies it and runs canonicalize and
  /// cse. Errors (a bad config, a mistake in the body) are emitted as
  /// diagnostics on `context` at the kernel's location.
  /// `facts` about argument values add divisibility hints and turn arguments
  /// equal to 1 into constants (the argument stays in the signature). A fact
  /// about a name that is not an argument is an error: restrict a call's
  /// facts first (Specialization::restrictedTo).
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
  specialize(mlir::MLIRContext &context, const Config &config,
             const Specialization &facts = {}) const;

private:
  KernelDescription description;
  BodyFn body;
};

} // namespace tilec::kernel

#endif // TILEC_KERNEL_KERNELDEFINITION_H
