//===- Expr.h - Integer expressions of launch geometry ----------*- C++ -*-===//
//
// Manifests state grid sizes, workspace sizes and scalar arguments as small
// integer expressions of the problem size, e.g. "ceildiv(L, 128) * b".
// Grammar:
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | primary
//   primary := INTEGER | IDENT | IDENT '(' expr (',' expr)* ')' | '(' expr ')'
// Functions: ceildiv(a, b), min(a, b), max(a, b). Arithmetic is on int64_t;
// overflow and division by zero are errors. '/' and '%' truncate toward zero,
// as in C. Every error names the expression text.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_ARTIFACT_EXPR_H
#define SSD_ARTIFACT_EXPR_H

#include "ssd/Artifact/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ssd::artifact {

using SymbolTable = std::map<std::string, int64_t, std::less<>>;

class Expr {
public:
  struct Node;

  /// Parses `text`; the error names the text and the column of the problem.
  static Expected<Expr> parse(std::string_view text);
  /// An expression that is the integer `value`.
  static Expr constant(int64_t value);

  Expected<int64_t> evaluate(const SymbolTable &symbols) const;

  const std::string &text() const { return source; }
  /// The identifier, when the whole expression is one (e.g. "L").
  std::optional<std::string> asSymbol() const;
  /// The value, when the whole expression is an integer literal.
  std::optional<int64_t> asConstant() const;
  /// Every identifier the expression reads, without duplicates.
  std::vector<std::string> symbols() const;

private:
  std::string source;
  std::shared_ptr<const Node> root;
};

} // namespace ssd::artifact

#endif // SSD_ARTIFACT_EXPR_H
