#!/usr/bin/env python3
"""CPU benchmark of the compiled SSD (a measurement, not a test).

Builds a random case of the Mamba-2 2.7B layer shape (h=80, p=64, n=128,
g=1; f32; D per head, dt_bias, softplus) with ssd-make-case, times the
compiled CPU path with ssd-run (one thread and --threads N; a kernel
specialised on the case's shape), the same kernel as an embedding caller
reaches it (bench/embedded_ssd.py: the public NumPy entry point, batch and
length dynamic, through the C API; rows cpu-embedded), the anchor
(bench/numpy_ssd.py: the chunked algorithm in NumPy on OpenBLAS, one thread
and N) and the independent plain loop-nest reference (ssd-run --reference)
on the same case in the same run, and writes
bench/results/<date>-<short commit>-cpu.json in the format of DESIGN.md,
with each compiled row's ratio to the NumPy row of the same thread count.

FLOPs counted as the issue states: 2*Q*n per token per group (bmm) plus
2*Q*p + 4*n*p per token per head.

With --seq-idx-cuts T,... the case packs sequences (seq_idx increments at
those tokens), and with --cu-seqlens S,... it is varlen: the NumPy anchor
takes neither, so its rows are left out, and the compiled path is also
timed on the whole sequence at once (--segment-chunks 0) beside its
default segments; the file is then <date>-<short commit>-cpu-seq-idx.json
or -cpu-cu-seqlens-s<sequences>.json; another --seqlen than 4096 adds
-L<seqlen>.

  bench/cpu_bench.py [--build build] [--seqlen 4096] [--chunk-size 128]
                     [--seq-idx-cuts T,... | --cu-seqlens S,...]
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = dict(nheads=80, headdim=64, dstate=128, ngroups=1)


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("cpu_bench: %s failed (%d):\n%s%s" %
                 (" ".join(cmd), out.returncode, out.stdout, out.stderr))
    return out.stdout


def timed(bin_dir, case, chunk, repeat, extra):
    text = run([os.path.join(bin_dir, "ssd-run"), "--case", case,
                "--chunk-size", str(chunk), "--repeat", str(repeat)] + extra)
    ms = float(re.search(r"time: median ([0-9.e+-]+) ms", text).group(1))
    err = max(float(v) for v in re.findall(r"max_rel_err=([0-9.e+-]+)", text))
    return ms, err


def timed_script(script, case, chunk, repeat, env):
    """Runs bench/<script> on the case; its JSON line's time and error."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script),
                          "--case", case, "--chunk-size", str(chunk),
                          "--repeat", str(repeat)],
                         capture_output=True, text=True,
                         env=dict(os.environ, **env))
    if out.returncode != 0:
        sys.exit("cpu_bench: %s failed (%d):\n%s%s" %
                 (script, out.returncode, out.stdout, out.stderr))
    row = json.loads(out.stdout.strip().splitlines()[-1])
    return row["ms"], row["max_rel_err"]


def numpy_anchor(case, chunk, repeat, threads):
    return timed_script("numpy_ssd.py", case, chunk, repeat,
                        dict(OPENBLAS_NUM_THREADS=str(threads),
                             OMP_NUM_THREADS=str(threads)))


