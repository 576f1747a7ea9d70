//===- Expr.cpp - Integer expressions of launch geometry ------------------===//

#include "ssd/Artifact/Expr.h"

#include <algorithm>
#include <cctype>
#include <limits>

using namespace ssd::artifact;

struct Expr::Node {
  enum class Kind { Number, Symbol, Neg, Add, Sub, Mul, Div, Mod, Call };
  Kind kind;
  int64_t value = 0;
  std::string name; // Symbol or function name.
  std::vector<std::shared_ptr<const Node>> operands;
};

using NodePtr = std::shared_ptr<const Expr::Node>;
using Kind = Expr::Node::Kind;

namespace {
class ExprParser {
public:
  explicit ExprParser(std::string_view text) : text(text) {}

  Expected<NodePtr> parseAll() {
    NodePtr n = parseSum();
    if (n && (skipSpace(), pos != text.size()))
      n = fail("unexpected '" + std::string(1, text[pos]) + "'");
    if (!n)
      return Status::error(error);
    return n;
  }

private:
  std::string_view text;
  size_t pos = 0;
  std::string error;
  int depth = 0;

  NodePtr fail(const std::string &what) {
    if (error.empty())
      error = "in expression '" + std::string(text) + "': " + what +
              " at column " + std::to_string(pos + 1);
    return nullptr;
  }

  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  static NodePtr make(Kind kind, std::vector<NodePtr> operands) {
    auto n = std::make_shared<Expr::Node>();
    n->kind = kind;
    n->operands = std::move(operands);
    return n;
  }

  NodePtr parseSum() {
    NodePtr lhs = parseProduct();
    while (lhs) {
      if (consume('+'))
        lhs = combine(Kind::Add, lhs, parseProduct());
      else if (consume('-'))
        lhs = combine(Kind::Sub, lhs, parseProduct());
      else
        break;
    }
    return lhs;
  }

  NodePtr parseProduct() {
    NodePtr lhs = parseUnary();
    while (lhs) {
      if (consume('*'))
        lhs = combine(Kind::Mul, lhs, parseUnary());
      else if (consume('/'))
        lhs = combine(Kind::Div, lhs, parseUnary());
      else if (consume('%'))
        lhs = combine(Kind::Mod, lhs, parseUnary());
      else
        break;
    }
    return lhs;
  }

  static NodePtr combine(Kind kind, NodePtr lhs, NodePtr rhs) {
    return rhs ? make(kind, {std::move(lhs), std::move(rhs)}) : nullptr;
  }

  NodePtr parseUnary() {
    // Bounds recursion on inputs such as "------...1" or "((((...".
    if (++depth > 64)
      return fail("expression nested too deeply");
    NodePtr result;
    if (consume('-')) {
      NodePtr operand = parseUnary();
      result = operand ? make(Kind::Neg, {operand}) : nullptr;
    } else {
      result = parsePrimary();
    }
    --depth;
    return result;
  }

  NodePtr parsePrimary() {
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end, expected a number, a name or '('");
    char c = text[pos];
    if (c == '(') {
      ++pos;
      NodePtr inner = parseSum();
      if (inner && !consume(')'))
        return fail("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)))
      return parseNumber();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
      return parseNameOrCall();
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  NodePtr parseNumber() {
    int64_t value = 0;
    while (pos < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[pos]))) {
      int digit = text[pos] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return fail("integer literal out of range");
      value = value * 10 + digit;
      ++pos;
    }
    auto n = std::make_shared<Expr::Node>();
    n->kind = Kind::Number;
    n->value = value;
    return n;
  }

  NodePtr parseNameOrCall() {
    size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    std::string name(text.substr(start, pos - start));
    if (!consume('(')) {
      auto n = std::make_shared<Expr::Node>();
      n->kind = Kind::Symbol;
      n->name = name;
      return n;
    }
    if (name != "ceildiv" && name != "min" && name != "max") {
      pos = start;
      return fail("unknown function '" + name + "' (known: ceildiv, min, max)");
    }
    std::vector<NodePtr> args;
    do {
      NodePtr arg = parseSum();
      if (!arg)
        return nullptr;
      args.push_back(arg);
    } while (consume(','));
    if (!consume(')'))
      return fail("expected ',' or ')' in call to " + name);
    if (args.size() != 2)
      return fail(name + " takes 2 arguments, got " +
                  std::to_string(args.size()));
    auto n = std::make_shared<Expr::Node>();
    n->kind = Kind::Call;
    n->name = name;
    n->operands = std::move(args);
    return n;
  }
};

/// Evaluates with overflow checks; the first error is kept in `error`.
class Evaluator {
public:
  Evaluator(const SymbolTable &symbols) : symbols(symbols) {}
  std::string error;

