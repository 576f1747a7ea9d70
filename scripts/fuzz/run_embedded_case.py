#!/usr/bin/env python3
"""Runs a case folder through the public NumPy entry point, as ssd-run would.

    run_embedded_case.py --case DIR [--chunk-size Q] [--dtype f32|f16]
                         [--threads N]

ssd_mlir.numpy.mamba_chunk_scan_combined compiles one CPU kernel per layer
with the batch and the length left dynamic, and runs it through the C API:
the path an ML compiler embedding the project takes, where ssd-run
specialises its kernel on the case's shape. The outputs are checked against
the folder's expected ones (the independent reference) with ssd-run's
bounds (1e-4 with f32 inputs, 5e-3 with f16), and printed as ssd-run prints
them, one "NAME: max_rel_err=E bound=B PASS|FAIL" line per output. NumPy
has no bfloat16, and the entry point keeps fp32 states and reads cu_seqlens
only for varlen states: such cases are refused with exit status 2.
Exit status: 0 within bounds, 1 an output over its bound, 2 a case or flag
this runner does not take.

SSD_MLIR_LIB must name the folder of the built libraries.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

BOUNDS = {"f32": 1e-4, "f16": 5e-3}


def load(case, name):
    path = os.path.join(case, name + ".npy")
    return np.load(path) if os.path.exists(path) else None


def max_rel_err(got, want):
    """max|got - want| / max|want| (the golden error measure)."""
    want = np.asarray(want, dtype=np.float64)
    diff = np.abs(np.asarray(got, dtype=np.float64) - want)
    if diff.size == 0:
        return 0.0
    return float(diff.max()) / max(float(np.abs(want).max()), 1e-30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", required=True)
    ap.add_argument("--chunk-size", type=int, default=64)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--state-dtype", default="f32")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.dtype not in BOUNDS or args.state_dtype != "f32":
        print("run_embedded_case: --dtype %s --state-dtype %s: the NumPy entry "
              "point takes f32 or f16 inputs and f32 states" %
              (args.dtype, args.state_dtype))
        return 2
    with open(os.path.join(args.case, "case.json")) as f:
        meta = json.load(f)
    if "cu_seqlens" in meta.get("inputs", []):
        print("run_embedded_case: cu_seqlens: the NumPy entry point reads it "
              "only for varlen states")
        return 2
    # Before the package loads: it reads the thread count per kernel.
    os.environ["SSD_MLIR_CPU_THREADS"] = str(args.threads)
    # The case's chunk size, not the entry point's own choice for the CPU.
    os.environ["SSD_MLIR_CHUNK_SIZE"] = "requested"
    from ssd_mlir import numpy as ssd_numpy

    io = np.float16 if args.dtype == "f16" else np.float32
    f32 = np.float32
    value = {k: load(args.case, k) for k in (
        "x", "dt", "A", "B", "C", "D", "z", "dt_bias", "initial_states", "seq_idx")}
    cast = lambda k, t: None if value[k] is None else value[k].astype(t)  # noqa: E731
    lo, hi = meta.get("dt_limit") or (0.0, None)
    y, final = ssd_numpy.mamba_chunk_scan_combined(
        cast("x", io), cast("dt", f32), cast("A", f32), cast("B", io),
        cast("C", io), args.chunk_size, D=cast("D", f32), z=cast("z", io),
        dt_bias=cast("dt_bias", f32),
        initial_states=cast("initial_states", f32), seq_idx=value["seq_idx"],
        dt_softplus=bool(meta.get("dt_softplus")),
        dt_limit=(lo, math.inf if hi is None else hi),
        return_final_states=True)
    bound = BOUNDS[args.dtype]
    status = 0
    for name, got in (("y", y), ("final_states", final)):
        want = load(args.case, name)
        if want is None:
            continue
        err = max_rel_err(got, want)
        ok = err <= bound
        status = status if ok else 1
        print("%s: max_rel_err=%.3e bound=%.3e %s" %
              (name, err, bound, "PASS" if ok else "FAIL"))
    return status


if __name__ == "__main__":
    sys.exit(main())
