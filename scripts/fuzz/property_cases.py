#!/usr/bin/env python3
"""Random layer cases through ssd-run, checked against the reference.

    property_cases.py --bin DIR [--cases N] [--seed K] [--jobs J]
                      [--failures DIR] [--timeout S]
    property_cases.py --bin DIR --backend gpu --artifacts DIR --prepare ...
    property_cases.py --bin DIR --backend gpu --artifacts DIR
    property_cases.py --bin DIR --backend embedded [--cases N] ...

Each case is drawn from a fixed seed: sizes (ngroups dividing nheads), the
batch layout (packed rows, seq_idx cuts, or varlen cu_seqlens with empty
sequences allowed), every optional input (D per head or per channel, z,
dt_bias, softplus, dt_limit, initial_states), the chunk size (every power of
two from 1 to 4096: the ops take no other), the element type (f32, bf16,
f16), the state type and, on the CPU, the thread count. ssd-make-case
writes the case with the expected y and final states of the project's
independent reference recurrence;
ssd-run computes both and checks them against the golden bounds (1e-4 f32,
1.5e-2 bf16 or f16 states, 5e-3 f16). A case fails when ssd-run exits
non-zero, prints no verdict for an output, or exceeds the time limit.
Chunk sizes that are not powers of two must be refused with exit status 2.

With --backend embedded the cases run through the Python package's NumPy
entry point instead (run_embedded_case.py: one kernel per layer with the
batch and the length dynamic, through the C API, as an embedding caller
runs it; SSD_MLIR_LIB is --bin's ../lib unless set). Its draws are fitted
to what that entry point takes: bf16 inputs become f32, states stay f32,
and cu_seqlens (read there only for varlen states) is dropped.

Failing cases are copied to --failures with repro.sh, the commands that
rebuild and rerun them; each failure is printed with that command.

The GPU backend takes two steps, since the GPU machine has no MLIR:
--prepare (here) writes every case and its artifact (ssd-compile, sm_90a)
under --artifacts with plan.json; the same command without --prepare (on
the GPU machine, --bin holding the runtime-only ssd-run) runs them. GPU
draws keep to what the GPU lowerings take (chunk sizes 16 to 1024).
"""
import argparse
import concurrent.futures
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CPU_CHUNK_EXPONENTS = range(0, 13)  # 1 .. 4096
GPU_CHUNK_EXPONENTS = range(4, 11)  # 16 .. 1024
BAD_CHUNK_SIZES = ["3", "5", "24", "100", "4095", "8192"]


def draw_seqlen(rng):
    # Mostly short, sometimes a few chunks of the mid-sized chunk sizes.
    return rng.choice([rng.randint(1, 8), rng.randint(1, 64), rng.randint(65, 300)])


def draw_cu_seqlens(rng, seqlen):
    """Offsets of 1 to 4 sequences covering seqlen; empty ones allowed."""
    cuts = sorted(rng.randint(0, seqlen) for _ in range(rng.randint(0, 3)))
    return [0] + cuts + [seqlen]


