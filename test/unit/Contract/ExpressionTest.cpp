//===- ExpressionTest.cpp - The expression language of descriptions ------===//

#include "tilec/contract/Expression.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

int64_t eval(const std::string &expression,
             const std::map<std::string, int64_t> &names = {}) {
  tilec::Result<int64_t> value = tilec::evaluateExpression(expression, names);
  EXPECT_TRUE(value.ok()) << expression << ": " << value.message();
  return value.ok() ? *value : -1;
}

std::string evalError(const std::string &expression,
                      const std::map<std::string, int64_t> &names = {}) {
  tilec::Result<int64_t> value = tilec::evaluateExpression(expression, names);
  EXPECT_FALSE(value.ok()) << expression << " evaluated to " << *value;
  return value.ok() ? "" : value.message();
}

TEST(Expression, Arithmetic) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("-7 // 2"), -4); // floor division, as in Python
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("-7 % 3"), 2);
  EXPECT_EQ(eval("10 / 4 * 2"), 5); // real division, integral result
  EXPECT_EQ(eval("M - N", {{"M", 3}, {"N", 5}}), -2);
  EXPECT_EQ(eval("7 % -3"), -2);
  EXPECT_EQ(eval("-7 % -3"), -1);
  // Floor modulo by a divisor near 2^63 (found by ExpressionFuzzer: the
  // form a - floorDiv(a, b) * b overflowed): Python's 5 % -2**63.
  EXPECT_EQ(eval("5 % small", {{"small", INT64_MIN}}), INT64_MIN + 5);
  EXPECT_EQ(eval("-5 % big", {{"big", INT64_MAX}}), INT64_MAX - 5);
}

TEST(Expression, Functions) {
  EXPECT_EQ(eval("cdiv(1000, 64)"), 16);
  EXPECT_EQ(eval("cdiv(1024, 64)"), 16);
  EXPECT_EQ(eval("cdiv(1025, 64)"), 17);
  EXPECT_EQ(eval("min(3, 9) + max(3, 9)"), 12);
  EXPECT_EQ(eval("next_power_of_2(1000)"), 1024);
  EXPECT_EQ(eval("next_power_of_2(1024)"), 1024);
  EXPECT_EQ(eval("next_power_of_2(1)"), 1);
  EXPECT_EQ(eval("floor(log2(1000))"), 9);
}

TEST(Expression, CeilLog2IsExactForPowersOfTwo) {
  for (int64_t shift = 0; shift < 40; ++shift) {
    int64_t m = int64_t(1) << shift;
    EXPECT_EQ(eval("ceil(log2(M))", {{"M", m}}), shift) << m;
    if (m > 2) {
      EXPECT_EQ(eval("ceil(log2(M))", {{"M", m + 1}}), shift + 1) << m + 1;
      EXPECT_EQ(eval("ceil(log2(M))", {{"M", m - 1}}), shift) << m - 1;
    }
  }
}

TEST(Expression, GridOfMatmul) {
  std::map<std::string, int64_t> names = {
      {"M", 203}, {"N", 176}, {"BLOCK_M", 64}, {"BLOCK_N", 32}};
  EXPECT_EQ(eval("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)", names), 4 * 6);
}

TEST(Expression, Errors) {
  EXPECT_NE(evalError("cdiv(M, 4)").find("no value for 'M'"),
            std::string::npos);
  EXPECT_NE(evalError("frob(3)").find("unknown function 'frob'"),
            std::string::npos);
  EXPECT_NE(evalError("log2(1000)").find("not an integer"), std::string::npos);
  EXPECT_NE(evalError("4 // 0").find("division by zero"), std::string::npos);
  EXPECT_NE(evalError("cdiv(4)").find("takes 2 argument"), std::string::npos);
  EXPECT_NE(evalError("(1 + 2").find("missing ')'"), std::string::npos);
  EXPECT_NE(evalError("1 +").find("unexpected end"), std::string::npos);
  EXPECT_NE(evalError("1 2").find("unexpected '2'"), std::string::npos);
  EXPECT_NE(evalError("log2(0)").find("positive"), std::string::npos);
  EXPECT_NE(evalError("9223372036854775807 + 1").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError("(-9223372036854775807 - 1) // -1").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError("(-9223372036854775807 - 1) % -1").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError("-(-9223372036854775807 - 1)").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError(std::string(100, '(') + "1" + std::string(100, ')'))
                .find("nested deeper than 64"),
            std::string::npos);
  // Every error quotes the expression.
  EXPECT_NE(evalError("1 +").find("'1 +'"), std::string::npos);
}

// Every level of the recursive descent counts toward the depth limit:
// parentheses, unary minus chains and function arguments (thousands of
// '-' overflowed the stack, found by ExpressionFuzzer).
TEST(Expression, DepthIsBoundedForEveryKindOfNesting) {
  EXPECT_NE(evalError(std::string(100000, '-') + "1").find("nested deeper"),
            std::string::npos);
  std::string calls;
  for (int i = 0; i < 100000; ++i)
    calls += "ceil(";
  EXPECT_NE(evalError(calls + "1").find("nested deeper"), std::string::npos);
  EXPECT_NE(evalError(std::string(100000, '(') + "1").find("nested deeper"),
            std::string::npos);
  EXPECT_EQ(eval("--1"), 1);
  EXPECT_EQ(eval("ceil(floor(ceil(7)))"), 7);
}

