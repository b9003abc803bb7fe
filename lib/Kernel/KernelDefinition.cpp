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

static llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

static bool isIdentifier(StringRef text) {
  if (text.empty() || !(llvm::isAlpha(text.front()) || text.front() == '_'))
    return false;
  return llvm::all_of(text,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

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

static bool isScalarTypeName(StringRef name) {
  return llvm::is_contained(
      {"i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"}, name);
}

llvm::Expected<Config> Config::parse(StringRef text) {
  Config config;
  if (text.trim().empty())
    return config;
  auto fail = [&](const Twine &message) {
    return makeError("config '" + text + "': " + message);
  };
  SmallVector<StringRef> entries;
  text.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  std::set<std::string> seen;
  for (StringRef entry : entries) {
    entry = entry.trim();
    if (entry.empty())
      return fail("empty entry (stray ',')");
    auto [key, value] = entry.split('=');
    key = key.trim();
    value = value.trim();
    if (!entry.contains('='))
      return fail("expected KEY=VALUE, got '" + entry + "'");
    if (!isIdentifier(key))
      return fail("malformed key '" + key + "'");
    if (value.empty())
      return fail("'" + key + "' has no value");
    if (!seen.insert(key.str()).second)
      return fail("'" + key + "' is given twice");

    int64_t number = 0;
    bool isNumber = !value.getAsInteger(10, number);
    if (key == "num_warps") {
      if (!isNumber || number < 1 || number > 32 ||
          !llvm::isPowerOf2_64(number))
        return fail("num_warps must be a power of two from 1 to 32, got '" +
                    value + "'");
      config.numWarps = number;
    } else if (key == "num_stages") {
      if (!isNumber || number < 1 || number > 8)
        return fail("num_stages must be an integer from 1 to 8, got '" + value +
                    "'");
      config.numStages = number;
    } else if (isNumber) {
      config.params[key.str()] = number;
    } else if (isScalarTypeName(value)) {
      config.types[key.str()] = value.str();
    } else {
      return fail("the value of '" + key +
                  "' must be an integer or a type (f16, bf16, f32, ...), "
                  "got '" +
                  value + "'");
    }
  }
  return config;
}

std::string Config::str() const {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &[key, value] : params)
    entries.emplace_back(key, std::to_string(value));
  for (const auto &[key, value] : types)
    entries.emplace_back(key, value);
  llvm::sort(entries);
  std::string text;
  for (const auto &[key, value] : entries)
    text += key + "=" + value + ",";
  text += "num_warps=" + std::to_string(numWarps) +
          ",num_stages=" + std::to_string(numStages);
  return text;
}

//===----------------------------------------------------------------------===//
// KernelDefinition: declaration
//===----------------------------------------------------------------------===//

KernelDefinition::KernelDefinition(StringRef name, StringRef sourceFile,
                                   BodyFn body, unsigned line)
    : name(name.str()), sourceFile(sourceFile.str()), line(line),
      body(std::move(body)) {}

KernelDefinition &KernelDefinition::param(MetaParameter parameter) {
  params.push_back(std::move(parameter));
  return *this;
}

KernelDefinition &KernelDefinition::typeParam(TypeParameter parameter) {
  typeParams.push_back(std::move(parameter));
  return *this;
}

KernelDefinition &KernelDefinition::arg(ArgumentDecl argument) {
  signature.push_back(std::move(argument));
  return *this;
}

KernelDefinition &KernelDefinition::candidate(StringRef configText) {
  llvm::Expected<Config> config = parseConfig(configText);
  if (!config)
    llvm::report_fatal_error(
        Twine("kernel definition '") + name +
        "': bad candidate config: " + llvm::toString(config.takeError()));
  configs.push_back(std::move(*config));
  return *this;
}

KernelDefinition &KernelDefinition::key(StringRef keyName,
                                        StringRef derivation) {
  autotuneKey.push_back({keyName.str(), derivation.str()});
  return *this;
}

KernelDefinition &KernelDefinition::grid(std::vector<std::string> axes) {
  gridAxes = std::move(axes);
  return *this;
}

//===----------------------------------------------------------------------===//
// KernelDefinition: configs
//===----------------------------------------------------------------------===//

std::vector<std::string> KernelDefinition::getMetaParameterNames() const {
  std::vector<std::string> names;
  for (const MetaParameter &parameter : params)
    names.push_back(parameter.name);
  for (const TypeParameter &parameter : typeParams)
    names.push_back(parameter.name);
  return names;
}

llvm::Expected<Config>
KernelDefinition::resolveConfig(const Config &config) const {
  auto fail = [&](const Twine &message) {
    return makeError("kernel '" + name + "': " + message);
  };
  auto findParam = [&](StringRef key) {
    return llvm::find_if(params, [&](const MetaParameter &parameter) {
      return parameter.name == key;
    });
  };
  auto findTypeParam = [&](StringRef key) {
    return llvm::find_if(typeParams, [&](const TypeParameter &parameter) {
      return parameter.name == key;
    });
  };
  std::string known = llvm::join(getMetaParameterNames(), ", ");

  for (const auto &entry : config.params) {
    if (findParam(entry.first) != params.end())
      continue;
    if (findTypeParam(entry.first) != typeParams.end())
      return fail("'" + entry.first + "' is a type parameter, got the number " +
                  Twine(entry.second));
    return fail("unknown meta-parameter '" + entry.first +
                "' (known: " + known + ")");
  }
  for (const auto &entry : config.types) {
    if (findTypeParam(entry.first) != typeParams.end())
      continue;
    if (findParam(entry.first) != params.end())
      return fail("'" + entry.first + "' takes an integer, got '" +
                  entry.second + "'");
    return fail("unknown meta-parameter '" + entry.first +
                "' (known: " + known + ")");
  }

  Config resolved;
  resolved.numWarps = config.numWarps;
  resolved.numStages = config.numStages;
  for (const MetaParameter &parameter : params) {
    auto given = config.params.find(parameter.name);
    std::optional<int64_t> value = parameter.defaultValue;
    if (given != config.params.end())
      value = given->second;
    if (!value)
      return fail("missing meta-parameter '" + parameter.name + "'" +
                  (parameter.derivation.empty()
                       ? ""
                       : " (" + parameter.derivation + ")"));
    if (parameter.mustBePowerOfTwo &&
        (*value <= 0 || !llvm::isPowerOf2_64(*value)))
      return fail("'" + parameter.name + "' must be a power of two, got " +
                  Twine(*value));
    if (*value < parameter.minValue)
      return fail("'" + parameter.name + "' must be at least " +
                  Twine(parameter.minValue) +
                  (parameter.minReason.empty()
                       ? ""
                       : " (" + parameter.minReason + ")") +
                  ", got " + Twine(*value));
    if (*value > parameter.maxValue)
      return fail("'" + parameter.name + "' must be at most " +
                  Twine(parameter.maxValue) +
                  (parameter.maxReason.empty()
                       ? ""
                       : " (" + parameter.maxReason + ")") +
                  ", got " + Twine(*value));
    resolved.params[parameter.name] = *value;
  }
  for (const TypeParameter &parameter : typeParams) {
    auto given = config.types.find(parameter.name);
    std::optional<std::string> value = parameter.defaultValue;
    if (given != config.types.end())
      value = given->second;
    if (!value)
      return fail("missing type parameter '" + parameter.name + "' (one of " +
                  llvm::join(parameter.allowed, ", ") + ")");
    if (!llvm::is_contained(parameter.allowed, *value))
      return fail("'" + parameter.name + "' must be one of " +
                  llvm::join(parameter.allowed, ", ") + ", got '" + *value +
                  "'");
    resolved.types[parameter.name] = *value;
  }
  return resolved;
}

llvm::Expected<Config> KernelDefinition::parseConfig(StringRef text) const {
  llvm::Expected<Config> config = Config::parse(text);
  if (!config)
    return config.takeError();
  return resolveConfig(*config);
}

/// `type` with a type parameter name replaced by its value: "ptr<DTYPE>" ->
/// "ptr<f16>".
static std::string substituteTypeParams(StringRef type, const Config &config) {
  StringRef inner = type;
  bool isPointer = type.consume_front("ptr<") && type.consume_back(">");
  if (isPointer)
    inner = type;
  auto it = config.types.find(inner.str());
  std::string resolved = it == config.types.end() ? inner.str() : it->second;
  return isPointer ? "ptr<" + resolved + ">" : resolved;
}

llvm::Expected<std::vector<ArgumentDecl>>
KernelDefinition::getSignature(const Config &config) const {
  llvm::Expected<Config> resolved = resolveConfig(config);
  if (!resolved)
    return resolved.takeError();
  std::vector<ArgumentDecl> result = signature;
  for (ArgumentDecl &argument : result)
    argument.type = substituteTypeParams(argument.type, *resolved);
  return result;
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

std::map<std::string, int64_t> KernelDefinition::getIntegerArguments() const {
  std::map<std::string, int64_t> arguments;
  for (const ArgumentDecl &argument : signature)
    if (llvm::is_contained({"i1", "i8", "i16", "i32", "i64"}, argument.type))
      arguments[argument.name] = std::max<int64_t>(1, argument.divisibilityHint);
  return arguments;
}

FailureOr<OwningOpRef<ModuleOp>>
KernelDefinition::specialize(MLIRContext &context, const Config &config,
                             const ArgumentFacts &facts) const {
  loadDialects(context);
  // Unnamed ops and diagnostics point at the definition; let() names ops.
  Location kernelLoc = FileLineColLoc::get(&context, sourceFile, line, 1);

  llvm::Expected<Config> resolved = resolveConfig(config);
  if (!resolved) {
    emitError(kernelLoc) << llvm::toString(resolved.takeError());
    return failure();
  }

  SmallVector<Type> argTypes;
  for (const ArgumentDecl &argument : signature) {
    std::string typeText = substituteTypeParams(argument.type, *resolved);
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
  auto func = func::FuncOp::create(builder, kernelLoc, name,
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
                           << "', which is not an argument of " << this->name;
      return failure();
    }
  for (const std::string &name : facts.equalToOne)
    if (!known(name)) {
      emitError(kernelLoc) << "a fact names '" << name
                           << "', which is not an argument of " << this->name;
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