def draw_case(rng, name, chunk_exponents, cpu=True):
    """One case: the ssd-make-case flags and the ssd-run flags."""
    q = 2 ** rng.choice(chunk_exponents)
    ngroups = rng.choice([1, 1, 2, 3])
    nheads = ngroups * rng.choice([1, 2, 3])
    varlen = rng.random() < 0.3
    batch = 1 if varlen else rng.randint(1, 3)
    # Large chunks cost Q^2 per head and row whatever the length: keep those
    # cases to one row and few heads so that each runs in about a second.
    if q >= 1024:
        batch, ngroups, nheads = 1, 1, rng.choice([1, 2])
    seqlen = draw_seqlen(rng)
    make = ["--name", name, "--seed", str(rng.randrange(2 ** 32)),
            "--batch", str(batch), "--seqlen", str(seqlen),
            "--nheads", str(nheads), "--ngroups", str(ngroups),
            "--headdim", str(rng.choice([1, 2, 3, 4, 8, 16])),
            "--dstate", str(rng.choice([1, 2, 4, 5, 8, 16]))]

    features = []
    d = rng.choice([None, "D", "Dhp"])
    if d:
        features.append(d)
    features += [f for f in ("z", "dt_bias", "softplus", "initial_states")
                 if rng.random() < 0.5]
    if features:
        make += ["--features", ",".join(features)]
    if rng.random() < 0.4:
        lo = rng.choice([0.0, rng.uniform(0.0, 0.05)])
        hi = rng.choice(["inf", repr(rng.uniform(max(lo, 0.05), 0.6))])
        make += ["--dt-limit", "%r,%s" % (lo, hi)]
    # A near 0 decays little; A > 0 grows the state (no clamp may hide it).
    a_range = rng.choice([None, None, None, "-0.05,-0.001", "0.01,0.05"])
    if a_range:
        make += ["--a-range", a_range]
    if varlen:
        make += ["--cu-seqlens", ",".join(map(str, draw_cu_seqlens(rng, seqlen)))]
    elif seqlen > 1 and rng.random() < 0.4:
        cuts = sorted(rng.sample(range(1, seqlen), min(seqlen - 1, rng.randint(1, 3))))
        make += ["--seq-idx-cuts", ",".join(map(str, cuts))]

    run = ["--chunk-size", str(q), "--dtype", rng.choice(["f32", "bf16", "f16"])]
    if rng.random() < 0.25:
        run += ["--state-dtype", "f16"]
    # The CPU path's chunk loops on several threads (MLIR's async runtime).
    if cpu and rng.random() < 0.2:
        run += ["--threads", str(rng.randint(2, 4))]
    return {"name": name, "make": make, "run": run}


def compile_flags(case):
    """The ssd-compile layer flags of a drawn case (for the GPU artifacts)."""
    make = dict(zip(case["make"][::2], case["make"][1::2]))
    run = dict(zip(case["run"][::2], case["run"][1::2]))
    features = make.get("--features", "").split(",") if "--features" in make else []
    if "--seq-idx-cuts" in make:
        features.append("seq_idx")
    if "--cu-seqlens" in make:
        features.append("varlen")
    flags = ["--nheads", make["--nheads"], "--headdim", make["--headdim"],
             "--dstate", make["--dstate"], "--ngroups", make["--ngroups"],
             "--chunk-size", run["--chunk-size"], "--dtype", run["--dtype"],
             "--state-dtype", run.get("--state-dtype", "f32")]
    if features:
        flags += ["--features", ",".join(features)]
    if "--dt-limit" in make:
        flags += ["--dt-limit", make["--dt-limit"]]
    return flags


