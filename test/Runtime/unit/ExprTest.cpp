//===- ExprTest.cpp - Launch geometry expressions -------------------------===//

#include "ssd/Runtime/Expr.h"

#include <gtest/gtest.h>

using namespace ssd::rt;

namespace {

int64_t eval(const std::string &text, const SymbolTable &symbols = {}) {
  Expected<Expr> e = Expr::parse(text);
  EXPECT_TRUE(e.ok()) << e.message();
  if (!e.ok())
    return INT64_MIN;
  Expected<int64_t> v = e->evaluate(symbols);
  EXPECT_TRUE(v.ok()) << v.message();
  return v.ok() ? *v : INT64_MIN;
}

std::string parseError(const std::string &text) {
  Expected<Expr> e = Expr::parse(text);
  EXPECT_FALSE(e.ok()) << "parsed: " << text;
  return e.ok() ? "" : e.message();
}

std::string evalError(const std::string &text,
                      const SymbolTable &symbols = {}) {
  Expected<Expr> e = Expr::parse(text);
  EXPECT_TRUE(e.ok()) << e.message();
  if (!e.ok())
    return "";
  Expected<int64_t> v = e->evaluate(symbols);
  EXPECT_FALSE(v.ok()) << text << " = " << (v.ok() ? *v : 0);
  return v.ok() ? "" : v.message();
}

TEST(Expr, Arithmetic) {
  EXPECT_EQ(eval("42"), 42);
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 4 - 3"), 3);
  EXPECT_EQ(eval("100 / 10 / 5"), 2);
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("7 % 4"), 3);
  EXPECT_EQ(eval("-(2 + 3) * -2"), 10);
  EXPECT_EQ(eval("--5"), 5);
}

TEST(Expr, Functions) {
  EXPECT_EQ(eval("ceildiv(300, 128)"), 3);
  EXPECT_EQ(eval("ceildiv(256, 128)"), 2);
  EXPECT_EQ(eval("ceildiv(0, 128)"), 0);
  EXPECT_EQ(eval("ceildiv(-5, 2)"), -2);
  EXPECT_EQ(eval("min(3, 9) + max(3, 9)"), 12);
  EXPECT_EQ(eval("ceildiv(min(7, 100), 2)"), 4);
}

TEST(Expr, Symbols) {
  SymbolTable s = {{"b", 2}, {"L", 1000}, {"Q", 128}, {"nc", 8}};
  EXPECT_EQ(eval("b * ceildiv(L, Q)", s), 16);
  EXPECT_EQ(eval("b*nc*Q", s), 2048);
  Expected<Expr> e = Expr::parse("b * ceildiv(L, Q) + b");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->symbols(), (std::vector<std::string>{"b", "L", "Q"}));
  EXPECT_EQ(e->text(), "b * ceildiv(L, Q) + b");
  EXPECT_FALSE(e->asSymbol());
  EXPECT_EQ(Expr::parse(" L ")->asSymbol(), std::optional<std::string>("L"));
  EXPECT_EQ(Expr::parse("80")->asConstant(), std::optional<int64_t>(80));
  EXPECT_FALSE(Expr::parse("80 + 0")->asConstant());
}

TEST(Expr, ParseErrorsNameTheExpression) {
  EXPECT_EQ(parseError("ceildiv(L, 128"),
            "in expression 'ceildiv(L, 128': expected ',' or ')' in call to "
            "ceildiv at column 15");
  EXPECT_EQ(parseError("(b + 1"),
            "in expression '(b + 1': expected ')' at column 7");
  EXPECT_EQ(parseError("b +"),
            "in expression 'b +': unexpected end, expected a number, a name or "
            "'(' at column 4");
  EXPECT_EQ(parseError("b $ 2"),
            "in expression 'b $ 2': unexpected '$' at column 3");
  EXPECT_EQ(parseError("floor(L)"),
            "in expression 'floor(L)': unknown function 'floor' (known: "
            "ceildiv, min, max) at column 1");
  EXPECT_EQ(parseError("min(1)"),
            "in expression 'min(1)': min takes 2 arguments, got 1 at column 7");
  EXPECT_EQ(parseError(""),
            "in expression '': unexpected end, expected a number, a name or "
            "'(' at column 1");
  EXPECT_EQ(parseError("99999999999999999999"),
            "in expression '99999999999999999999': integer literal out of "
            "range at column 19");
  EXPECT_NE(parseError(std::string(100, '(') + "1" + std::string(100, ')'))
                .find("nested too deeply"),
            std::string::npos);
}

TEST(Expr, EvaluationErrorsNameTheExpression) {
  EXPECT_EQ(evalError("b * L", {{"b", 1}}),
            "in expression 'b * L': unknown symbol 'L'");
  EXPECT_EQ(evalError("L / (b - 1)", {{"b", 1}, {"L", 5}}),
            "in expression 'L / (b - 1)': division by zero");
  EXPECT_EQ(evalError("ceildiv(4, 0)"),
            "in expression 'ceildiv(4, 0)': division by zero in ceildiv");
  EXPECT_EQ(evalError("4 % 0"), "in expression '4 % 0': division by zero");
  EXPECT_EQ(evalError("4611686018427387904 * 2"),
            "in expression '4611686018427387904 * 2': integer overflow");
  EXPECT_EQ(evalError("9223372036854775807 + 1"),
            "in expression '9223372036854775807 + 1': integer overflow");
}

} // namespace
