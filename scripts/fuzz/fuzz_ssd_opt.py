#!/usr/bin/env python3
"""A mutation fuzzer for ssd-opt: parse + verify + every pipeline.

    fuzz_ssd_opt.py --ssd-opt BIN [--seeds FILE...] [--inputs N | --seconds S]
                    [--seed K] [--crashes DIR] [--jobs J]

Each input is a seed module (a layer in the ssd dialect; the built-in ones
cover the combined op with every optional operand, varlen and seq_idx, each
also as the decomposed step ops and as ssd.fused) with
a few mutations: tensor dimensions replaced by edge values (0, 1, 3, 257,
2^31, 2^62, dynamic), element types swapped, attributes changed (chunk_size,
dt_limit, p_block), operands dropped or duplicated, text truncated. Every
input runs through ssd-opt alone (parse and verify) and through
ssd-decompose + ssd-fuse, the CPU pipeline and both GPU pipelines up to the
NVVM lowering (no ptxas), each with a time limit.

A run fails on a crash (a signal, or LLVM's "PLEASE submit a bug report"
stack dump) or a hang (the time limit); a rejected input (exit 1 with a
diagnostic) is the expected outcome for bad input. Failing inputs are saved
to --crashes with the command line that failed; the exit status is 1 when
any input failed. Deterministic for a given --seed and input count.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

PIPELINES = [
    [],
    ["--ssd-decompose", "--ssd-fuse"],
    # The fit's ladder on dynamic lengths, then the step ops.
    ["--ssd-fit-chunk-size", "--ssd-decompose"],
    ["--ssd-cpu-pipeline"],
    ["--ssd-gpu-unfused-pipeline=format=none"],
    ["--ssd-gpu-fused-pipeline=format=none"],
    # The chunk-state product on mma.sync (the default takes wgmma).
    ["--ssd-gpu-fused-pipeline=format=none state-mma=mma.sync"],
]

# Built-in seeds: small layers the mutations start from.
SEEDS = [
    """func.func @layer(%x: tensor<1x?x4x16xbf16>, %dt: tensor<1x?x4xf32>, %A: tensor<4xf32>, %B: tensor<1x?x2x16xbf16>, %C: tensor<1x?x2x16xbf16>, %D: tensor<4xf32>, %z: tensor<1x?x4x16xbf16>, %db: tensor<4xf32>, %is: tensor<1x4x16x16xf32>) -> (tensor<1x?x4x16xbf16>, tensor<1x4x16x16xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x4x16xbf16>) dt(%dt : tensor<1x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x?x2x16xbf16>) C(%C : tensor<1x?x2x16xbf16>) D(%D : tensor<4xf32>) z(%z : tensor<1x?x4x16xbf16>) dt_bias(%db : tensor<4xf32>) initial_states(%is : tensor<1x4x16x16xf32>) {chunk_size = 32 : i64, dt_softplus, dt_limit = array<f64: 0.0, 10.0>} -> tensor<1x?x4x16xbf16>, tensor<1x4x16x16xf32>
  return %y, %fs : tensor<1x?x4x16xbf16>, tensor<1x4x16x16xf32>
}
""",
    """func.func @seq(%x: tensor<2x64x2x8xf32>, %dt: tensor<2x64x2xf32>, %A: tensor<2xf32>, %B: tensor<2x64x1x16xf32>, %C: tensor<2x64x1x16xf32>, %si: tensor<2x64xi32>) -> (tensor<2x64x2x8xf32>, tensor<2x2x8x16xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<2x64x2x8xf32>) dt(%dt : tensor<2x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<2x64x1x16xf32>) C(%C : tensor<2x64x1x16xf32>) seq_idx(%si : tensor<2x64xi32>) {chunk_size = 16 : i64} -> tensor<2x64x2x8xf32>, tensor<2x2x8x16xf32>
  return %y, %fs : tensor<2x64x2x8xf32>, tensor<2x2x8x16xf32>
}
""",
    """func.func @varlen(%x: tensor<1x?x4x32xf16>, %dt: tensor<1x?x4xf32>, %A: tensor<4xf32>, %B: tensor<1x?x2x64xf16>, %C: tensor<1x?x2x64xf16>, %cu: tensor<?xi32>) -> (tensor<1x?x4x32xf16>, tensor<?x4x32x64xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x4x32xf16>) dt(%dt : tensor<1x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x?x2x64xf16>) C(%C : tensor<1x?x2x64xf16>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 64 : i64} -> tensor<1x?x4x32xf16>, tensor<?x4x32x64xf32>
  return %y, %fs : tensor<1x?x4x32xf16>, tensor<?x4x32x64xf32>
}
""",
]

EDGE_DIMS = ["0", "1", "3", "257", "2147483648", "4611686018427387904", "?"]
# Sizes that keep a layer valid when changed consistently (every use of one
# size at once), so that most such inputs reach the pipelines.
CONSISTENT_DIMS = ["1", "2", "3", "5", "8", "24", "48", "96", "128", "256", "257", "512"]
TYPES = ["f32", "bf16", "f16", "f64", "i32", "i8"]
CHUNKS = ["0", "1", "3", "16", "32", "64", "256", "1024", "4096", "-8",
          "9223372036854775807"]


def mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        # Half the mutations keep the shapes consistent.
        kind = 1 if rng.random() < 0.5 else rng.randrange(6)
        if kind == 0:  # one tensor dimension
            dims = list(re.finditer(r"(?<=[<x])(\d+|\?)(?=x)", text))
            if dims:
                m = rng.choice(dims)
                text = text[:m.start()] + rng.choice(EDGE_DIMS) + text[m.end():]
        elif kind == 1:  # the same dimension value everywhere it appears
            dims = sorted(set(re.findall(r"(?<=x)(\d+)(?=x)", text)))
            if dims:
                old = rng.choice(dims)
                new = rng.choice(CONSISTENT_DIMS if rng.random() < 0.8 else EDGE_DIMS)
                text = re.sub(r"(?<=[<x])%s(?=[x>])" % old, new, text)
        elif kind == 2:  # an element type
            types = list(re.finditer(r"x(f32|bf16|f16)>", text))
            if types:
                m = rng.choice(types)
                text = text[:m.start() + 1] + rng.choice(TYPES) + text[m.end() - 1:]
        elif kind == 3:  # an attribute
            text = re.sub(r"chunk_size = -?\d+", "chunk_size = " + rng.choice(CHUNKS), text)
            if rng.random() < 0.3:
                text = text.replace("{chunk_size", "{p_block = %d : i64, chunk_size" % rng.choice([0, 1, 3, 8, 64]))
            if rng.random() < 0.3:
                text = re.sub(r"dt_limit = array<f64: [^>]*>", "dt_limit = array<f64: %s, %s>" % (
                    rng.choice(["0.0", "-1.0", "5.0", "0x7FF8000000000000"]),
                    rng.choice(["1.0", "0.5", "0x7FF0000000000000"])), text)
        elif kind == 4:  # drop an optional operand of the op
            ops = list(re.finditer(r" (D|z|dt_bias|initial_states|seq_idx|cu_seqlens)\(%\w+ : [^)]*\)", text))
            if ops:
                m = rng.choice(ops)
                text = text[:m.start()] + text[m.end():]
        else:  # truncate
            if rng.random() < 0.3:
                text = text[: rng.randrange(len(text))]
    return text


def run_one(ssd_opt, text, timeout):
    """Returns ("lowered" | "rejected", None), or ("failed", (pipeline, why,
    output)) for a crash or a hang."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        for pipeline in PIPELINES:
            cmd = [ssd_opt, path] + pipeline + ["-o", os.devnull]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "failed", (pipeline, "hang (over %d s)" % timeout, "")
            crashed = r.returncode < 0 or "PLEASE submit a bug report" in r.stderr
            if crashed:
                return "failed", (pipeline, "crash (exit %d)" % r.returncode, r.stderr[-2000:])
            if r.returncode != 0:
                # Rejected with a diagnostic; past verification the other
                # pipelines still run (each may reject for its own reasons).
                if not pipeline:
                    return "rejected", None
        return "lowered", None
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ssd-opt", required=True)
    ap.add_argument("--seeds", nargs="*", default=[], help="more seed modules")
    ap.add_argument("--check-seeds", action="store_true",
                    help="only check that every seed verifies and lowers, then exit")
    ap.add_argument("--inputs", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=0, help="run until this much time has passed instead")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per ssd-opt run")
    ap.add_argument("--crashes", default="fuzz-crashes")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    if not os.access(args.ssd_opt, os.X_OK):
        sys.exit("fuzz_ssd_opt: %s is not an executable" % args.ssd_opt)
    # Fuzz a private copy: relinking the build's ssd-opt during a long run
    # would otherwise fail the run on a half-written binary.
    private = tempfile.TemporaryDirectory(prefix="fuzz-ssd-opt-")
    copy = os.path.join(private.name, "ssd-opt")
    shutil.copy2(args.ssd_opt, copy)
    args.ssd_opt = copy

    seeds = SEEDS + [open(p).read() for p in args.seeds]
    # A seed the parser rejects would only fuzz the parser's error paths.
    for i, seed in enumerate(seeds):
        outcome, failure = run_one(args.ssd_opt, seed, args.timeout)
        if outcome != "lowered":
            print("fuzz_ssd_opt: seed %d is %s: %s" % (i, outcome, failure or "fix the seed"))
            return 1
    # The same layers as step ops and as ssd.fused, so that their verifiers
    # and lowerings are fuzzed directly too.
    for seed in list(seeds):
        for passes in (["--ssd-decompose"], ["--ssd-decompose", "--ssd-fuse"]):
            r = subprocess.run([args.ssd_opt, "-"] + passes, input=seed,
                               capture_output=True, text=True, timeout=args.timeout)
            if r.returncode != 0:
                print("fuzz_ssd_opt: %s failed on a seed:\n%s" % (" ".join(passes), r.stderr))
                return 1
            seeds.append(r.stdout)
    if args.check_seeds:
        print("fuzz_ssd_opt: %d seeds verify and lower" % len(seeds))
        return 0
    rng = random.Random(args.seed)
    import time
    start, done, failures = time.time(), 0, []
    outcomes = {"lowered": 0, "rejected": 0, "failed": 0}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        while True:
            if args.seconds:
                if time.time() - start > args.seconds:
                    break
            elif done >= args.inputs:
                break
            batch = [mutate(rng.choice(seeds), rng) for _ in range(args.jobs * 4)]
            for text, (outcome, result) in zip(
                    batch, pool.map(lambda t: run_one(args.ssd_opt, t, args.timeout), batch)):
                done += 1
                outcomes[outcome] += 1
                if result:
                    failures.append((text, result))
    os.makedirs(args.crashes, exist_ok=True) if failures else None
    for i, (text, (pipeline, why, out)) in enumerate(failures):
        path = os.path.join(args.crashes, "crash-%d.mlir" % i)
        with open(path, "w") as f:
            f.write("// %s: ssd-opt %s\n" % (why, " ".join(pipeline)) + text)
        print("FAIL: %s: %s %s" % (path, why, " ".join(pipeline)))
    print("fuzz_ssd_opt: %d inputs in %.0f s (seed %d): %d verified and run through "
          "every pipeline, %d rejected by the parser or a verifier, %d failures" % (
              done, time.time() - start, args.seed, outcomes["lowered"],
              outcomes["rejected"], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
