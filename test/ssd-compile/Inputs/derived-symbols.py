"""Evaluates a manifest's derived symbols for given sizes, as the runtime
does (docs/runtime.md; the grammar of include/ssd/Artifact/Expr.h: + - * /
% on integers, '/' and '%' truncating toward zero, ceildiv, min, max).

    derived-symbols.py MANIFEST SYMBOL[,SYMBOL...] NAME=VALUE...

Prints one line: the bindings and each SYMBOL's value."""
import json
import re
import sys


def evaluate(text, symbols):
    tokens = re.findall(r"\d+|[A-Za-z_]\w*|[-+*/%(),]", text)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def expr():
        v = term()
        while peek() in ("+", "-"):
            v = v + term() if take() == "+" else v - term()
        return v

    def term():
        v = unary()
        while peek() in ("*", "/", "%"):
            op, w = take(), unary()
            if op == "*":
                v *= w
            else:
                q = abs(v) // abs(w) * (1 if (v < 0) == (w < 0) else -1)
                v = q if op == "/" else v - q * w
        return v

    def unary():
        if peek() == "-":
            take()
            return -unary()
        return primary()

    def primary():
        t = take()
        if t == "(":
            v = expr()
            take()
            return v
        if t.isdigit():
            return int(t)
        if peek() == "(":
            take()
            args = [expr()]
            while peek() == ",":
                take()
                args.append(expr())
            take()
            a, b = args
            return {"ceildiv": lambda: -(-a // b), "min": lambda: min(a, b),
                    "max": lambda: max(a, b)}[t]()
        return symbols[t]

    value = expr()
    assert pos == len(tokens), text
    return value


manifest = json.load(open(sys.argv[1]))
symbols = {k: int(v) for k, v in (a.split("=") for a in sys.argv[3:])}
for name, text in manifest.get("derived", {}).items():
    symbols[name] = evaluate(str(text), symbols)
print(" ".join(sys.argv[3:]),
      " ".join("%s = %d" % (n, symbols[n]) for n in sys.argv[2].split(",")))
