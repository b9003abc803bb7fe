//===- CppSource.cpp - Descriptions and compile jsons as C++ --------------===//
//
// The generated code builds the objects through their public fields and the
// description's builder, so it states nothing the headers do not; every
// field toJson writes is written here too, which is what keeps the two forms
// the same object (checked by the embedded-bundle test).
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/CppSource.h"

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/KernelDescription.h"

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <map>

namespace tilec {

std::string cppStringLiteral(std::string_view text) {
  std::string out = "\"";
  size_t column = 0;
  for (unsigned char c : text) {
    if (column > 100) {
      out += "\"\n    \"";
      column = 0;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f || c == '?') {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\%03o", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
    column = out.size() - out.rfind('\n');
  }
  return out + "\"";
}

namespace {

std::string integer(int64_t value) {
  // INT64_MIN has no literal of its own.
  if (value == std::numeric_limits<int64_t>::min())
    return "std::numeric_limits<int64_t>::min()";
  return "int64_t(" + std::to_string(value) + "LL)";
}

std::string real(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

const char *argTypeEnumerator(ArgType type) {
  switch (type) {
  case ArgType::Ptr: return "Ptr";
  case ArgType::I8: return "I8";
  case ArgType::I16: return "I16";
  case ArgType::I32: return "I32";
  case ArgType::I64: return "I64";
  case ArgType::U8: return "U8";
  case ArgType::U16: return "U16";
  case ArgType::U32: return "U32";
  case ArgType::U64: return "U64";
  case ArgType::F16: return "F16";
  case ArgType::BF16: return "BF16";
  case ArgType::F32: return "F32";
  case ArgType::F64: return "F64";
  }
  return "Ptr";
}

template <typename Value, typename Write>
std::string mapLiteral(const std::map<std::string, Value> &map, Write write) {
  std::string out = "{";
  for (const auto &[key, value] : map)
    out += "{" + cppStringLiteral(key) + ", " + write(value) + "}, ";
  return out + "}";
}

std::string integerMap(const std::map<std::string, int64_t> &map) {
  return mapLiteral(map, integer);
}

std::string stringMap(const std::map<std::string, std::string> &map) {
  return mapLiteral(map, [](const std::string &value) {
    return cppStringLiteral(value);
  });
}

std::string stringList(const std::vector<std::string> &values) {
  std::string out = "{";
  for (const std::string &value : values)
    out += cppStringLiteral(value) + ", ";
  return out + "}";
}

/// The function around a body that fills `*d` (a new T built from `make`).
std::string onceFunction(std::string_view type, std::string_view function,
                         const std::string &make, const std::string &body) {
  return "static const " + std::string(type) + " &" + std::string(function) +
         "() {\n  static const " + std::string(type) + " *const built = [] {\n"
         "    auto *d = new " + std::string(type) + make + ";\n" + body +
         "    return d;\n  }();\n  return *built;\n}\n";
}

std::string parameterStatement(const MetaParameter &p) {
  std::string out = "    { tilec::MetaParameter p(" + cppStringLiteral(p.name) + ");";
  if (p.defaultValue)
    out += " p.defaultValue = " + integer(*p.defaultValue) + ";";
  if (p.mustBePowerOfTwo)
    out += " p.mustBePowerOfTwo = true;";
  out += " p.minValue = " + integer(p.minValue) + "; p.maxValue = " +
         integer(p.maxValue) + ";";
  if (!p.minReason.empty())
    out += " p.minReason = " + cppStringLiteral(p.minReason) + ";";
  if (!p.maxReason.empty())
    out += " p.maxReason = " + cppStringLiteral(p.maxReason) + ";";
  if (!p.derivation.empty())
    out += " p.derivation = " + cppStringLiteral(p.derivation) + ";";
  return out + " d->param(std::move(p)); }\n";
}

std::string configStatement(const Config &config) {
  return "    { tilec::Config c; c.params = " + integerMap(config.params) +
         "; c.types = " + stringMap(config.types) +
         "; c.numWarps = " + std::to_string(config.numWarps) +
         "; c.numStages = " + std::to_string(config.numStages) +
         "; c.minBlocksPerSM = " + std::to_string(config.minBlocksPerSM) +
         "; d->candidate(std::move(c)); }\n";
}

std::string predictionStatement(const KernelDescription::Prediction &p) {
  const Config &config = p.config;
  return "    { tilec::Config c; c.params = " + integerMap(config.params) +
         "; c.types = " + stringMap(config.types) +
         "; c.numWarps = " + std::to_string(config.numWarps) +
         "; c.numStages = " + std::to_string(config.numStages) +
         "; c.minBlocksPerSM = " + std::to_string(config.minBlocksPerSM) +
         "; d->predictWhen(" + stringList(p.conditions) +
         ", std::move(c)); }\n";
}

} // namespace

std::string KernelDescription::toCpp(std::string_view function) const {
  std::string body;
  for (const MetaParameter &p : params)
    body += parameterStatement(p);
  for (const TypeParameter &t : typeParams) {
    body += "    { tilec::TypeParameter t(" + cppStringLiteral(t.name) + ", " +
            stringList(t.allowed) + ");";
    if (t.defaultValue)
      body += " t.defaultValue = std::string(" +
              cppStringLiteral(*t.defaultValue) + ");";
    body += " d->typeParam(std::move(t)); }\n";
  }
  for (const ArgumentDecl &a : signature)
    body += "    { tilec::ArgumentDecl a(" + cppStringLiteral(a.name) + ", " +
            cppStringLiteral(a.type) +
            "); a.divisibilityHint = " + integer(a.divisibilityHint) +
            "; a.defaultValue = " + cppStringLiteral(a.defaultValue) +
            "; a.specializedFrom = " + integer(a.specializedFrom) +
            "; a.specialized = " + (a.specialized ? "true" : "false") +
            "; d->arg(std::move(a)); }\n";
  for (const AutotuneKeyEntry &k : autotuneKey)
    body += "    d->key(" + cppStringLiteral(k.name) + ", " +
            cppStringLiteral(k.derivation) + ");\n";
  for (const Config &config : configs)
    body += configStatement(config);
  body += "    d->grid(" + stringList(gridAxes) + ");\n";
  body += "    d->flops(" + cppStringLiteral(flopsExpression) + ");\n";
  for (const auto &[condition, why] : requirements)
    body += "    d->require(" + cppStringLiteral(condition) + ", " +
            cppStringLiteral(why) + ");\n";
  for (const auto &[condition, why] : pruneConditions)
    body += "    d->pruneUnless(" + cppStringLiteral(condition) + ", " +
            cppStringLiteral(why) + ");\n";
  for (const Prediction &prediction : predictions)
    body += predictionStatement(prediction);
  body += "    d->testSizes(" + integerMap(defaultSizes) + ", " +
          integerMap(tailSizes) + ");\n";
  std::string make = "(" + cppStringLiteral(name) + ", " +
                     cppStringLiteral(sourceFile) + ", " +
                     std::to_string(line) + "u)";
  return onceFunction("tilec::KernelDescription", function, make, body);
}

std::string CompileMetadata::toCpp(std::string_view function) const {
  std::string body;
  auto set = [&](const char *field, const std::string &value) {
    body += "    d->" + std::string(field) + " = " + value + ";\n";
  };
  set("name", cppStringLiteral(name));
  set("kernelName", cppStringLiteral(kernelName));
  set("target", cppStringLiteral(target));
  set("numWarps", std::to_string(numWarps));
  set("threadsPerWarp", std::to_string(threadsPerWarp));
  set("numStages", std::to_string(numStages));
  set("minBlocksPerSM", std::to_string(minBlocksPerSM));
  set("sharedBytes", std::to_string(sharedBytes) + "u");
  for (const KernelArg &arg : signature)
    body += "    d->signature.push_back({" + cppStringLiteral(arg.name) + ", " +
            cppStringLiteral(arg.spelling) + ", tilec::ArgType::" +
            argTypeEnumerator(arg.type) + ", " + integer(arg.divisibility) +
            ", " + (arg.equalToOne ? "true" : "false") + "});\n";
  for (const TensorMapParam &map : tensorMaps)
    body += "    d->tensorMaps.push_back({" + cppStringLiteral(map.base) +
            ", " + cppStringLiteral(map.rows) + ", " +
            cppStringLiteral(map.cols) + ", " +
            cppStringLiteral(map.rowStride) + ", " +
            cppStringLiteral(map.element) + ", " + std::to_string(map.boxRows) +
            "u, " + std::to_string(map.boxCols) + "u, " +
            std::to_string(map.swizzleBytes) + "u});\n";
  for (auto [field, value] : {std::pair("registers", registers),
                              std::pair("spillStores", spillStores),
                              std::pair("spillLoads", spillLoads),
                              std::pair("stackFrameBytes", stackFrameBytes)})
    if (value)
      set(field, std::to_string(*value));
  if (wgmmaSerialized)
    set("wgmmaSerialized", "true");
  set("config", integerMap(config));
  set("types", stringMap(types));
  set("hashes", stringMap(hashes));
  set("compilerId", cppStringLiteral(compilerId));
  set("compileMs", mapLiteral(compileMs, real));
  for (const auto &[stage, record] : cache)
    body += "    d->cache[" + cppStringLiteral(stage) + "] = {" +
            cppStringLiteral(record.key) + ", " +
            cppStringLiteral(record.result) + "};\n";
  return onceFunction("tilec::CompileMetadata", function, "()", body);
}

} // namespace tilec
