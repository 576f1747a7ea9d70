#!/usr/bin/env python3
"""Runs the kernels of ssd-test-pipelined-product on the GPU and checks each
against a float64 host product of the same bf16 inputs.

    run_pipelined_products.py DIR [--json FILE]

DIR holds <name>.cubin and cases.txt (one line per kernel: name m n k stages
shared_bytes), as scripts/device/build-artifacts.sh writes them. Each kernel
computes C[m][n] = sum_k A[m][k] B[n][k]: one block of 128 (1 + m / 64)
threads, A and B read through tensor maps that this script encodes with the
driver's cuTensorMapEncodeTiled (bf16, boxes of 64 columns x all rows,
128-byte swizzle) and copies to device memory, C as an expanded memref
descriptor. Each case runs in a child process with a time limit, so that a
pipeline that deadlocks (a wrong mbarrier parity) is reported as a FAIL
instead of hanging the run. Prints one PASS/FAIL line per kernel and exits 1
when any product is off by more than 1e-4 relative to its largest element.
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_tile_products import (  # noqa: E402
    BOUND, descriptor, finish, from_bf16_bits, relative_error, to_bf16_bits)
from tensor_maps import tensor_map  # noqa: E402

TIME_LIMIT_S = 60


def run_case(folder, name, m, n, k, shared):
    """The product's max error relative to its largest element."""
    import cupy as cp
    cuda = ctypes.CDLL("libcuda.so.1")
    rng = np.random.default_rng(7)
    a_bits = to_bf16_bits(rng.standard_normal((m, k)).astype(np.float32))
    b_bits = to_bf16_bits(rng.standard_normal((n, k)).astype(np.float32))
    ref = from_bf16_bits(a_bits).astype(np.float64) @ from_bf16_bits(b_bits).astype(np.float64).T
    d_a, d_b = cp.asarray(a_bits), cp.asarray(b_bits)
    # Boxes of one 64-deep slice of all the rows (bf16, 128-byte swizzle).
    d_a_map = cp.asarray(tensor_map(cuda, d_a, (64, m)))
    d_b_map = cp.asarray(tensor_map(cuda, d_b, (64, n)))
    d_c = cp.full((m, n), np.nan, dtype=cp.float32)
    kernel = cp.RawModule(path=f"{folder}/{name}.cubin").get_function("pipelined_product")
    kernel.max_dynamic_shared_size_bytes = shared
    threads = 128 * (1 + m // 64)
    kernel((1,), (threads,), (d_a_map, d_b_map) + descriptor(d_c), shared_mem=shared)
    return relative_error(cp, d_c, ref)


def main():
    folder = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--one":
        name, m, n, k, shared = sys.argv[3], *map(int, sys.argv[4:8])
        print(repr(run_case(folder, name, m, n, k, shared)))
        return 0
    json_path = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    rows = []
    with open(f"{folder}/cases.txt") as cases:
        for line in cases:
            if not line.strip():
                continue
            name, m, n, k, stages, shared = line.split()
            error = None
            try:
                child = subprocess.run(
                    [sys.executable, __file__, folder, "--one", name, m, n, k, shared],
                    capture_output=True, text=True, timeout=TIME_LIMIT_S)
                if child.returncode != 0:
                    err = float("inf")
                    error = (child.stderr.strip().splitlines() or ["exited with no message"])[-1]
                else:
                    err = float(child.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                err, error = float("inf"), f"no result within {TIME_LIMIT_S} s (a deadlocked pipeline?)"
            ok = err <= BOUND
            print(f"{'PASS' if ok else 'FAIL'}: {name} m={m} n={n} k={k} stages={stages} "
                  f"max_rel_err={err:.3e}" + (f" ({error})" if error else ""))
            rows.append({"name": name, "m": int(m), "n": int(n), "k": int(k), "stages": int(stages),
                         "max_rel_err": err, "status": "PASS" if ok else "FAIL",
                         **({"error": error} if error else {})})
    return finish(rows, json_path)


if __name__ == "__main__":
    sys.exit(main())
