#!/usr/bin/env python3
"""The project's CPU kernel as an embedding caller reaches it.

Times ssd_mlir.numpy.mamba_chunk_scan_combined, the public NumPy entry
point, on a case folder (the golden format). It compiles one kernel per
layer whose batch and length stay dynamic, and runs it through the C API,
with the checks and packing a caller pays for. The thread count is
$SSD_MLIR_CPU_THREADS (0: one thread), set by the caller. The first call
(compilation) is not timed. Prints one JSON line: the median time of
--repeat calls and the largest relative error of y and final_states against
the folder's expected outputs.

  SSD_MLIR_LIB=build/lib bench/embedded_ssd.py --case DIR --chunk-size Q [--repeat N]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from numpy_ssd import load, rel_err  # noqa: E402  (the anchor's metric)
from ssd_mlir import numpy as ssd_numpy  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--chunk-size", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with open(os.path.join(args.case, "case.json")) as f:
        meta = json.load(f)
    if "cu_seqlens" in meta.get("inputs", []):
        sys.exit("embedded_ssd: cu_seqlens cases are not timed here "
                 "(mamba_chunk_scan_combined reads them only for varlen states)")
    names = ("x", "dt", "A", "B", "C", "D", "z", "dt_bias", "initial_states",
             "seq_idx")
    inputs = {k: load(args.case, k) for k in names}
    floats = {k: v.astype(np.float32) for k, v in inputs.items()
              if v is not None and k != "seq_idx"}
    lo, hi = meta.get("dt_limit") or (0.0, None)
    kwargs = dict(D=floats.get("D"), z=floats.get("z"),
                  dt_bias=floats.get("dt_bias"),
                  initial_states=floats.get("initial_states"),
                  seq_idx=inputs["seq_idx"],
                  dt_softplus=bool(meta.get("dt_softplus")),
                  dt_limit=(lo, float("inf") if hi is None else hi),
                  return_final_states=True)
    run = lambda: ssd_numpy.mamba_chunk_scan_combined(  # noqa: E731
        floats["x"], floats["dt"], floats["A"], floats["B"], floats["C"],
        args.chunk_size, **kwargs)
    run()
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        y, final = run()
        times.append((time.perf_counter() - start) * 1e3)
    errors = {}
    for name, got in (("y", y), ("final_states", final)):
        want = load(args.case, name)
        if want is not None:
            errors[name] = rel_err(got, want)
    print(json.dumps({"ms": statistics.median(times), "ms_runs": times,
                      "max_rel_err": max(errors.values()) if errors else None,
                      "errors": errors}))


if __name__ == "__main__":
    main()