def embedded(bin_dir, case, chunk, repeat, threads):
    """The kernel through the public NumPy entry point (bench/embedded_ssd.py):
    dynamic batch and length, the C API, $SSD_MLIR_CPU_THREADS threads."""
    return timed_script(
        "embedded_ssd.py", case, chunk, repeat,
        dict(SSD_MLIR_CPU_THREADS=str(threads if threads > 1 else 0),
             SSD_MLIR_LIB=os.path.join(os.path.dirname(bin_dir), "lib")))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seqlen", type=int, default=4096)
    ap.add_argument("--chunk-size", type=int, default=128)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seq-idx-cuts", default="",
                    help="tokens where seq_idx increments (packed sequences)")
    ap.add_argument("--cu-seqlens", default="",
                    help="cu_seqlens of a varlen case (0,...,seqlen)")
    args = ap.parse_args()
    if args.seq_idx_cuts and args.cu_seqlens:
        ap.error("--seq-idx-cuts and --cu-seqlens are mutually exclusive")
    packing = (["--seq-idx-cuts", args.seq_idx_cuts] if args.seq_idx_cuts else
               ["--cu-seqlens", args.cu_seqlens] if args.cu_seqlens else [])
    bin_dir = os.path.join(args.build, "bin")
    q, L = args.chunk_size, args.seqlen
    h, p, n, g = (SHAPE[k] for k in ("nheads", "headdim", "dstate", "ngroups"))
    flops = L * (2 * q * n * g + h * (2 * q * p + 4 * n * p))

    with tempfile.TemporaryDirectory() as tmp:
        case = os.path.join(tmp, "case")
        run([os.path.join(bin_dir, "ssd-make-case"), "-o", case, "--name",
             "mamba2-2.7b", "--batch", "1", "--seqlen", str(L)] +
            sum([["--" + k, str(v)] for k, v in SHAPE.items()], []) +
            ["--features", "D,dt_bias,softplus", "--seed", "7"] +
            packing)
        variants = [("cpu", 1, []),
                    ("cpu", args.threads, ["--threads", str(args.threads)])]
        if not args.cu_seqlens:
            variants += [("cpu-embedded", 1, "embedded"),
                         ("cpu-embedded", args.threads, "embedded")]
        if packing:
            variants += [("cpu-whole-sequence", 1, ["--segment-chunks", "0"])]
        else:
            variants += [("numpy-openblas", 1, None),
                         ("numpy-openblas", args.threads, None)]
        variants += [("reference-loop-nest", 1, ["--reference"])]
        rows = []
        for strategy, threads, extra in variants:
            repeat = 1 if strategy.startswith("reference") else args.repeat
            if extra is None:
                ms, err = numpy_anchor(case, q, repeat, threads)
            elif extra == "embedded":
                ms, err = embedded(bin_dir, case, q, repeat, threads)
            else:
                ms, err = timed(bin_dir, case, q, repeat, extra)
            rows.append(dict(strategy=strategy, threads=threads, batch=1,
                             seqlen=L, chunk_size=q, dtype="f32",
                             state_dtype="f32", ms=ms, max_rel_err=err,
                             gflops=flops / ms / 1e6, tflops=flops / ms / 1e9,
                             gbps=None, **SHAPE))
            if packing:
                rows[-1][packing[0][2:].replace("-", "_")] = packing[1]
            print("%-20s threads=%d  %10.1f ms  %7.2f GFLOP/s  max_rel_err=%.2e"
                  % (strategy, threads, ms, flops / ms / 1e6, err))

    anchor = {r["threads"]: r["ms"] for r in rows
              if r["strategy"] == "numpy-openblas"}
    for r in rows:
        if r["strategy"] in ("cpu", "cpu-embedded") and r["threads"] in anchor:
            r["ratio_to_numpy"] = r["ms"] / anchor[r["threads"]]
            print("%s threads=%d: %.2fx the NumPy time" %
                  (r["strategy"], r["threads"], r["ratio_to_numpy"]))

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    date = datetime.date.today().isoformat()
    result = dict(commit=commit, gpu="none", cpu=cpu_model(),
                  cores=os.cpu_count(), date=date, flops_per_call=flops,
                  rows=rows)
    suffix = ("-cpu-seq-idx" if args.seq_idx_cuts else
              "-cpu-cu-seqlens-s%d" % (len(args.cu_seqlens.split(",")) - 1)
              if args.cu_seqlens else "-cpu")
    if args.seqlen != 4096:
        suffix += "-L%d" % args.seqlen
    path = os.path.join(ROOT, "bench", "results",
                        "%s-%s%s.json" % (date, commit, suffix))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