def run_tool(cmd, timeout):
    """(exit status or 'timeout', combined output)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out


def verdict(status, output):
    """None when ssd-run passed with a verdict on both outputs, else why not."""
    if status == "timeout":
        return "time limit exceeded"
    if isinstance(status, int) and status < 0:
        return "ssd-run killed by signal %d (a crash or a sanitizer report)" % -status
    if status != 0:
        return "ssd-run exit status %s" % status
    for out in ("y", "final_states"):
        if not any(line.startswith(out + ": ") and line.endswith(" PASS")
                   for line in output.splitlines()):
            return "no PASS line for %s" % out
    return None


def make_case(args, case, case_dir):
    cmd = [os.path.join(args.bin, "ssd-make-case"), "-o", case_dir] + case["make"]
    status, output = run_tool(cmd, args.timeout)
    return cmd, (None if status == 0 else "ssd-make-case exit status %s: %s"
                 % (status, output.strip()))


def for_embedded(case):
    """The case fitted to the NumPy entry point (see the module's help)."""
    make, run = list(case["make"]), list(case["run"])
    if "--cu-seqlens" in make:
        i = make.index("--cu-seqlens")
        del make[i:i + 2]
    if "--state-dtype" in run:
        i = run.index("--state-dtype")
        del run[i:i + 2]
    run = ["f32" if flag == "bf16" else flag for flag in run]
    return dict(case, make=make, run=run)


def run_command(args, case, case_dir, artifact_dir=None):
    if args.backend == "embedded":
        return [sys.executable, os.path.join(HERE, "run_embedded_case.py"),
                "--case", case_dir] + case["run"]
    cmd = [os.path.join(args.bin, "ssd-run"), "--case", case_dir] + case["run"]
    if args.backend == "gpu":
        cmd += ["--backend", "gpu", "--artifact", artifact_dir]
    return cmd


def keep_failure(args, case, case_dir, commands, why, output):
    """Copies the case to --failures with repro.sh; returns the report."""
    kept = os.path.join(args.failures, case["name"])
    shutil.rmtree(kept, ignore_errors=True)
    os.makedirs(kept)
    if os.path.isdir(case_dir):
        shutil.copytree(case_dir, os.path.join(kept, "case"))
    script = "#!/bin/sh\n# %s\n%s\n" % (why, "\n".join(
        shlex.join(c) for c in commands))
    with open(os.path.join(kept, "repro.sh"), "w") as f:
        f.write(script)
    with open(os.path.join(kept, "output.txt"), "w") as f:
        f.write(output)
    return "FAIL %s: %s\n  kept in %s\n  rerun: %s\n%s" % (
        case["name"], why, kept, shlex.join(commands[-1]),
        "".join("  | " + l + "\n" for l in output.strip().splitlines()[-6:]))


def check_cpu_case(args, case, work):
    case_dir = os.path.join(work, case["name"])
    make_cmd, why = make_case(args, case, case_dir)
    if why:
        return keep_failure(args, case, case_dir, [make_cmd], why, "")
    cmd = run_command(args, case, case_dir)
    status, output = run_tool(cmd, args.timeout)
    why = verdict(status, output)
    if why:
        # The kept copy is what repro.sh runs.
        kept_case = os.path.join(args.failures, case["name"], "case")
        rerun = run_command(args, case, kept_case)
        return keep_failure(args, case, case_dir, [rerun], why, output)
    shutil.rmtree(case_dir, ignore_errors=True)
    return None


def check_bad_chunk_sizes(args, work):
    """ssd-run must refuse chunk sizes the ops do not take, with status 2."""
    case = {"name": "bad-chunk-sizes", "make": ["--seqlen", "8"], "run": []}
    case_dir = os.path.join(work, case["name"])
    make_cmd, why = make_case(args, case, case_dir)
    if why:
        return [keep_failure(args, case, case_dir, [make_cmd], why, "")]
    failures = []
    for q in BAD_CHUNK_SIZES:
        cmd = [os.path.join(args.bin, "ssd-run"), "--case", case_dir, "--chunk-size", q]
        status, output = run_tool(cmd, args.timeout)
        first = output.splitlines()[0] if output else ""
        if status != 2 or "--chunk-size" not in first or q not in first:
            name = "bad-chunk-size-" + q
            rerun = cmd[:2] + [os.path.join(args.failures, name, "case")] + cmd[3:]
            failures.append(keep_failure(
                args, dict(case, name=name), case_dir, [rerun],
                "chunk size %s: exit status %s, expected 2 with an error naming it"
                % (q, status), output))
    return failures


def draw_all(args):
    rng = random.Random(args.seed)
    exponents = GPU_CHUNK_EXPONENTS if args.backend == "gpu" else CPU_CHUNK_EXPONENTS
    cases = []
    for i in range(args.cases):
        # Every chunk size comes up within the first len(exponents) cases.
        chosen = [exponents[i % len(exponents)]]
        cases.append(draw_case(rng, "s%d-c%04d" % (args.seed, i), chosen,
                               cpu=args.backend != "gpu"))
    if args.backend == "embedded":
        cases = [for_embedded(c) for c in cases]
    return cases


def run_parallel(args, func, items):
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for report in pool.map(func, items):
            if report:
                print(report, flush=True)
                failures.append(report)
    return failures


def run_cpu(args):
    with tempfile.TemporaryDirectory(prefix="ssd-property-") as work:
        failures = (check_bad_chunk_sizes(args, work)
                    if args.backend == "cpu" else [])
        for report in failures:
            print(report, flush=True)
        cases = draw_all(args)
        failures += run_parallel(args, lambda c: check_cpu_case(args, c, work), cases)
    return len(cases), failures


def prepare_gpu(args):
    """Writes every case, its artifact and plan.json under --artifacts."""
    cases = draw_all(args)
    os.makedirs(args.artifacts, exist_ok=True)

    def prepare(case):
        base = os.path.join(args.artifacts, case["name"])
        make_cmd, why = make_case(args, case, os.path.join(base, "case"))
        if why:
            return keep_failure(args, case, base, [make_cmd], why, "")
        cmd = ([os.path.join(args.bin, "ssd-compile")] + compile_flags(case)
               + ["--target", "sm_90a", "--strategy", args.strategy,
                  "-o", os.path.join(base, "artifact")])
        status, output = run_tool(cmd, args.timeout)
        if status != 0:
            return keep_failure(args, case, os.path.join(base, "case"), [cmd],
                                "ssd-compile exit status %s" % status, output)
        return None

    failures = run_parallel(args, prepare, cases)
    with open(os.path.join(args.artifacts, "plan.json"), "w") as f:
        json.dump({"seed": args.seed, "strategy": args.strategy, "cases": cases}, f, indent=1)
    return len(cases), failures


def run_gpu(args):
    """Runs the prepared cases of --artifacts on the GPU."""
    with open(os.path.join(args.artifacts, "plan.json")) as f:
        plan = json.load(f)
    cases = plan["cases"]
    # The summary names the seed the cases were drawn with.
    args.seed = plan["seed"]

    def check(case):
        base = os.path.join(args.artifacts, case["name"])
        cmd = run_command(args, case, os.path.join(base, "case"),
                          os.path.join(base, "artifact"))
        status, output = run_tool(cmd, args.timeout)
        why = verdict(status, output)
        return keep_failure(args, case, os.path.join(base, "case"), [cmd], why,
                            output) if why else None

    return len(cases), run_parallel(args, check, cases)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True,
                    help="folder of ssd-make-case and ssd-run (and ssd-compile)")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per tool run")
    ap.add_argument("--failures", default="property-failures",
                    help="where failing cases are kept (emptied first)")
    ap.add_argument("--backend", choices=["cpu", "gpu", "embedded"],
                    default="cpu")
    ap.add_argument("--artifacts", help="gpu: folder of the cases and artifacts")
    ap.add_argument("--prepare", action="store_true",
                    help="gpu: write the cases and compile their artifacts")
    ap.add_argument("--strategy", choices=["fused", "unfused"], default="fused",
                    help="gpu --prepare: the kernels to compile")
    args = ap.parse_args()
    if args.cases < 0 or args.jobs < 1 or args.timeout <= 0:
        ap.error("--cases must be non-negative, --jobs and --timeout positive")
    if args.backend == "gpu" and not args.artifacts:
        ap.error("--backend gpu needs --artifacts DIR")
    if args.prepare and args.backend != "gpu":
        ap.error("--prepare is for --backend gpu")
    for tool in ["ssd-run"] + ([] if args.backend == "gpu" and not args.prepare
                               else ["ssd-make-case"]):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            ap.error("%s not found in %s" % (tool, args.bin))
    shutil.rmtree(args.failures, ignore_errors=True)
    if args.backend == "embedded":
        os.environ.setdefault("SSD_MLIR_LIB", os.path.join(
            os.path.dirname(os.path.abspath(args.bin)), "lib"))

    if args.backend in ("cpu", "embedded"):
        count, failures = run_cpu(args)
    elif args.prepare:
        count, failures = prepare_gpu(args)
    else:
        count, failures = run_gpu(args)
    print("%d random cases %s (seed %d, backend %s): %s" % (
        count, "prepared" if args.prepare else "checked", args.seed,
        args.backend, "%d failures, kept in %s" % (len(failures), args.failures)
        if failures else "no failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
