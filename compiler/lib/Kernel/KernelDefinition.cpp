//===- KernelDefinition.cpp - kernels with symbolic meta-parameters -------===//

#include "tilec/Kernel/KernelDefinition.h"

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Kernel/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <set>

using namespace mlir;
using namespace tilec;
using namespace tilec::kernel;

/// The scalar element types a type parameter may name.
static Type parseScalarType(MLIRContext &context, StringRef name) {
  Builder builder(&context);
  return llvm::StringSwitch<Type>(name)
      .Case("i1", builder.getI1Type())
      .Case("i8", builder.getI8Type())
      .Case("i16", builder.getI16Type())
      .Case("i32", builder.getI32Type())
      .Case("i64", builder.getI64Type())
      .Case("f16", builder.getF16Type())
      .Case("bf16", builder.getBF16Type())
      .Case("f32", builder.getF32Type())
      .Case("f64", builder.getF64Type())
      .Default(Type());
}

//===----------------------------------------------------------------------===//
// KernelDefinition: specialization
//===----------------------------------------------------------------------===//

void KernelDefinition::loadDialects(MLIRContext &context) {
  context.loadDialect<tile::TileDialect, arith::ArithDialect, math::MathDialect,
                      scf::SCFDialect, func::FuncDialect>();
}

/// The MLIR type of a resolved argument type string; null if unsupported.
static Type parseArgumentType(MLIRContext &context, StringRef type) {
  if (type.consume_front("ptr<") && type.consume_back(">")) {
    Type pointee = parseScalarType(context, type);
    return pointee ? tile::PointerType::get(pointee) : Type();
  }
  return parseScalarType(context, type);
}

FailureOr<OwningOpRef<ModuleOp>>
KernelDefinition::specialize(MLIRContext &context, const Config &config,
                             const Specialization &facts) const {
  loadDialects(context);
  const KernelDescription &d = description;
  const std::vector<ArgumentDecl> &signature = d.getSignature();
  // Unnamed ops and diagnostics point at the definition; let() names ops.
  Location kernelLoc =
      FileLineColLoc::get(&context, d.getSourceFile(), d.getLine(), 1);

  Result<Config> resolved = d.resolveConfig(config);
  if (!resolved) {
    emitError(kernelLoc) << resolved.message();
    return failure();
  }

  Result<std::vector<ArgumentDecl>> typed = d.getSignature(*resolved);
  if (!typed) {
    emitError(kernelLoc) << typed.message();
    return failure();
  }
  SmallVector<Type> argTypes;
  for (const ArgumentDecl &argument : *typed) {
    const std::string &typeText = argument.type;
    Type type = parseArgumentType(context, typeText);
    if (!type) {
      emitError(kernelLoc) << "argument '" << argument.name
                           << "' has the unsupported type '" << typeText << "'";
      return failure();
    }
    argTypes.push_back(type);
  }

  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(kernelLoc);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, kernelLoc, d.getName(),
                                   builder.getFunctionType(argTypes, {}));
  func->setAttr(tile::TileDialect::getKernelAttrName(), builder.getUnitAttr());
  Block *entry = func.addEntryBlock();

  for (const auto &[name, divisor] : facts.divisibility)
    if (divisor <= 0 || !llvm::isPowerOf2_64(divisor)) {
      emitError(kernelLoc) << "argument '" << name
                           << "': divisibility must be a power of two, got "
                           << divisor;
      return failure();
    }
  auto known = [&](const std::string &name) {
    return llvm::any_of(signature, [&](const ArgumentDecl &argument) {
      return argument.name == name;
    });
  };
  for (const auto &[name, divisor] : facts.divisibility)
    if (!known(name)) {
      emitError(kernelLoc) << "a fact names '" << name
                           << "', which is not an argument of " << d.getName();
      return failure();
    }
  for (const std::string &name : facts.equalToOne)
    if (!known(name)) {
      emitError(kernelLoc) << "a fact names '" << name
                           << "', which is not an argument of " << d.getName();
      return failure();
    }

  KernelBuilder kernelBuilder(entry, kernelLoc);
  builder.setInsertionPointToStart(entry);
  for (auto [index, argument] : llvm::enumerate(signature)) {
    int64_t divisor = argument.divisibilityHint;
    auto fact = facts.divisibility.find(argument.name);
    if (fact != facts.divisibility.end())
      divisor = std::max(divisor, fact->second);
    if (divisor != 0)
      func.setArgAttr(index, tile::TileDialect::getDivisibilityAttrName(),
                      builder.getI32IntegerAttr(divisor));
    BlockArgument value = entry->getArgument(index);
    // Named locations make the dumps and diagnostics use the argument names.
    value.setLoc(
        NameLoc::get(StringAttr::get(&context, argument.name), kernelLoc));
    if (facts.equalToOne.count(argument.name)) {
      if (argument.divisibilityHint > 1) {
        emitError(kernelLoc) << "argument '" << argument.name
                             << "' is declared divisible by "
                             << argument.divisibilityHint
                             << " and cannot equal 1";
        return failure();
      }
      if (!value.getType().isSignlessInteger()) {
        emitError(kernelLoc) << "argument '" << argument.name
                             << "' is not an integer and cannot equal 1";
        return failure();
      }
      func.setArgAttr(index, tile::TileDialect::getEqualToOneAttrName(),
                      builder.getUnitAttr());
      kernelBuilder.bindArg(
          argument.name,
          arith::ConstantOp::create(builder, value.getLoc(),
                                    builder.getIntegerAttr(value.getType(), 1)));
      continue;
    }
    kernelBuilder.bindArg(argument.name, value);
  }
  for (const auto &[paramName, value] : resolved->params)
    kernelBuilder.bindParam(paramName, value);
  for (const auto &[typeName, value] : resolved->types)
    kernelBuilder.bindType(typeName, parseScalarType(context, value));

  body(kernelBuilder);
  if (kernelBuilder.hasErrors())
    return failure();
  builder.setInsertionPointToEnd(entry);
  func::ReturnOp::create(builder, kernelLoc);

  if (failed(verify(*module)))
    return failure();
  // The ttir is canonical, so that its hash identifies the kernel.
  PassManager passManager(&context, ModuleOp::getOperationName());
  passManager.addPass(createCanonicalizerPass());
  passManager.addPass(createCSEPass());
  if (failed(passManager.run(*module)))
    return failure();
  return module;
}