// An integral real result past int64 is an error, not an undefined
// conversion (found by ExpressionFuzzer).
TEST(Expression, RealResultsPastInt64AreErrors) {
  EXPECT_NE(evalError("1e30").find("unexpected"), std::string::npos);
  EXPECT_NE(evalError("big / 1 * 4", {{"big", INT64_MAX}})
                .find("out of the 64-bit range"),
            std::string::npos);
  EXPECT_EQ(eval("big / 2 * 2 - 1024 // 1", {{"big", int64_t(1) << 62}}),
            (int64_t(1) << 62) - 1024);
}

TEST(Expression, Comparisons) {
  EXPECT_EQ(eval("BLOCK_N >= n_cols", {{"BLOCK_N", 1024}, {"n_cols", 1000}}),
            1);
  EXPECT_EQ(eval("BLOCK_N >= n_cols", {{"BLOCK_N", 512}, {"n_cols", 1000}}),
            0);
  EXPECT_EQ(eval("1 + 1 == 2"), 1);
  EXPECT_EQ(eval("3 != 3"), 0);
  EXPECT_EQ(eval("2 < 3"), 1);
  EXPECT_EQ(eval("3 <= 2"), 0);
  EXPECT_EQ(eval("4 > 3 * 2"), 0);
}

// Tokens are read character by character: spacing of every kind, none at
// all, and the column an error names.
TEST(Expression, TokensAndColumns) {
  std::map<std::string, int64_t> names = {{"M", 1000}, {"N", 7}, {"a_1", 3}};
  EXPECT_EQ(eval("M<=N", names), 0);
  EXPECT_EQ(eval("M>N", names), 1);
  EXPECT_EQ(eval("M!=1000", names), 0);
  EXPECT_EQ(eval("2//3"), 0);
  EXPECT_EQ(eval("\tM\v+\fN\r==\n1007 ", names), 1);
  EXPECT_EQ(eval("a_1*cdiv( M , 64 )", names), 48);
  EXPECT_EQ(evalError("M < = N", names),
            "expression 'M < = N': unexpected '=' at column 5");
  EXPECT_EQ(evalError("!M", names),
            "expression '!M': unexpected '!' at column 1");
  EXPECT_EQ(evalError("1 +  x", names).substr(0, 45),
            "expression '1 +  x': no value for 'x' (known:");
  EXPECT_NE(evalError("1 +  x", names).find("at column 6"), std::string::npos);
  EXPECT_EQ(evalError("4 // 0"),
            "expression '4 // 0': division by zero at column 7");
  EXPECT_EQ(evalError("M /", names),
            "expression 'M /': unexpected end at column 4");
}

// cdiv of the most negative integer is exact where the quotient fits (it
// was 0, silently: a guard against negating it returned an empty value
// without an error; found comparing the evaluator with the compiled
// programs).
TEST(Expression, CdivOfTheMostNegativeInteger) {
  std::map<std::string, int64_t> names = {{"small", INT64_MIN}};
  EXPECT_EQ(eval("cdiv(small, 128)", names), -(int64_t(1) << 56));
  EXPECT_EQ(eval("cdiv(small, -128)", names), int64_t(1) << 56);
  EXPECT_EQ(eval("cdiv(small, 7)", names), INT64_MIN / 7);
  // -(2^63 - 1) is a multiple of 7.
  EXPECT_EQ(eval("cdiv(small + 1, -7)", names), INT64_MAX / 7);
  EXPECT_EQ(eval("cdiv(small + 2, -7)", names), INT64_MAX / 7);
  EXPECT_NE(evalError("cdiv(small, -1)", names).find("integer overflow"),
            std::string::npos);
  EXPECT_EQ(eval("cdiv(-7, 2)"), -3);
  EXPECT_EQ(eval("cdiv(7, -2)"), -3);
  EXPECT_EQ(eval("cdiv(-7, -2)"), 4);
}

// A compiled expression reads its names from slots in any order and gives
// what the evaluator gives over the same values: values, and errors word
// for word; a name it has no slot for does not compile.
TEST(Expression, CompiledExpressionsAgreeWithTheEvaluator) {
  std::map<std::string, int64_t> names = {
      {"N", 1000}, {"BLOCK", 128}, {"zero", 0}, {"big", INT64_MAX}};
  std::vector<std::string> slots = {"zero", "N", "big", "BLOCK"};
  std::vector<int64_t> values;
  for (const std::string &slot : slots)
    values.push_back(names.at(slot));
  for (const char *text :
       {"cdiv(N, BLOCK)", "N // zero", "ceil(log2(N))", "N / 3",
        "next_power_of_2(N) * BLOCK", "big + 1", "min(N, BLOCK) >= 128",
        "(N % BLOCK) - -N", "floor(N / 3 * 2)", "log2(zero)"}) {
    SCOPED_TRACE(text);
    auto compiled = tilec::CompiledExpression::compile(text, slots);
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    auto expected = tilec::evaluateExpression(text, names);
    auto actual = compiled->evaluate(values.data());
    ASSERT_EQ(actual.ok(), expected.ok());
    if (expected.ok())
      EXPECT_EQ(*actual, *expected);
    else
      EXPECT_EQ(actual.message(), expected.message());
  }
  auto unknown = tilec::CompiledExpression::compile("N + M", slots);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.message(), "expression 'N + M': no value for 'M' (known: "
                               "zero, N, big, BLOCK) at column 5");
  EXPECT_FALSE(tilec::CompiledExpression::compile("cdiv(N)", slots).ok());
  EXPECT_FALSE(tilec::CompiledExpression::compile("N +", slots).ok());
}

} // namespace
