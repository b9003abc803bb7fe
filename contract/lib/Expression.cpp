//===- Expression.cpp - The integer expressions of a description ---------===//

#include "tilec/contract/Expression.h"

#include "ContractUtils.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <optional>
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

/// INT64_MIN / -1 is the one quotient that does not fit.
bool overflowsDivision(int64_t a, int64_t b) {
  return a == INT64_MIN && b == -1;
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

// Without negating a (-floorDiv(-a, b) has no -INT64_MIN: cdiv(-2^63, 128)
// is -2^56).
int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0)))
    ++q;
  return q;
}

} // namespace

namespace expression_detail {

// What an operation does, in the order a program applies them: operands
// first (postfix), each operation where the parser met it.
enum class OpKind : uint8_t {
  Constant,
  Name,
  Negate,
  Add,
  Subtract,
  Multiply,
  FloorDivide,
  Divide,
  Modulo,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  Equal,
  NotEqual,
  Cdiv,
  Ceil,
  Floor,
  Log2,
  NextPowerOf2,
  Min,
  Max,
};

struct Op {
  OpKind kind;
  // Where the text stood when the operation applied (its errors' column).
  uint32_t column;
  // A Constant's value, a Name's slot.
  int64_t operand = 0;
};

} // namespace expression_detail

using expression_detail::Op;
using expression_detail::OpKind;

