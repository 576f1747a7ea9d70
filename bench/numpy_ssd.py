#!/usr/bin/env python3
"""The CPU anchor: a chunked SSD forward in NumPy (float32, BLAS products).

The algorithm every chunked implementation shares, written plainly with
batched matrix products so that OpenBLAS does the work, one chunk at a
time for all heads: the causal product (C B^T masked by the decays, times
dt) x, the inter-chunk output exp(dA_cumsum) C state, the chunk state
B^T (decay dt x) and the state carried to the next chunk. It reads a case folder (the
golden format; D, dt_bias and softplus supported, the features cpu_bench.py
generates, and dt_limit) and prints one JSON line: the median time of --repeat runs and
the largest relative error of y and final_states against the folder's
expected outputs. The thread count is OpenBLAS's (OPENBLAS_NUM_THREADS, set
by the caller before NumPy loads).

  bench/numpy_ssd.py --case DIR --chunk-size Q [--repeat N]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def load(case, name):
    path = os.path.join(case, name + ".npy")
    return np.load(path) if os.path.exists(path) else None


def ssd_chunked(x, dt, A, B, C, D, dt_bias, softplus, dt_limit, q):
    """y (b, L, h, p) and the final states (b, h, p, n), float32."""
    b, L, h, p = x.shape
    g, n = B.shape[2], B.shape[3]
    if dt_bias is not None:
        dt = dt + dt_bias
    if softplus:
        dt = np.where(dt > 20.0, dt, np.log1p(np.exp(np.minimum(dt, 20.0))))
    lo, hi = dt_limit
    dt = np.clip(dt, lo, np.inf if hi is None else hi).astype(np.float32)
    hg = h // g
    y = np.empty_like(x)
    state = np.zeros((b, g, hg, p, n), np.float32)
    causal = np.tril(np.ones((q, q), dtype=bool))
    # One chunk at a time, every head at once: the temporaries stay a
    # chunk's (a few MB), the products are batched BLAS calls; heads are
    # (group, head in group), so B and C broadcast over a group's heads.
    for t0 in range(0, L, q):
        t1 = min(t0 + q, L)
        l = t1 - t0
        xc = x[:, t0:t1].reshape(b, l, g, hg, p).transpose(0, 2, 3, 1, 4)
        dtc = dt[:, t0:t1].reshape(b, l, g, hg).transpose(0, 2, 3, 1)
        Bc = B[:, t0:t1].transpose(0, 2, 1, 3)[:, :, None]   # (b,g,1,l,n)
        Cc = C[:, t0:t1].transpose(0, 2, 1, 3)[:, :, None]
        dA = np.cumsum(dtc * A.reshape(g, hg)[None, :, :, None], axis=-1)
        # The causal product: (C B^T) o exp(dA_i - dA_j) o dt_j, times x.
        cb = np.matmul(Cc, Bc.swapaxes(-1, -2))              # (b,g,1,l,l)
        w = dA[..., :, None] - dA[..., None, :]               # (b,g,hg,l,l)
        np.exp(w, out=w, where=causal[:l, :l])
        w[..., ~causal[:l, :l]] = 0.0
        w *= cb
        w *= dtc[..., None, :]
        yc = np.matmul(w, xc)                                # (b,g,hg,l,p)
        # Inter-chunk output from the state entering the chunk.
        yc += np.matmul(Cc, state.swapaxes(-1, -2)) * np.exp(dA)[..., None]
        y[:, t0:t1] = yc.transpose(0, 3, 1, 2, 4).reshape(b, l, h, p)
        # The chunk's state, then the state leaving the chunk.
        scale = dtc * np.exp(dA[..., -1:] - dA)              # (b,g,hg,l)
        chunk_state = np.matmul((xc * scale[..., None]).swapaxes(-1, -2), Bc)
        state = np.exp(dA[..., -1])[..., None, None] * state + chunk_state
    state = state.reshape(b, h, p, n)
    if D is not None:
        y += x * (D[None, None, :, None] if D.ndim == 1 else D)
    return y, state


def rel_err(got, want):
    want = want.astype(np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def time_and_report(run, case, repeat):
    """Times `run` (returning y and the final states) `repeat` times and
    prints one JSON line: the median time and the largest relative error
    against the case folder's expected outputs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        y, final = run()
        times.append((time.perf_counter() - start) * 1e3)
    errors = {}
    for name, got in (("y", y), ("final_states", final)):
        want = load(case, name)
        if want is not None:
            errors[name] = rel_err(got, want)
    print(json.dumps({"ms": statistics.median(times), "ms_runs": times,
                      "max_rel_err": max(errors.values()) if errors else None,
                      "errors": errors}))


def case_arguments():
    """--case, --chunk-size and --repeat, and the case's case.json."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--chunk-size", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with open(os.path.join(args.case, "case.json")) as f:
        return args, json.load(f)


def main():
    args, meta = case_arguments()
    unsupported = [k for k in ("z", "initial_states", "seq_idx", "cu_seqlens")
                   if k in meta.get("inputs", [])]
    if unsupported:
        sys.exit("numpy_ssd: inputs not supported here: " + ", ".join(unsupported))
    inputs = {k: load(args.case, k) for k in ("x", "dt", "A", "B", "C", "D",
                                              "dt_bias")}
    inputs = {k: (v.astype(np.float32) if v is not None else None)
              for k, v in inputs.items()}
    run = lambda: ssd_chunked(softplus=bool(meta.get("dt_softplus")),
                              dt_limit=meta.get("dt_limit") or (0.0, None),
                              q=args.chunk_size, **inputs)
    time_and_report(run, args.case, args.repeat)


if __name__ == "__main__":
    main()
