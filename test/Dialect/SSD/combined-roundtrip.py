# RUN: %python %s > %t.mlir
# RUN: ssd-opt %t.mlir | ssd-opt | FileCheck %t.mlir
# RUN: ssd-opt %t.mlir --ssd-decompose | FileCheck %t.mlir --check-prefix=DECOMPOSED

# Writes ssd.combined in every combination of its optional inputs and
# attributes, with the CHECK lines that the round trip must reproduce and
# a check that ssd-decompose accepts each one.

import itertools

b, L, h, p, g, n, q = 2, 100, 4, 8, 2, 16, 32
s = 3  # sequences in the varlen variants (batch 1)


def tensor(shape, elt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + elt + ">"


def case(index, d_mode, z, dt_bias, init, packing, softplus, limit, state, act):
    batch = 1 if packing == "cu_seqlens" else b
    x = tensor([batch, L, h, p], act)
    bc = tensor([batch, L, g, n], act)
    st_rows = s if packing == "cu_seqlens" else batch
    st = tensor([st_rows, h, p, n], state)
    args = [("x", x), ("dt", tensor([batch, L, h], "f32")), ("A", tensor([h], "f32")),
            ("B", bc), ("C", bc)]
    if d_mode == "h":
        args.append(("D", tensor([h], "f32")))
    elif d_mode == "hp":
        args.append(("D", tensor([h, p], "f32")))
    if z:
        args.append(("z", x))
    if dt_bias:
        args.append(("dt_bias", tensor([h], "f32")))
    if init:
        args.append(("initial_states", st))
    if packing == "seq_idx":
        args.append(("seq_idx", tensor([batch, L], "i32")))
    elif packing == "cu_seqlens":
        args.append(("cu_seqlens", tensor([s + 1], "i32")))
    attrs = ["chunk_size = %d : i64" % q]
    if limit:
        attrs.append("dt_limit = array<f64: 1.000000e-03, 2.000000e-01>")
    if softplus:
        attrs.append("dt_softplus")
    if state == "f16":
        attrs.append("state_type = f16")
    params = ", ".join("%%%s: %s" % (name, ty) for name, ty in args)
    operands = " ".join("%s(%%%s : %s)" % (name, name, ty) for name, ty in args)
    op = "ssd.combined %s {%s} -> %s, %s" % (operands, ", ".join(attrs), x, st)
    name = "combined_%d" % index
    print("// CHECK-LABEL: func.func @%s" % name)
    # The printer names block arguments %arg0..; match each operand by
    # keyword and type.
    printed = " ".join("%s(%%{{.*}} : %s)" % (kw, ty) for kw, ty in args)
    print("// CHECK: ssd.combined %s {%s} -> %s, %s" % (printed, ", ".join(attrs), x, st))
    print("// DECOMPOSED-LABEL: func.func @%s" % name)
    print("// DECOMPOSED: ssd.chunk_scan")
    print("// DECOMPOSED-NOT: ssd.combined")
    print("func.func @%s(%s) -> (%s, %s) {" % (name, params, x, st))
    print("  %%y, %%fs = %s" % op)
    print("  return %%y, %%fs : %s, %s" % (x, st))
    print("}")
    print()


choices = itertools.product(
    [None, "h", "hp"],  # D
    [False, True],  # z
    [False, True],  # dt_bias
    [False, True],  # initial_states
    [None, "seq_idx", "cu_seqlens"],  # packing
    [False, True],  # dt_softplus
    [False, True],  # dt_limit
    ["f32", "f16"],  # state precision
)
acts = ["f32", "bf16", "f16"]
for index, combo in enumerate(choices):
    case(index, *combo, acts[index % len(acts)])