namespace {

struct Function {
  std::string_view name;
  OpKind kind;
  size_t arity;
};
constexpr Function kFunctions[] = {
    {"cdiv", OpKind::Cdiv, 2},
    {"ceil", OpKind::Ceil, 1},
    {"floor", OpKind::Floor, 1},
    {"log2", OpKind::Log2, 1},
    {"next_power_of_2", OpKind::NextPowerOf2, 1},
    {"min", OpKind::Min, 2},
    {"max", OpKind::Max, 2},
};

// Applies one operation to the values on top of `stack`; false with `error`
// set when it cannot (the message the interpreter always gave).
bool apply(OpKind kind, std::vector<Value> &stack, std::string &error) {
  auto needInteger = [&](const Value &value, const char *what) {
    if (!value.isInteger)
      error = std::string(what) +
              " needs integers; wrap reals in ceil() or floor()";
    return value.isInteger;
  };
  auto overflow = [&] {
    error = "integer overflow";
    return false;
  };
  Value rhs = stack.back();
  if (kind == OpKind::Negate) {
    if (rhs.isInteger && rhs.integer == INT64_MIN)
      return overflow();
    stack.back() = rhs.isInteger ? Value::ofInteger(-rhs.integer)
                                 : Value::ofReal(-rhs.real);
    return true;
  }
  bool unaryFunction = kind == OpKind::Ceil || kind == OpKind::Floor ||
                       kind == OpKind::Log2 || kind == OpKind::NextPowerOf2;
  if (unaryFunction) {
    Value &x = stack.back();
    switch (kind) {
    case OpKind::Ceil:
    case OpKind::Floor: {
      if (x.isInteger)
        return true;
      double r = kind == OpKind::Ceil ? std::ceil(x.real) : std::floor(x.real);
      if (!std::isfinite(r) || std::fabs(r) > 9.0e18) {
        error = std::string(kind == OpKind::Ceil ? "ceil" : "floor") +
                " of a value out of range";
        return false;
      }
      x = Value::ofInteger(static_cast<int64_t>(r));
      return true;
    }
    case OpKind::Log2: {
      double real = x.asReal();
      if (!(real > 0)) {
        error = "log2 of " + std::to_string(real) + " (needs a positive value)";
        return false;
      }
      // Exact for powers of two, so ceil(log2(4096)) is 12, never 13.
      if (x.isInteger && (x.integer & (x.integer - 1)) == 0) {
        int64_t log = 0;
        while ((int64_t(1) << log) < x.integer)
          ++log;
        x = Value::ofInteger(log);
      } else {
        x = Value::ofReal(std::log2(real));
      }
      return true;
    }
    default: { // NextPowerOf2
      if (!needInteger(x, "next_power_of_2"))
        return false;
      int64_t p = 1;
      if (x.integer > (int64_t(1) << 62)) {
        error = "next_power_of_2 of a value out of range";
        return false;
      }
      while (p < x.integer)
        p <<= 1;
      x = Value::ofInteger(p);
      return true;
    }
    }
  }
  stack.pop_back();
  Value &lhs = stack.back();
  double a = lhs.asReal(), b = rhs.asReal();
  switch (kind) {
  case OpKind::Add:
  case OpKind::Subtract:
  case OpKind::Multiply: {
    if (!lhs.isInteger || !rhs.isInteger) {
      lhs = Value::ofReal(kind == OpKind::Add        ? a + b
                          : kind == OpKind::Subtract ? a - b
                                                     : a * b);
      return true;
    }
    int64_t result = 0;
    bool overflowed =
        kind == OpKind::Add
            ? __builtin_add_overflow(lhs.integer, rhs.integer, &result)
        : kind == OpKind::Subtract
            ? __builtin_sub_overflow(lhs.integer, rhs.integer, &result)
            : __builtin_mul_overflow(lhs.integer, rhs.integer, &result);
    if (overflowed)
      return overflow();
    lhs = Value::ofInteger(result);
    return true;
  }
  case OpKind::FloorDivide:
  case OpKind::Modulo: {
    const char *what = kind == OpKind::FloorDivide ? "'//'" : "'%'";
    if (!needInteger(lhs, what) || !needInteger(rhs, what))
      return false;
    if (rhs.integer == 0) {
      error =
          kind == OpKind::FloorDivide ? "division by zero" : "modulo by zero";
      return false;
    }
    if (overflowsDivision(lhs.integer, rhs.integer))
      return overflow();
    if (kind == OpKind::FloorDivide) {
      lhs = Value::ofInteger(floorDiv(lhs.integer, rhs.integer));
      return true;
    }
    // Floor modulo from the truncating one: a - floorDiv(a, b) * b
    // overflows for |b| near 2^63 (5 % -2^63 is 5 - 2^63), this does
    // not (r and b have opposite signs where they are added).
    int64_t remainder = lhs.integer % rhs.integer;
    if (remainder != 0 && (remainder < 0) != (rhs.integer < 0))
      remainder += rhs.integer;
    lhs = Value::ofInteger(remainder);
    return true;
  }
  case OpKind::Divide:
    if (b == 0) {
      error = "division by zero";
      return false;
    }
    lhs = Value::ofReal(a / b);
    return true;
  case OpKind::Less:
  case OpKind::LessEqual:
  case OpKind::Greater:
  case OpKind::GreaterEqual:
  case OpKind::Equal:
  case OpKind::NotEqual: {
    bool holds = kind == OpKind::Less           ? a < b
                 : kind == OpKind::LessEqual    ? a <= b
                 : kind == OpKind::Greater      ? a > b
                 : kind == OpKind::GreaterEqual ? a >= b
                 : kind == OpKind::Equal        ? a == b
                                                : a != b;
    lhs = Value::ofInteger(holds ? 1 : 0);
    return true;
  }
  case OpKind::Cdiv:
    if (!needInteger(lhs, "cdiv") || !needInteger(rhs, "cdiv"))
      return false;
    if (rhs.integer == 0) {
      error = "cdiv by zero";
      return false;
    }
    if (overflowsDivision(lhs.integer, rhs.integer))
      return overflow();
    lhs = Value::ofInteger(ceilDiv(lhs.integer, rhs.integer));
    return true;
  case OpKind::Min:
  case OpKind::Max: {
    bool pickFirst = kind == OpKind::Min ? a <= b : a >= b;
    if (!pickFirst)
      lhs = rhs;
    return true;
  }
  default:
    error = "no operation";
    return false;
  }
}

// Recursive descent over the text, emitting each operation where an
// evaluation would apply it: running the operations emitted before a
// syntax error meets the errors an evaluation meets before it, in the same
// order. A name becomes its value (`names`) or its slot (`slots`).
class Parser {
public:
  Parser(std::string_view text, const std::map<std::string, int64_t> &names,
         std::vector<Op> &ops)
      : ops(ops), text_(text), names_(&names) {}
  Parser(std::string_view text, const std::vector<std::string> &slots,
         std::vector<Op> &ops)
      : ops(ops), text_(text), slots_(&slots) {}

