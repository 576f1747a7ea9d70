#!/usr/bin/env python3
"""Packed sequences stay apart: non-finite tokens of one sequence change no
other sequence's outputs.

Runs ssd-run twice on a varlen case: as it is, and with the first tokens of
sequence K poisoned (x infinite, B and C NaN). The tokens poisoned are the
ones a kernel reads past the end of sequence K - 1 when that sequence ends
inside a chunk. Every output outside sequence K (y's rows of the other
sequences, their final states) must be bitwise the same in both runs: a
kernel that multiplies those tokens by a zero weight instead of keeping
them out gives NaN there (0 x inf).

  run_sequence_isolation.py --ssd-run BIN --case DIR --poison-sequence K
      [--tokens N] [ssd-run flags: --backend gpu --artifact DIR ...]

Exit status: 0 the other sequences are unchanged, 1 some changed, 2 bad
arguments or case, 3 ssd-run failed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def fail(message, status=2):
    print(f"run_sequence_isolation: {message}", file=sys.stderr)
    sys.exit(status)


def run(ssd_run, case, out, flags):
    cmd = [ssd_run, "--case", case, "--out", out] + flags
    proc = subprocess.run(cmd, capture_output=True, text=True)
    # 1 is an output over its bound: only the unpoisoned case has bounds,
    # and its verdict is printed, not judged, here.
    if proc.returncode not in (0, 1):
        fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}", 3)
    return proc.stdout.strip()


def main():
    parser = argparse.ArgumentParser(add_help=True)
    parser.add_argument("--ssd-run", required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--poison-sequence", type=int, required=True)
    parser.add_argument("--tokens", type=int, default=64,
                        help="tokens poisoned from the sequence's first (default 64)")
    args, flags = parser.parse_known_args()

    with open(os.path.join(args.case, "case.json")) as f:
        meta = json.load(f)
    if "cu_seqlens" not in meta.get("inputs", []):
        fail(f"{args.case}: not a varlen case (no cu_seqlens input)")
    cu = np.load(os.path.join(args.case, "cu_seqlens.npy")).astype(np.int64)
    k = args.poison_sequence
    if not 0 <= k < len(cu) - 1:
        fail(f"--poison-sequence {k}: the case has {len(cu) - 1} sequences")
    first, end = int(cu[k]), int(cu[k + 1])
    last = min(first + args.tokens, end)
    if last <= first:
        fail(f"sequence {k} has no tokens to poison ({first} .. {end})")

    with tempfile.TemporaryDirectory() as tmp:
        poisoned = os.path.join(tmp, "poisoned")
        shutil.copytree(args.case, poisoned)
        # No expected outputs: the poisoned sequence has none that is finite.
        meta["outputs"] = []
        for name in ("y", "final_states"):
            path = os.path.join(poisoned, name + ".npy")
            if os.path.exists(path):
                os.remove(path)
        with open(os.path.join(poisoned, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)
        for name, value in (("x", np.inf), ("B", np.nan), ("C", np.nan)):
            path = os.path.join(poisoned, name + ".npy")
            a = np.load(path)
            a[:, first:last] = value
            np.save(path, a)

        clean_out, poisoned_out = os.path.join(tmp, "clean-out"), os.path.join(tmp, "poisoned-out")
        print("as it is:", run(args.ssd_run, args.case, clean_out, flags).replace("\n", "; "))
        run(args.ssd_run, poisoned, poisoned_out, flags + ["--nonfinite-inputs"])

        outside = np.ones(int(cu[-1]), dtype=bool)
        outside[first:end] = False
        others = [j for j in range(len(cu) - 1) if j != k]
        changed = 0
        for name, pick in (("y", lambda a: a[:, outside]), ("final_states", lambda a: a[others])):
            a = pick(np.load(os.path.join(clean_out, name + ".npy")))
            b = pick(np.load(os.path.join(poisoned_out, name + ".npy")))
            differ = int(np.count_nonzero(a.view(np.uint32) != b.view(np.uint32)))
            nonfinite = int(np.count_nonzero(~np.isfinite(b)))
            changed += differ
            print(f"{name} outside sequence {k}: {a.size} values, {differ} changed, "
                  f"{nonfinite} not finite")
        print(f"sequence {k}'s tokens {first} .. {last - 1} poisoned: "
              + ("the other sequences are unchanged" if changed == 0 else "FAIL"))
        return 0 if changed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
