#!/usr/bin/env python3
"""Runs the tile-product kernels of ssd-test-tile-product on the GPU and
checks each against a float64 host product of the same bf16 inputs.

    run_tile_products.py DIR [--json FILE]

DIR holds <name>.cubin and cases.txt (one line per kernel: name m n k
a_k_contiguous b_k_contiguous mma [a_source]), as
scripts/device/build-artifacts.sh writes them. a_source (default staged) is
the pass's a-source: `scaled` multiplies A along k by 2^(k % 3 - 1),
`causal` zeroes A(k, m) for k > m; the host product does the same. Loads the cubins with CuPy (the GPU machine has it), passes
every memref as its expanded descriptor (allocated and aligned pointer,
offset, sizes, strides). Prints one PASS/FAIL line per kernel and exits 1
when any product is off by more than 1e-4 (relative to its largest
element: the products accumulate in f32 from exact bf16 inputs, so a
wrong layout or fragment mapping lands near 1).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

BOUND = 1e-4


def to_bf16_bits(x):
    """float32 -> bf16 bit patterns, rounded to nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))
    return (rounded >> np.uint32(16)).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def descriptor(array):
    """The expanded memref descriptor of a device array of any rank
    (allocated and aligned pointer, offset 0, its sizes, its strides in
    elements)."""
    return (array, array, np.int64(0), *(np.int64(size) for size in array.shape),
            *(np.int64(stride // array.itemsize) for stride in array.strides))


def effective_a(a_mk, a_source):
    """A (m x k, float64) as the kernel's a-source transforms it."""
    m, k = a_mk.shape
    if a_source == "scaled":
        return a_mk * (2.0 ** (np.arange(k) % 3 - 1))[None, :]
    if a_source == "causal":
        return np.where(np.arange(k)[None, :] <= np.arange(m)[:, None], a_mk, 0.0)
    return a_mk


def run_case(cp, folder, name, m, n, k, a_k, b_k, rng, a_source="staged"):
    a = rng.standard_normal((m, k) if a_k else (k, m)).astype(np.float32)
    b = rng.standard_normal((n, k) if b_k else (k, n)).astype(np.float32)
    a_bits, b_bits = to_bf16_bits(a), to_bf16_bits(b)
    a64 = from_bf16_bits(a_bits).astype(np.float64)
    b64 = from_bf16_bits(b_bits).astype(np.float64)
    ref = effective_a(a64 if a_k else a64.T, a_source) @ (b64.T if b_k else b64)
    module = cp.RawModule(path=f"{folder}/{name}.cubin")
    kernel = module.get_function("tile_product")
    d_a, d_b = cp.asarray(a_bits), cp.asarray(b_bits)
    d_c = cp.full((m, n), np.nan, dtype=cp.float32)
    kernel((1,), (256,), descriptor(d_a) + descriptor(d_b) + descriptor(d_c))
    return relative_error(cp, d_c, ref)


def relative_error(cp, d_c, ref):
    """Once the device is done: the largest error of C against the float64
    product, relative to the product's largest element (inf where C holds
    a NaN or an infinity, as the NaNs it starts with)."""
    cp.cuda.runtime.deviceSynchronize()
    out = cp.asnumpy(d_c).astype(np.float64)
    if not np.isfinite(out).all():
        return float("inf")
    return float(np.abs(out - ref).max() / np.abs(ref).max())


def main():
    folder = sys.argv[1]
    json_path = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    import cupy as cp
    rng = np.random.default_rng(7)
    rows = []
    with open(f"{folder}/cases.txt") as cases:
        for line in cases:
            if not line.strip():
                continue
            fields = line.split()
            name, m, n, k, a_k, b_k, mma = fields[:7]
            a_source = fields[7] if len(fields) > 7 else "staged"
            m, n, k = int(m), int(n), int(k)
            try:
                err = run_case(cp, folder, name, m, n, k, a_k == "true",
                               b_k == "true", rng, a_source)
                error = None
            except Exception as exc:  # one broken kernel must not hide the rest
                err, error = float("inf"), f"{type(exc).__name__}: {exc}"
            ok = err <= BOUND
            print(f"{'PASS' if ok else 'FAIL'}: {name} m={m} n={n} k={k} "
                  f"A k-contiguous={a_k} B k-contiguous={b_k} mma={mma} "
                  f"a-source={a_source} "
                  f"max_rel_err={err:.3e}" + (f" ({error})" if error else ""))
            rows.append({"name": name, "m": m, "n": n, "k": k, "a_k_contiguous": a_k == "true",
                         "b_k_contiguous": b_k == "true", "mma": mma, "a_source": a_source,
                         "max_rel_err": err, "status": "PASS" if ok else "FAIL",
                         **({"error": error} if error else {})})
    return finish(rows, json_path)


def run_facts():
    """What a result file records beside its rows: the commit
    (SSD_COMMIT, else git's where the checkout has it), the GPU and the
    date."""
    commit = os.environ.get("SSD_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, cwd=os.path.dirname(os.path.abspath(__file__))
                                    ).stdout.strip() or None
        except OSError:
            commit = None
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        gpu = None
    return {"commit": commit, "gpu": gpu, "date": time.strftime("%Y-%m-%d")}


def finish(rows, json_path, bound=BOUND):
    """Writes the rows (with the bound they were held to, and run_facts) to
    json_path where given; the exit status: 1 when any row failed."""
    if json_path:
        with open(json_path, "w") as out:
            json.dump({**run_facts(), "bound": bound, "rows": rows}, out, indent=1)
    return 1 if any(row["status"] != "PASS" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
