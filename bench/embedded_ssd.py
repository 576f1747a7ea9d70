#!/usr/bin/env python3
"""The project's CPU kernel as an embedding caller reaches it.

Times ssd_mlir.numpy.mamba_chunk_scan_combined, the public NumPy entry
point, on a case folder (the golden format). It compiles one kernel per
layer whose batch and length stay dynamic, and runs it through the C API,
with the checks and packing a caller pays for. The thread count is
$SSD_MLIR_CPU_THREADS (0: one thread), set by the caller. The first call
(compilation) is not timed. Prints one JSON line: the median time of
--repeat calls and the largest relative error of y and final_states against
the folder's expected outputs. The chunk size is --chunk-size as asked
($SSD_MLIR_CHUNK_SIZE=requested unless set).

  SSD_MLIR_LIB=build/lib bench/embedded_ssd.py --case DIR --chunk-size Q [--repeat N]
"""
import os
import sys

import numpy as np

# The case's --chunk-size, as the ssd-run rows beside it run, unless the
# caller says otherwise (the entry point's own choice is at most 64 on CPU).
os.environ.setdefault("SSD_MLIR_CHUNK_SIZE", "requested")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from numpy_ssd import case_arguments, load, time_and_report  # noqa: E402
from ssd_mlir import numpy as ssd_numpy  # noqa: E402


def main():
    args, meta = case_arguments()
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
    run()  # compiles the kernel
    time_and_report(run, args.case, args.repeat)


if __name__ == "__main__":
    main()