  // Appended to (a caller may reuse one vector's storage).
  std::vector<Op> &ops;
  // The first syntax error (a name without a slot, an unknown function, a
  // wrong count of arguments included), with its column; empty if none.
  std::string error;

  void parse() {
    expression();
    skipSpace();
    if (error.empty() && pos_ != text_.size())
      fail("unexpected '" + std::string(text_.substr(pos_, 1)) + "'");
  }

private:
  void fail(const std::string &message) {
    if (error.empty())
      error = message + " at column " + std::to_string(pos_ + 1);
  }
  void emit(OpKind kind, int64_t operand = 0) {
    if (error.empty())
      ops.push_back({kind, static_cast<uint32_t>(pos_ + 1), operand});
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

  /// A comparison is 1 or 0, and binds loosest: "BLOCK_N >= n_cols".
  void expression() {
    sum();
    char next = peek();
    if (next != '<' && next != '>' && next != '=' && next != '!')
      return;
    static constexpr std::pair<std::string_view, OpKind> kComparisons[] = {
        {"<=", OpKind::LessEqual}, {">=", OpKind::GreaterEqual},
        {"==", OpKind::Equal},     {"!=", OpKind::NotEqual},
        {"<", OpKind::Less},       {">", OpKind::Greater}};
    for (const auto &[token, kind] : kComparisons) {
      if (!error.empty() || !consume(token))
        continue;
      sum();
      emit(kind);
      return;
    }
  }

  void sum() {
    term();
    while (error.empty()) {
      OpKind kind;
      if (consume("+"))
        kind = OpKind::Add;
      else if (consume("-"))
        kind = OpKind::Subtract;
      else
        break;
      term();
      emit(kind);
    }
  }

  void term() {
    unary();
    while (error.empty()) {
      OpKind kind;
      if (consume("//"))
        kind = OpKind::FloorDivide;
      else if (consume("*"))
        kind = OpKind::Multiply;
      else if (consume("/"))
        kind = OpKind::Divide;
      else if (consume("%"))
        kind = OpKind::Modulo;
      else
        break;
      unary();
      emit(kind);
    }
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

  void unary() {
    if (consume("-")) {
      if (!enter())
        return;
      unary();
      --depth_;
      emit(OpKind::Negate);
      return;
    }
    primary();
  }

  void primary() {
    skipSpace();
    if (pos_ >= text_.size()) {
      fail("unexpected end");
      return;
    }
    char c = text_[pos_];
    if (consume("(")) {
      if (!enter())
        return;
      expression();
      --depth_;
      if (!consume(")"))
        fail("missing ')'");
      return;
    }
    if (isDigit(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && isDigit(text_[pos_]))
        ++pos_;
      std::optional<int64_t> number =
          parseInteger(text_.substr(start, pos_ - start));
      if (!number)
        fail("integer out of range");
      emit(OpKind::Constant, number.value_or(0));
      return;
    }
    if (isAlpha(c) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (isAlpha(text_[pos_]) || isDigit(text_[pos_]) ||
              text_[pos_] == '_'))
        ++pos_;
      std::string_view name = text_.substr(start, pos_ - start);
      if (consume("(")) {
        call(name);
        return;
      }
      if (names_) {
        if (auto it = names_->find(std::string(name)); it != names_->end()) {
          emit(OpKind::Constant, it->second);
          return;
        }
      } else if (auto it = std::find(slots_->begin(), slots_->end(), name);
                 it != slots_->end()) {
        emit(OpKind::Name, it - slots_->begin());
        return;
      }
      pos_ = start;
      fail("no value for '" + std::string(name) + "' (known: " + known() + ")");
      return;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  void call(std::string_view function) {
    size_t count = 0;
    if (!consume(")")) {
      if (!enter())
        return;
      do {
        expression();
        ++count;
        if (!error.empty())
          return;
      } while (consume(","));
      --depth_;
      if (!consume(")")) {
        fail("missing ')' after the arguments of " + std::string(function));
        return;
      }
    }
    for (const Function &known : kFunctions) {
      if (known.name != function)
        continue;
      if (count != known.arity)
        fail(std::string(function) + " takes " + std::to_string(known.arity) +
             " argument(s), got " + std::to_string(count));
      emit(known.kind);
      return;
    }
    fail("unknown function '" + std::string(function) +
         "' (known: cdiv, ceil, floor, log2, next_power_of_2, min, max)");
  }

  std::string known() const {
    std::string text;
    auto add = [&](const std::string &name) {
      text += (text.empty() ? "" : ", ") + name;
    };
    if (names_)
      for (const auto &[name, value] : *names_)
        add(name);
    else
      for (const std::string &name : *slots_)
        add(name);
    return text.empty() ? "none" : text;
  }

  std::string_view text_;
  const std::map<std::string, int64_t> *names_ = nullptr;
  const std::vector<std::string> *slots_ = nullptr;
  size_t pos_ = 0;
  static constexpr int kMaxDepth = 64;
  int depth_ = 0;
};

std::string quoted(std::string_view text) {
  return "expression '" + std::string(text) + "'";
}

// Runs `ops` over the slots' `values`: the value, or the first operation's
// error (with its column).
Result<int64_t> run(std::string_view text, const std::vector<Op> &ops,
                    const int64_t *values, const std::string &syntaxError) {
  // Reused: an evaluation allocates nothing once the thread ran one as deep.
  thread_local std::vector<Value> stack;
  stack.clear();
  std::string error;
  for (const Op &op : ops) {
    if (op.kind == OpKind::Constant || op.kind == OpKind::Name) {
      stack.push_back(Value::ofInteger(
          op.kind == OpKind::Constant ? op.operand : values[op.operand]));
      continue;
    }
    if (!apply(op.kind, stack, error))
      return Status::error(quoted(text) + ": " + error + " at column " +
                           std::to_string(op.column));
  }
  if (!syntaxError.empty())
    return Status::error(quoted(text) + ": " + syntaxError);
  const Value &value = stack.back();
  if (!value.isInteger) {
    if (value.real != std::floor(value.real) || !std::isfinite(value.real))
      return Status::error(quoted(text) + " is not an integer (" +
                           std::to_string(value.real) +
                           "); wrap it in ceil() or floor()");
    // An integral real past int64 (1.7e48 from a product of divisions,
    // found by ExpressionFuzzer) has no integer to convert to.
    if (!(value.real >= -0x1p63 && value.real < 0x1p63))
      return Status::error(quoted(text) + " is out of the 64-bit range (" +
                           std::to_string(value.real) + ")");
    return static_cast<int64_t>(value.real);
  }
  return value.integer;
}

} // namespace

Result<int64_t>
evaluateExpression(std::string_view expression,
                   const std::map<std::string, int64_t> &names) {
  thread_local std::vector<Op> ops;
  ops.clear();
  Parser parser(expression, names, ops);
  parser.parse();
  return run(expression, ops, nullptr, parser.error);
}

CompiledExpression::CompiledExpression() = default;
CompiledExpression::CompiledExpression(const CompiledExpression &) = default;
CompiledExpression::CompiledExpression(CompiledExpression &&) noexcept =
    default;
CompiledExpression &
CompiledExpression::operator=(const CompiledExpression &) = default;
CompiledExpression &
CompiledExpression::operator=(CompiledExpression &&) noexcept = default;
CompiledExpression::~CompiledExpression() = default;

Result<CompiledExpression>
CompiledExpression::compile(std::string_view expression,
                            const std::vector<std::string> &slots) {
  CompiledExpression compiled;
  Parser parser(expression, slots, compiled.ops_);
  parser.parse();
  if (!parser.error.empty())
    return Status::error(quoted(expression) + ": " + parser.error);
  compiled.text_ = std::string(expression);
  return compiled;
}

Result<int64_t> CompiledExpression::evaluate(const int64_t *values) const {
  static const std::string kNoError;
  if (ops_.empty())
    return Status::error("no expression was compiled");
  return run(text_, ops_, values, kNoError);
}

bool CompiledExpression::readsSlot(size_t slot) const {
  return std::any_of(ops_.begin(), ops_.end(), [&](const Op &op) {
    return op.kind == OpKind::Name && op.operand == static_cast<int64_t>(slot);
  });
}

} // namespace tilec
