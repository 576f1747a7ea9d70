#!/usr/bin/env python3
"""Summarises the fused kernel's chain-item phase clocks.

An artifact built with `ssd-compile --profile` records, for every chain item,
thread 0's clock at the item's phase boundaries (the `chain_profile`
workspace, lib/Conversion/SSDToGPU/Fused/Profile.h); `ssd-bench --profile DIR
--json FILE` writes them out and names the file in each row. This prints, for
each such row, the mean, median and 90th percentile of every phase, the
item's length and the gap from an item's end to the start of the next item of
the same block (the ticket hand-off), how long after thread 0 the block's
last warp (the most of the causal product) ends the item, and writes them as
JSON.

    scripts/profile-chain-items.py BENCH_JSON [--clock-ghz 1.98] [--json OUT]
"""
import argparse
import json
import sys

import numpy as np

from profile_files import locate

# The phase boundaries, in ChainPhase order (Profile.h).
PHASES = [
    "counters awaited", "staged", "state product", "turn acquired", "folded",
    "released", "scan ready", "scan products", "done",
]
FIELDS = 4 + len(PHASES)  # block, SM, start, the phases' ends, the last warp's end


def summarise(records, ms, clock_ghz):
    """records: int64 [..., FIELDS] of the chain items that ran."""
    r = records.reshape(-1, FIELDS)  # every (row, chunk, head, p-block)
    block, start, ends, last_warp = r[:, 0], r[:, 2], r[:, 3:-1], r[:, -1]
    phases = np.diff(np.concatenate([np.zeros((len(r), 1), np.int64), ends], 1), axis=1)
    # The item ends for its block when its last warp does.
    length = np.maximum(ends[:, -1], last_warp)
    gaps = []
    for b in np.unique(block):
        mine = block == b
        order = np.argsort(start[mine])
        s, e = start[mine][order], (start[mine] + length[mine])[order]
        gaps.extend(s[1:] - e[:-1])
    gaps = np.array(gaps if gaps else [0])
    us = lambda cycles: float(cycles) / clock_ghz / 1e3

    def stats(v):
        return {"mean": us(v.mean()), "median": us(np.median(v)), "p90": us(np.percentile(v, 90))}

    return {
        "kernel_ms": ms, "items": int(len(r)), "blocks": int(len(np.unique(block))),
        "clock_ghz": clock_ghz,
        "phases_us": {name: stats(phases[:, i]) for i, name in enumerate(PHASES)},
        "item_us": stats(length), "gap_us": stats(gaps),
        "last_warp_after_thread0_us": stats(last_warp - ends[:, -1]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench_json", help="ssd-bench --json output of --profile runs")
    ap.add_argument("--clock-ghz", type=float, default=1.98,
                    help="SM clock to convert cycles at (H200 under load: 1.98)")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args()
    rows = json.load(open(args.bench_json))["rows"]
    out = []
    for row in rows:
        path = row.get("chain_profile")
        if not path:
            continue
        s = summarise(np.load(locate(path, args.bench_json)), row["ms"], args.clock_ghz)
        s.update({k: row[k] for k in ("artifact", "batch", "seqlen", "state_dtype")})
        out.append(s)
        print(f"== {row['artifact']} b={row['batch']} L={row['seqlen']}: {s['items']} chain items "
              f"on {s['blocks']} blocks, {row['ms']:.4f} ms; item {s['item_us']['mean']:.2f} us, "
              f"gap to the block's next item {s['gap_us']['mean']:.2f} us (means, us at "
              f"{args.clock_ghz} GHz); the last warp ends "
              f"{s['last_warp_after_thread0_us']['mean']:.2f} us after thread 0")
        for name in PHASES:
            p = s["phases_us"][name]
            print(f"   {name:18s} mean {p['mean']:6.2f}  median {p['median']:6.2f}  p90 {p['p90']:6.2f}")
    if not out:
        sys.exit(f"error: no row of {args.bench_json} names a chain_profile "
                 "(compile with ssd-compile --profile, run ssd-bench --profile DIR)")
    if args.json:
        json.dump({"rows": out}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
