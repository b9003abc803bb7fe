//===- Expression.cpp - The integer expressions of a description ---------===//

#include "tilec/contract/Expression.h"

#include "ContractUtils.h"

#include <cstdint>
#include <cassert>
#include <cmath>
#include <vector>

namespace tilec {

using contract_detail::parseInteger;

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

// The "C" locale's character classes, inline: the parser asks for them at
// every token, and the <cctype> calls were about a tenth of a selection's
// host time under perf on a development machine.
bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Recursive descent over the text, evaluating as it parses: the expressions
// are a few tokens long. A selection evaluates a dozen of them (its key, its
// arguments' defaults, the requirements and the grid), so a token is read
// with plain character comparisons.
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
      // An integral real past int64 (1.7e48 from a product of divisions,
      // found by ExpressionFuzzer) has no integer to convert to.
      if (!(value.real >= -0x1p63 && value.real < 0x1p63))
        return Status::error("expression '" + std::string(text_) +
                             "' is out of the 64-bit range (" +
                             std::to_string(value.real) + ")");
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
    while (pos_ < text_.size() && isSpace(text_[pos_]))
      ++pos_;
  }
  /// The next character, past spaces; 0 at the end.
  char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  /// Consumes `token` (one or two characters) if it comes next.
  bool consume(std::string_view token) {
    assert(!token.empty() && "a token has a character");
    if (peek() != token[0] || text_.size() - pos_ < token.size())
      return false;
    for (size_t i = 1; i < token.size(); ++i)
      if (text_[pos_ + i] != token[i])
        return false;
    pos_ += token.size();
    return true;
  }
  bool needInteger(const Value &value, const char *what) {
    if (!value.isInteger)
      fail(std::string(what) + " needs integers; wrap reals in ceil() or "
                               "floor()");
    return value.isInteger;
  }

  /// A comparison is 1 or 0, and binds loosest: "BLOCK_N >= n_cols".
  Value expression() {
    Value value = sum();
    char next = peek();
    if (next != '<' && next != '>' && next != '=' && next != '!')
      return value;
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (!error_.empty() || !consume(op))
        continue;
      Value rhs = sum();
      double a = value.asReal(), b = rhs.asReal();
      std::string_view name = op;
      bool holds = name == "<=" ? a <= b
                   : name == ">=" ? a >= b
                   : name == "==" ? a == b
                   : name == "!=" ? a != b
                   : name == "<"  ? a < b
                                  : a > b;
      return Value::ofInteger(holds ? 1 : 0);
    }
    return value;
  }

  Value sum() {
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
        if (overflowsDivision(value.integer, rhs.integer))
          return value;
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
        if (overflowsDivision(value.integer, rhs.integer))
          return value;
        // Floor modulo from the truncating one: a - floorDiv(a, b) * b
        // overflows for |b| near 2^63 (5 % -2^63 is 5 - 2^63), this does
        // not (r and b have opposite signs where they are added).
        int64_t remainder = value.integer % rhs.integer;
        if (remainder != 0 && (remainder < 0) != (rhs.integer < 0))
          remainder += rhs.integer;
        value = Value::ofInteger(remainder);
      } else {
        break;
      }
    }
    return value;
  }

  // One level deeper (a parenthesis, a unary minus, a function's
  // arguments): descriptions are a few levels deep; a cached or fuzzed one
  // could be anything, and each level is a frame of the recursive descent
  // ("--...-1" of a few thousand levels overflowed the stack, found by
  // ExpressionFuzzer).
  bool enter() {
    if (++depth_ > kMaxDepth) {
      fail("nested deeper than " + std::to_string(kMaxDepth));
      return false;
    }
    return true;
  }

  Value unary() {
    if (consume("-")) {
      if (!enter())
        return {};
      Value value = unary();
      --depth_;
      if (value.isInteger && value.integer == INT64_MIN) {
        fail("integer overflow");
        return value;
      }
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
      if (!enter())
        return {};
      Value value = expression();
      --depth_;
      if (!consume(")"))
        fail("missing ')'");
      return value;
    }
    if (isDigit(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        ++pos_;
      std::optional<int64_t> number =
          parseInteger(text_.substr(start, pos_ - start));
      if (!number)
        fail("integer out of range");
      return Value::ofInteger(number.value_or(0));
    }
    if (isAlpha(c) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (isAlpha(text_[pos_]) || isDigit(text_[pos_]) ||
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
      if (!enter())
        return {};
      do {
        args.push_back(expression());
        if (!error_.empty())
          return {};
      } while (consume(","));
      --depth_;
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
      if (args[0].integer == INT64_MIN ||
          overflowsDivision(-args[0].integer, args[1].integer))
        return {};
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

  /// INT64_MIN / -1 is the one quotient that does not fit.
  bool overflowsDivision(int64_t a, int64_t b) {
    if (a == INT64_MIN && b == -1) {
      fail("integer overflow");
      return true;
    }
    return false;
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
  static constexpr int kMaxDepth = 64;
  int depth_ = 0;
};

} // namespace

Result<int64_t>
evaluateExpression(std::string_view expression,
                   const std::map<std::string, int64_t> &names) {
  return ExpressionEvaluator(expression, names).run();
}

} // namespace tilec
