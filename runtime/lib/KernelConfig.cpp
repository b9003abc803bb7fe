//===- KernelConfig.cpp - Configs, keys and grids of a kernel -------------===//
//
// The declared side of a kernel as the runtime sees it: config text, the
// expression language of autotune keys and grids, and applying a call to a
// candidate config.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/KernelCompiler.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

namespace tilec::rt {

KernelCompiler::~KernelCompiler() = default;

namespace {

bool isIdentifier(std::string_view text) {
  if (text.empty() ||
      !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
    return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::optional<int64_t> parseInteger(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  std::string copy(text);
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(copy.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return std::nullopt;
  return static_cast<int64_t>(value);
}

} // namespace

//===----------------------------------------------------------------------===//
// KernelConfig
//===----------------------------------------------------------------------===//

std::string KernelConfig::str() const {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto &[key, value] : params)
    entries.emplace_back(key, std::to_string(value));
  for (const auto &[key, value] : types)
    entries.emplace_back(key, value);
  std::sort(entries.begin(), entries.end());
  std::string text;
  for (const auto &[key, value] : entries)
    text += key + "=" + value + ",";
  text += "num_warps=" + std::to_string(numWarps) +
          ",num_stages=" + std::to_string(numStages);
  return text;
}

Result<KernelConfig> KernelConfig::parse(std::string_view text) {
  KernelConfig config;
  if (trim(text).empty())
    return config;
  auto fail = [&](const std::string &message) {
    return Status::error("config '" + std::string(text) + "': " + message);
  };
  std::set<std::string, std::less<>> seen;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view entry = trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (entry.empty())
      return fail("empty entry (stray ',')");
    size_t equals = entry.find('=');
    if (equals == std::string_view::npos)
      return fail("expected KEY=VALUE, got '" + std::string(entry) + "'");
    std::string_view key = trim(entry.substr(0, equals));
    std::string_view value = trim(entry.substr(equals + 1));
    if (!isIdentifier(key))
      return fail("malformed key '" + std::string(key) + "'");
    if (value.empty())
      return fail("'" + std::string(key) + "' has no value");
    if (!seen.insert(std::string(key)).second)
      return fail("'" + std::string(key) + "' is given twice");
    std::optional<int64_t> number = parseInteger(value);
    if (key == "num_warps") {
      if (!number || *number < 1 || *number > 32 || (*number & (*number - 1)))
        return fail("num_warps must be a power of two from 1 to 32, got '" +
                    std::string(value) + "'");
      config.numWarps = static_cast<int>(*number);
    } else if (key == "num_stages") {
      if (!number || *number < 1 || *number > 8)
        return fail("num_stages must be an integer from 1 to 8, got '" +
                    std::string(value) + "'");
      config.numStages = static_cast<int>(*number);
    } else if (number) {
      config.params[std::string(key)] = *number;
    } else if (isIdentifier(value)) {
      config.types[std::string(key)] = std::string(value);
    } else {
      return fail("'" + std::string(key) + "' has value '" +
                  std::string(value) + "', neither an integer nor a type name");
    }
  }
  return config;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

namespace {

// A value of an expression: an exact integer, or a real where log2 or '/'
// made one (ceil/floor bring it back).
struct Value {
  bool isInteger = true;
  int64_t integer = 0;
  double real = 0;

  static Value ofInteger(int64_t v) {
    return {true, v, static_cast<double>(v)};
  }
  static Value ofReal(double v) { return {false, 0, v}; }
  double asReal() const {
    return isInteger ? static_cast<double>(integer) : real;
  }
};

// Recursive descent over the text, evaluating as it parses: the expressions
// are a few tokens long and evaluated once per call of a new shape.
class ExpressionEvaluator {
public:
  ExpressionEvaluator(std::string_view text,
                      const std::map<std::string, int64_t> &names)
      : text_(text), names_(names) {}

  Result<int64_t> run() {
    Value value = expression();
    skipSpace();
    if (error_.empty() && pos_ != text_.size())
      fail("unexpected '" + std::string(text_.substr(pos_, 1)) + "'");
    if (!error_.empty())
      return Status::error("expression '" + std::string(text_) +
                           "': " + error_);
    if (!value.isInteger) {
      if (value.real != std::floor(value.real) || !std::isfinite(value.real))
        return Status::error(
            "expression '" + std::string(text_) + "' is not an integer (" +
            std::to_string(value.real) + "); wrap it in ceil() or floor()");
      return static_cast<int64_t>(value.real);
    }
    return value.integer;
  }

private:
  void fail(const std::string &message) {
    if (error_.empty())
      error_ = message + " at column " + std::to_string(pos_ + 1);
  }
  void skipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool consume(std::string_view token) {
    skipSpace();
    if (text_.substr(pos_, token.size()) == token) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  bool needInteger(const Value &value, const char *what) {
    if (!value.isInteger)
      fail(std::string(what) + " needs integers; wrap reals in ceil() or "
                               "floor()");
    return value.isInteger;
  }

  Value expression() {
    Value value = term();
    while (error_.empty()) {
      if (consume("+")) {
        Value rhs = term();
        value = combine(value, rhs, '+');
      } else if (consume("-")) {
        Value rhs = term();
        value = combine(value, rhs, '-');
      } else {
        break;
      }
    }
    return value;
  }

  Value term() {
    Value value = unary();
    while (error_.empty()) {
      if (consume("//")) {
        Value rhs = unary();
        if (!needInteger(value, "'//'") || !needInteger(rhs, "'//'"))
          return value;
        if (rhs.integer == 0) {
          fail("division by zero");
          return value;
        }
        value = Value::ofInteger(floorDiv(value.integer, rhs.integer));
      } else if (consume("*")) {
        Value rhs = unary();
        value = combine(value, rhs, '*');
      } else if (consume("/")) {
        Value rhs = unary();
        if (rhs.asReal() == 0) {
          fail("division by zero");
          return value;
        }
        value = Value::ofReal(value.asReal() / rhs.asReal());
      } else if (consume("%")) {
        Value rhs = unary();
        if (!needInteger(value, "'%'") || !needInteger(rhs, "'%'"))
          return value;
        if (rhs.integer == 0) {
          fail("modulo by zero");
          return value;
        }
        value = Value::ofInteger(
            value.integer - floorDiv(value.integer, rhs.integer) * rhs.integer);
      } else {
        break;
      }
    }
    return value;
  }

  Value unary() {
    if (consume("-")) {
      Value value = unary();
      return value.isInteger ? Value::ofInteger(-value.integer)
                             : Value::ofReal(-value.real);
    }
    return primary();
  }

  Value primary() {
    skipSpace();
    if (pos_ >= text_.size()) {
      fail("unexpected end");
      return {};
    }
    char c = text_[pos_];
    if (consume("(")) {
      Value value = expression();
      if (!consume(")"))
        fail("missing ')'");
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      std::optional<int64_t> number =
          parseInteger(text_.substr(start, pos_ - start));
      if (!number)
        fail("integer out of range");
      return Value::ofInteger(number.value_or(0));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
              text_[pos_] == '_'))
        ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      if (consume("("))
        return call(name);
      auto it = names_.find(name);
      if (it == names_.end()) {
        std::string known;
        for (const auto &[candidate, value] : names_)
          known += (known.empty() ? "" : ", ") + candidate;
        pos_ = start;
        fail("no value for '" + name +
             "' (known: " + (known.empty() ? "none" : known) + ")");
        return {};
      }
      return Value::ofInteger(it->second);
    }
    fail("unexpected '" + std::string(1, c) + "'");
    return {};
  }

  Value call(const std::string &function) {
    std::vector<Value> args;
    if (!consume(")")) {
      do {
        args.push_back(expression());
        if (!error_.empty())
          return {};
      } while (consume(","));
      if (!consume(")")) {
        fail("missing ')' after the arguments of " + function);
        return {};
      }
    }
    auto arity = [&](size_t count) {
      if (args.size() != count)
        fail(function + " takes " + std::to_string(count) +
             " argument(s), got " + std::to_string(args.size()));
      return args.size() == count;
    };
    if (function == "cdiv") {
      if (!arity(2) || !needInteger(args[0], "cdiv") ||
          !needInteger(args[1], "cdiv"))
        return {};
      if (args[1].integer == 0) {
        fail("cdiv by zero");
        return {};
      }
      return Value::ofInteger(-floorDiv(-args[0].integer, args[1].integer));
    }
    if (function == "ceil" || function == "floor") {
      if (!arity(1))
        return {};
      if (args[0].isInteger)
        return args[0];
      double r = function == "ceil" ? std::ceil(args[0].real)
                                    : std::floor(args[0].real);
      if (!std::isfinite(r) || std::fabs(r) > 9.0e18) {
        fail(function + " of a value out of range");
        return {};
      }
      return Value::ofInteger(static_cast<int64_t>(r));
    }
    if (function == "log2") {
      if (!arity(1))
        return {};
      double x = args[0].asReal();
      if (!(x > 0)) {
        fail("log2 of " + std::to_string(x) + " (needs a positive value)");
        return {};
      }
      // Exact for powers of two, so ceil(log2(4096)) is 12, never 13.
      if (args[0].isInteger && (args[0].integer & (args[0].integer - 1)) == 0) {
        int64_t log = 0;
        while ((int64_t(1) << log) < args[0].integer)
          ++log;
        return Value::ofInteger(log);
      }
      return Value::ofReal(std::log2(x));
    }
    if (function == "next_power_of_2") {
      if (!arity(1) || !needInteger(args[0], "next_power_of_2"))
        return {};
      int64_t x = args[0].integer, p = 1;
      if (x > (int64_t(1) << 62)) {
        fail("next_power_of_2 of a value out of range");
        return {};
      }
      while (p < x)
        p <<= 1;
      return Value::ofInteger(p);
    }
    if (function == "min" || function == "max") {
      if (!arity(2))
        return {};
      bool pickFirst = function == "min" ? args[0].asReal() <= args[1].asReal()
                                         : args[0].asReal() >= args[1].asReal();
      return pickFirst ? args[0] : args[1];
    }
    fail("unknown function '" + function +
         "' (known: cdiv, ceil, floor, log2, next_power_of_2, min, max)");
    return {};
  }

  static int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }

  Value combine(const Value &lhs, const Value &rhs, char op) {
    if (lhs.isInteger && rhs.isInteger) {
      int64_t result = 0;
      bool overflow =
          op == '+' ? __builtin_add_overflow(lhs.integer, rhs.integer, &result)
          : op == '-'
              ? __builtin_sub_overflow(lhs.integer, rhs.integer, &result)
              : __builtin_mul_overflow(lhs.integer, rhs.integer, &result);
      if (overflow)
        fail("integer overflow");
      return Value::ofInteger(result);
    }
    double a = lhs.asReal(), b = rhs.asReal();
    return Value::ofReal(op == '+' ? a + b : op == '-' ? a - b : a * b);
  }

  std::string_view text_;
  const std::map<std::string, int64_t> &names_;
  size_t pos_ = 0;
  std::string error_;
};

// Sizes, then the kernel's parameter defaults, then the call's parameters:
// the names an expression of a call can use.
std::map<std::string, int64_t> callNames(const KernelDescription &kernel,
                                         const CallSpec &call) {
  std::map<std::string, int64_t> names = call.sizes;
  for (const auto &[name, value] : kernel.paramDefaults)
    names.insert({name, value});
  for (const auto &[name, value] : call.params)
    names[name] = value;
  return names;
}

} // namespace

Result<int64_t>
evaluateExpression(std::string_view expression,
                   const std::map<std::string, int64_t> &names) {
  return ExpressionEvaluator(expression, names).run();
}

Specialization specializeCall(const KernelDescription &kernel,
                              const CallSpec &call) {
  return Specialization::derive(call.sizes)
      .restrictedTo(kernel.integerArguments);
}

Result<std::string> computeAutotuneKey(const KernelDescription &kernel,
                                       const CallSpec &call) {
  std::map<std::string, int64_t> names = callNames(kernel, call);
  std::string key;
  for (const AutotuneKeyDecl &entry : kernel.key) {
    std::string value;
    if (!entry.derivation.empty()) {
      Result<int64_t> derived = evaluateExpression(entry.derivation, names);
      if (!derived)
        return derived.status().withContext("autotune key '" + entry.name +
                                            "' of " + kernel.name);
      value = std::to_string(*derived);
    } else if (auto type = call.types.find(entry.name);
               type != call.types.end()) {
      value = type->second;
    } else if (auto size = names.find(entry.name); size != names.end()) {
      value = std::to_string(size->second);
    } else if (auto fallback = kernel.typeDefaults.find(entry.name);
               fallback != kernel.typeDefaults.end()) {
      value = fallback->second;
    } else {
      return Status::error("autotune key '" + entry.name + "' of " +
                           kernel.name +
                           " has no value: give it as a size (M=...), a type "
                           "(DTYPE=...) or a parameter of the call");
    }
    key += (key.empty() ? "" : ",") + entry.name + "=" + value;
  }
  return key;
}

Result<KernelConfig> specializeConfig(const KernelDescription &kernel,
                                      const KernelConfig &candidate,
                                      const CallSpec &call) {
  KernelConfig config = candidate;
  for (const auto &[name, value] : kernel.typeDefaults)
    config.types.insert({name, value});
  for (const auto &[name, value] : call.types) {
    if (!kernel.typeDefaults.count(name) && !config.types.count(name))
      return Status::error(kernel.name + " has no type parameter '" + name +
                           "'");
    config.types[name] = value;
  }
  for (const auto &[name, value] : kernel.paramDefaults)
    config.params.insert({name, value});
  for (const auto &[name, value] : call.params) {
    if (!kernel.paramDefaults.count(name) && !config.params.count(name) &&
        !kernel.derivedParams.count(name))
      return Status::error(kernel.name + " has no meta-parameter '" + name +
                           "' that a call can set");
    config.params[name] = value;
  }
  std::map<std::string, int64_t> names = callNames(kernel, call);
  for (const auto &[name, expression] : kernel.derivedParams) {
    if (call.params.count(name))
      continue;
    Result<int64_t> value = evaluateExpression(expression, names);
    if (!value)
      return value.status().withContext("meta-parameter '" + name + "' of " +
                                        kernel.name);
    config.params[name] = *value;
  }
  return config;
}

Result<Dim3> evaluateGrid(const KernelDescription &kernel,
                          const KernelConfig &config, const CallSpec &call) {
  if (kernel.grid.empty() || kernel.grid.size() > 3)
    return Status::error(kernel.name + " declares " +
                         std::to_string(kernel.grid.size()) +
                         " grid axes; a grid has 1 to 3");
  std::map<std::string, int64_t> names = callNames(kernel, call);
  for (const auto &[name, value] : config.params)
    names[name] = value;
  uint32_t axes[3] = {1, 1, 1};
  for (size_t i = 0; i < kernel.grid.size(); ++i) {
    Result<int64_t> value = evaluateExpression(kernel.grid[i], names);
    if (!value)
      return value.status().withContext("grid of " + kernel.name);
    int64_t limit = i == 0 ? 2147483647 : 65535;
    if (*value < 0 || *value > limit)
      return Status::error("grid of " + kernel.name + ": axis " +
                           std::to_string(i) + " = " + std::to_string(*value) +
                           " is outside [0, " + std::to_string(limit) + "]");
    axes[i] = static_cast<uint32_t>(*value);
  }
  return Dim3{axes[0], axes[1], axes[2]};
}

Specialization
Specialization::derive(const std::map<std::string, int64_t> &values) {
  Specialization result;
  for (const auto &[name, value] : values) {
    if (value == 1)
      result.equalToOne.insert(name);
    else if (value % 16 == 0)
      result.divisibility[name] = 16;
  }
  return result;
}

Specialization Specialization::restrictedTo(
    const std::map<std::string, int64_t> &integerArguments) const {
  Specialization result;
  for (const auto &[name, divisor] : divisibility)
    if (auto it = integerArguments.find(name);
        it != integerArguments.end() && it->second < divisor)
      result.divisibility[name] = divisor;
  for (const std::string &name : equalToOne)
    if (auto it = integerArguments.find(name);
        it != integerArguments.end() && it->second <= 1)
      result.equalToOne.insert(name);
  return result;
}

std::string Specialization::str() const {
  std::string text;
  auto append = [&](const std::string &part) {
    text += (text.empty() ? "" : ",") + part;
  };
  for (const auto &[name, divisor] : divisibility)
    append(name + "%" + std::to_string(divisor));
  for (const std::string &name : equalToOne)
    append(name + "=1");
  return text;
}

} // namespace tilec::rt