  std::optional<int64_t> eval(const Expr::Node &n) {
    switch (n.kind) {
    case Kind::Number:
      return n.value;
    case Kind::Symbol: {
      auto it = symbols.find(n.name);
      if (it == symbols.end())
        return fail("unknown symbol '" + n.name + "'");
      return it->second;
    }
    case Kind::Neg: {
      auto v = eval(*n.operands[0]);
      if (!v)
        return v;
      if (*v == std::numeric_limits<int64_t>::min())
        return fail("integer overflow");
      return -*v;
    }
    default:
      break;
    }
    auto a = eval(*n.operands[0]);
    if (!a)
      return a;
    auto b = eval(*n.operands[1]);
    if (!b)
      return b;
    int64_t r;
    switch (n.kind) {
    case Kind::Add:
      if (__builtin_add_overflow(*a, *b, &r))
        return fail("integer overflow");
      return r;
    case Kind::Sub:
      if (__builtin_sub_overflow(*a, *b, &r))
        return fail("integer overflow");
      return r;
    case Kind::Mul:
      if (__builtin_mul_overflow(*a, *b, &r))
        return fail("integer overflow");
      return r;
    case Kind::Div:
    case Kind::Mod:
      if (*b == 0)
        return fail("division by zero");
      if (*a == std::numeric_limits<int64_t>::min() && *b == -1)
        return fail("integer overflow");
      return n.kind == Kind::Div ? *a / *b : *a % *b;
    case Kind::Call:
      if (n.name == "min")
        return std::min(*a, *b);
      if (n.name == "max")
        return std::max(*a, *b);
      // ceildiv rounds toward +infinity for any signs.
      if (*b == 0)
        return fail("division by zero in ceildiv");
      if (*a == std::numeric_limits<int64_t>::min() && *b == -1)
        return fail("integer overflow");
      {
        int64_t q = *a / *b;
        if ((*a % *b != 0) && ((*a < 0) == (*b < 0)))
          ++q;
        return q;
      }
    default:
      return fail("malformed expression");
    }
  }

private:
  const SymbolTable &symbols;
  std::optional<int64_t> fail(const std::string &what) {
    if (error.empty())
      error = what;
    return std::nullopt;
  }
};

void collectSymbols(const Expr::Node &n, std::vector<std::string> &out) {
  if (n.kind == Kind::Symbol &&
      std::find(out.begin(), out.end(), n.name) == out.end())
    out.push_back(n.name);
  for (const NodePtr &op : n.operands)
    collectSymbols(*op, out);
}
} // namespace

Expected<Expr> Expr::parse(std::string_view text) {
  Expected<NodePtr> root = ExprParser(text).parseAll();
  if (!root.ok())
    return root.status();
  Expr e;
  e.source = std::string(text);
  e.root = root.take();
  return e;
}

Expr Expr::constant(int64_t value) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Number;
  n->value = value;
  Expr e;
  e.source = std::to_string(value);
  e.root = n;
  return e;
}

Expected<int64_t> Expr::evaluate(const SymbolTable &symbols) const {
  if (!root)
    return Status::error("empty expression");
  Evaluator ev(symbols);
  std::optional<int64_t> v = ev.eval(*root);
  if (!v)
    return Status::error("in expression '" + source + "': " + ev.error);
  return *v;
}

std::optional<std::string> Expr::asSymbol() const {
  if (root && root->kind == Kind::Symbol)
    return root->name;
  return std::nullopt;
}

std::optional<int64_t> Expr::asConstant() const {
  if (root && root->kind == Kind::Number)
    return root->value;
  return std::nullopt;
}

std::vector<std::string> Expr::symbols() const {
  std::vector<std::string> out;
  if (root)
    collectSymbols(*root, out);
  return out;
}
