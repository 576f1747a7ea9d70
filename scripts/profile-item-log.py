#!/usr/bin/env python3
"""Places the fused kernel's items of every kind on one time line.

An artifact built with `ssd-compile --profile` writes, per ticket, the item's
kind, its SM and thread 0's %globaltimer at the item's start and end (the
`item_log` workspace, lib/Conversion/SSDToGPU/Fused/Profile.h); `ssd-bench
--profile DIR --json FILE` writes it out and names the file in each row.
This prints, for each such row, when the items of each kind start and end
after the kernel's first item starts, how long they take, and for the chain
items the same per group of consecutive tickets (one chain step of a batch
row: heads x p-blocks items, --step), and writes them as JSON.

    scripts/profile-item-log.py BENCH_JSON [--step 80] [--json OUT]
"""
import argparse
import json
import sys

import numpy as np

from profile_files import locate

# The item kinds in ticket order (FusedKernel.cpp's dispatch).
KINDS = ["init", "cumsum", "bmm", "chain", "final"]
FIELDS = 4  # kind, SM, start ns, end ns


def stats(v):
    v = np.asarray(v, np.float64) / 1e3  # ns -> us
    return {"min": float(v.min()), "median": float(np.median(v)),
            "mean": float(v.mean()), "p90": float(np.percentile(v, 90)),
            "max": float(v.max())}


def summarise(log, step):
    """log: int64 [tickets, FIELDS], one record per ticket that ran."""
    log = log.reshape(-1, FIELDS)
    # The workspace is zeroed per launch: records no item wrote (tickets of
    # a kind this kernel does not run) stay all zero.
    log = log[np.any(log != 0, axis=1)]
    if len(log) == 0:
        sys.exit("error: the item log is empty (no item wrote a record)")
    kind, sm, start, end = (log[:, i] for i in range(FIELDS))
    if np.any((kind < 0) | (kind >= len(KINDS))) or np.any(end < start):
        sys.exit("error: the item log holds a record no item could write "
                 "(a kind outside 0-4 or an end before its start)")
    t0 = start.min()
    out = {"items": int(len(log)), "sms": int(len(np.unique(sm))),
           "span_us": float(end.max() - t0) / 1e3, "kinds": {}}
    for k, name in enumerate(KINDS):
        mine = kind == k
        if not mine.any():
            continue
        out["kinds"][name] = {
            "items": int(mine.sum()),
            "start_us": stats(start[mine] - t0),
            "end_us": stats(end[mine] - t0),
            "length_us": stats(end[mine] - start[mine]),
        }
    chain = np.flatnonzero(kind == KINDS.index("chain"))
    steps = []
    for first in range(0, len(chain), step):
        t = chain[first:first + step]
        steps.append({"start_us": stats(start[t] - t0),
                      "end_us": stats(end[t] - t0),
                      "length_us": stats(end[t] - start[t])})
    out["chain_steps"] = steps
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench_json", help="ssd-bench --json output of --profile runs")
    ap.add_argument("--step", type=int, default=80,
                    help="chain items per chain step of a batch row "
                         "(heads x p-blocks; 80 for the 2.7B layer)")
    ap.add_argument("--steps-shown", type=int, default=8,
                    help="chain steps printed (all go to --json)")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args()
    if args.step < 1:
        sys.exit(f"error: --step must be at least 1, got {args.step}")
    rows = json.load(open(args.bench_json))["rows"]
    out = []
    for row in rows:
        path = row.get("item_log")
        if not path:
            continue
        s = summarise(np.load(locate(path, args.bench_json)), args.step)
        s.update({k: row[k] for k in ("artifact", "batch", "seqlen", "state_dtype", "ms")})
        out.append(s)
        print(f"== {row['artifact']} b={row['batch']} L={row['seqlen']}: {s['items']} items "
              f"on {s['sms']} SMs; first start to last end {s['span_us']:.1f} us "
              f"({row['ms'] * 1e3:.1f} us a call); us after the first start:")
        for name, k in s["kinds"].items():
            print(f"   {name:7s} x{k['items']:6d}  starts {k['start_us']['min']:8.2f} .."
                  f" {k['start_us']['max']:8.2f}  ends {k['end_us']['min']:8.2f} .."
                  f" {k['end_us']['max']:8.2f}  length median {k['length_us']['median']:6.2f}"
                  f" p90 {k['length_us']['p90']:6.2f} max {k['length_us']['max']:6.2f}")
        for i, st in enumerate(s["chain_steps"][:args.steps_shown]):
            print(f"   chain step {i:3d}: starts {st['start_us']['min']:7.2f} .. "
                  f"{st['start_us']['max']:7.2f}, ends {st['end_us']['min']:7.2f} .. "
                  f"{st['end_us']['max']:7.2f}, length median {st['length_us']['median']:6.2f}")
    if not out:
        sys.exit(f"error: no row of {args.bench_json} names an item_log "
                 "(compile with ssd-compile --profile, run ssd-bench --profile DIR)")
    if args.json:
        json.dump({"rows": out}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
