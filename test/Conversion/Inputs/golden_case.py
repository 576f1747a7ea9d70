#!/usr/bin/env python3
"""Runs a golden case folder through ssd-cpu-pipeline with mlir-runner.

Writes an MLIR module that embeds the case inputs as memref globals, calls a
kernel function of the shape ssd-run builds (memref arguments, to_tensor,
ssd.combined or step ops, materialize_in_destination) and prints y and
final_states; then compares with the expected outputs using the golden
error measure max|out - expected| / max|expected|.

  golden_case.py CASE_DIR --ssd-opt BIN [--chunk-size Q] [--dtype f32|bf16|f16]
                 [--state-dtype f32|f16] [--dynamic] [--emit FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

RUNNER = "/usr/lib/llvm-22/bin/mlir-runner"
LIBS = ("/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,"
        "/usr/lib/llvm-22/lib/libmlir_runner_utils.so,"
        "/usr/lib/llvm-22/lib/libmlir_async_runtime.so")


def ttype(shape, elt, dynamic_dims=()):
    dims = ["?" if i in dynamic_dims else str(d) for i, d in enumerate(shape)]
    return "x".join(dims + [elt])


def nested(arr):
    if arr.ndim == 0:
        return repr(float(arr)) if arr.dtype.kind == "f" else str(int(arr))
    return "[" + ", ".join(nested(a) for a in arr) + "]"


def dense(arr):
    return "dense<%s>" % nested(arr)


def build(case, args):
    meta = json.load(open(os.path.join(case, "case.json")))
    arrays = {n: np.load(os.path.join(case, n + ".npy")) for n in meta["inputs"]}
    act, st = args.dtype, args.state_dtype
    elt = {"x": act, "B": act, "C": act, "z": act, "initial_states": st,
           "seq_idx": "i32", "cu_seqlens": "i32"}
    dyn = {"x": (1,), "dt": (1,), "B": (1,), "C": (1,), "z": (1,),
           "seq_idx": (1,)} if args.dynamic else {}
    order = ["x", "dt", "A", "B", "C", "D", "z", "dt_bias", "initial_states",
             "seq_idx", "cu_seqlens"]
    inputs = [n for n in order if n in arrays]
    b, L = meta["batch"], meta["seqlen"]
    h, p = meta["nheads"], meta["headdim"]
    fs_lead = (arrays["cu_seqlens"].shape[0] - 1) if "cu_seqlens" in arrays else b
    y_shape, fs_shape = (b, L, h, p), (fs_lead, h, p, meta["dstate"])

    def mt(n, shape):
        return "memref<%s>" % ttype(shape, elt.get(n, "f32"), dyn.get(n, ()))

    def tt(n, shape):
        return "tensor<%s>" % ttype(shape, elt.get(n, "f32"), dyn.get(n, ()))

    lines = ["module {"]
    params = ["%%%s: %s" % (n, mt(n, arrays[n].shape)) for n in inputs]
    params += ["%%y: %s" % mt("x", y_shape), "%%fs: %s" % mt("initial_states", fs_shape)]
    lines.append("  func.func @ssd(%s) attributes {llvm.emit_c_interface} {" % ", ".join(params))
    for n in inputs:
        lines.append("    %%t_%s = bufferization.to_tensor %%%s restrict : %s to %s"
                     % (n, n, mt(n, arrays[n].shape), tt(n, arrays[n].shape)))
    operands = " ".join("%s(%%t_%s : %s)" % (n, n, tt(n, arrays[n].shape)) for n in inputs)
    attrs = ["chunk_size = %d : i64" % args.chunk_size]
    if meta["dt_softplus"]:
        attrs.append("dt_softplus")
    lo, hi = meta["dt_limit"]
    hi_s = "0x7FF0000000000000" if hi is None else repr(float(hi))
    attrs.append("dt_limit = array<f64: %s, %s>" % (repr(float(lo)), hi_s))
    if st != "f32":
        attrs.append("state_type = %s" % st)
    lines.append("    %%ry, %%rfs = ssd.combined %s {%s} -> %s, %s" % (
        operands, ", ".join(attrs), tt("x", y_shape), tt("initial_states", fs_shape)))
    lines.append("    bufferization.materialize_in_destination %%ry in restrict writable %%y : (%s, %s) -> ()"
                 % (tt("x", y_shape), mt("x", y_shape)))
    lines.append("    bufferization.materialize_in_destination %%rfs in restrict writable %%fs : (%s, %s) -> ()"
                 % (tt("initial_states", fs_shape), mt("initial_states", fs_shape)))
    lines.append("    return\n  }")

    for n in inputs:
        shape = arrays[n].shape
        lines.append('  memref.global "private" constant @g_%s : memref<%s> = %s'
                     % (n, ttype(shape, elt.get(n, "f32")), dense(arrays[n])))
    lines.append("  func.func @main() {")
    call_args, call_types = [], []
    for n in inputs:
        shape = arrays[n].shape
        static = "memref<%s>" % ttype(shape, elt.get(n, "f32"))
        lines.append("    %%g_%s = memref.get_global @g_%s : %s" % (n, n, static))
        val = "%%g_%s" % n
        if dyn.get(n):
            lines.append("    %%c_%s = memref.cast %s : %s to %s" % (n, val, static, mt(n, shape)))
            val = "%%c_%s" % n
        call_args.append(val)
        call_types.append(mt(n, shape))
    for name, shape, key in (("y", y_shape, "x"), ("fs", fs_shape, "initial_states")):
        e = elt.get(key, "f32")
        static = "memref<%s>" % ttype(shape, e)
        lines.append("    %%o_%s = memref.alloc() : %s" % (name, static))
        val = "%%o_%s" % name
        if key == "x" and dyn.get("x"):
            lines.append("    %%oc_%s = memref.cast %s : %s to %s" % (name, val, static, mt(key, shape)))
            val = "%%oc_%s" % name
        call_args.append(val)
        call_types.append(mt(key, shape))
    lines.append("    call @ssd(%s) : (%s) -> ()" % (", ".join(call_args), ", ".join(call_types)))
    for name, shape, key in (("y", y_shape, "x"), ("fs", fs_shape, "initial_states")):
        e = elt.get(key, "f32")
        src = "%%o_%s" % name
        if e != "f32":
            rank = len(shape)
            ids = ", ".join("d%d" % i for i in range(rank))
            lines.append("    %%w_%s = memref.alloc() : memref<%s>" % (name, ttype(shape, "f32")))
            lines.append("    linalg.generic {indexing_maps = [affine_map<(%s) -> (%s)>, affine_map<(%s) -> (%s)>], "
                         "iterator_types = [%s]} ins(%s : memref<%s>) outs(%%w_%s : memref<%s>) {"
                         % (ids, ids, ids, ids, ", ".join(['"parallel"'] * rank), src,
                            ttype(shape, e), name, ttype(shape, "f32")))
            lines.append("    ^bb0(%%a: %s, %%o: f32):\n      %%e = arith.extf %%a : %s to f32\n      linalg.yield %%e : f32\n    }" % (e, e))
            src = "%%w_%s" % name
        lines.append("    %%u_%s = memref.cast %s : memref<%s> to memref<*xf32>" % (name, src, ttype(shape, "f32")))
        lines.append("    call @printMemrefF32(%%u_%s) : (memref<*xf32>) -> ()" % name)
    lines.append("    return\n  }")
    lines.append("  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}")
    lines.append("}")
    return "\n".join(lines) + "\n", meta, y_shape, fs_shape


def parse_prints(text):
    blocks = text.split("Unranked Memref")[1:]
    out = []
    for blk in blocks:
        data = blk.split("data =", 1)[1]
        nums = re.findall(r"[-+]?(?:nan|inf|\d+\.?\d*(?:[eE][-+]?\d+)?)", data)
        out.append(np.array([float(v) for v in nums], dtype=np.float64))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--ssd-opt", required=True)
    ap.add_argument("--chunk-size", type=int, default=16)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--state-dtype", default="f32")
    ap.add_argument("--dynamic", action="store_true")
    ap.add_argument("--pipeline-options", default="")
    ap.add_argument("--emit")
    ap.add_argument("--max-err", type=float,
                    help="exit non-zero when an output's error is above this")
    args = ap.parse_args()
    text, meta, y_shape, fs_shape = build(args.case, args)
    if args.emit:
        open(args.emit, "w").write(text)
    opt = subprocess.run([args.ssd_opt, "--pass-pipeline=builtin.module(ssd-cpu-pipeline%s)" % args.pipeline_options, "-"],
                         input=text, capture_output=True, text=True)
    if opt.returncode:
        sys.exit("ssd-opt failed:\n" + opt.stderr[-4000:])
    run = subprocess.run([RUNNER, "-e", "main", "-entry-point-result=void",
                          "-shared-libs=" + LIBS, "-O3"],
                         input=opt.stdout, capture_output=True, text=True)
    if run.returncode:
        sys.exit("mlir-runner failed:\n" + run.stderr[-4000:])
    y, fs = parse_prints(run.stdout)
    worst = 0.0
    for name, got, shape in (("y", y, y_shape), ("final_states", fs, fs_shape)):
        exp = np.load(os.path.join(args.case, name + ".npy")).astype(np.float64)
        got = got.reshape(shape)
        err = np.max(np.abs(got - exp)) / np.max(np.abs(exp))
        worst = max(worst, err)
        print("%s %s Q=%d %s/%s%s: %s rel err %.3e" % (
            os.path.basename(args.case.rstrip("/")), name, args.chunk_size, args.dtype,
            args.state_dtype, " dyn" if args.dynamic else "", name, err))
    if args.max_err is not None:
        # NaN compares false, so test for "not within" rather than "above".
        if not worst <= args.max_err:
            sys.exit("FAIL: error %.3e above %.1e" % (worst, args.max_err))
        print("PASS")
    return worst


if __name__ == "__main__":
    main()
