#!/usr/bin/env python3
"""Summarises an ncu source-counter profile of one kernel, per SASS line.

On the GPU machine, one launch of the kernel under the profiler (about 30 s
of device time for the 2.7B layer at b2 16K), then its SASS lines as CSV:

    ncu --section SourceCounters --section WarpStateStats \\
        --kernel-name ssd_fused --launch-skip 1 --launch-count 1 -o REP \\
        ssd-bench --run ART:2:16384 --rounds 1 --warmup 1 --iters 1 --check-heads 0
    ncu --import REP.ncu-rep --page source --csv --print-source sass > LINES.csv

Here:

    scripts/profile-sass-lines.py LINES.csv [--region 0x400] [--top 25] [--json OUT]

prints the warp instructions executed and the warp-state samples; the stall
reasons' shares of the samples; each opcode's share of the instructions and
of the samples; the kernel's code in fixed address windows with their shares
and landmark instructions (HMMA, LDSM, MUFU, LDG, STG, BAR, SYNCS, UTMALDG,
MEMBAR), which place a window in the kernel's items; the lines with the most
samples and their main stall reason; and the global loads that repeat one
address operand (register and offset) at least --repeats times with the same
execution count: candidates for a value the compiler reloads because a store
in between may alias it (how the chunk scan's per-pair reload of D was
found, bench/NOTES-fused-gpu.md; the register may also have been redefined
in between, which the SASS around them shows).
"""
import argparse
import collections
import csv
import json
import re
import sys

LANDMARKS = ("HMMA", "LDSM", "MUFU", "LDG", "STG", "LDS", "STS", "BAR",
             "SYNCS", "UTMALDG", "MEMBAR", "ATOM", "SHFL")
SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def read_lines(path):
    """The kernel's name and its SASS lines: address offset, text, samples,
    instructions executed and the samples per stall reason."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3 or not rows[0] or rows[0][0] != "Kernel Name":
        raise ValueError(f"{path}: not an ncu source page "
                         "(expected 'Kernel Name' on the first line)")
    header = rows[1]
    for needed in ("Address", "Source", SAMPLES, EXECUTED):
        if needed not in header:
            raise ValueError(f"{path}: no column '{needed}' (profile with "
                             "--section SourceCounters, import with "
                             "--page source --print-source sass)")
    at = {name: i for i, name in enumerate(header)}
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    lines = []
    for row in rows[2:]:
        if len(row) < len(header):
            continue
        lines.append({
            "address": int(row[at["Address"]], 16),
            "text": row[at["Source"]].strip(),
            "samples": number(row[at[SAMPLES]]),
            "executed": number(row[at[EXECUTED]]),
            "stalls": {s[len("stall_"):]: number(row[at[s]]) for s in stalls},
        })
    if not lines:
        raise ValueError(f"{path}: no SASS lines")
    base = min(l["address"] for l in lines)
    for l in lines:
        l["offset"] = l["address"] - base
    return rows[0][1], lines


def opcode(text):
    """The opcode without its modifiers and predicate: 'LDG' of
    '@!P0 LDG.E.128 R4, ...'."""
    m = re.match(r"(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", text)
    return m.group(1) if m else "?"


def reloads(lines, repeats):
    """Global loads whose address operand (register and offset) occurs in
    at least `repeats` loads that each run as often as the others."""
    groups = collections.defaultdict(list)
    for l in lines:
        if opcode(l["text"]) != "LDG":
            continue
        m = re.search(r"\[[^\]]*\]\[[^\]]*\]", l["text"])
        if m:
            groups[(m.group(0), l["executed"])].append(l)
    found = []
    for (operand, executed), loads in groups.items():
        if len(loads) >= repeats and executed > 0:
            found.append({"operand": operand, "loads": len(loads),
                          "executed_each": executed,
                          "offsets": [hex(l["offset"]) for l in loads],
                          "samples": sum(l["samples"] for l in loads)})
    return sorted(found, key=lambda g: -g["loads"])


def summarise(lines, region, top, repeats):
    samples = sum(l["samples"] for l in lines) or 1.0
    executed = sum(l["executed"] for l in lines) or 1.0
    stalls = collections.Counter()
    ops_executed, ops_samples = collections.Counter(), collections.Counter()
    windows = collections.OrderedDict()
    for l in sorted(lines, key=lambda l: l["offset"]):
        stalls.update(l["stalls"])
        op = opcode(l["text"])
        ops_executed[op] += l["executed"]
        ops_samples[op] += l["samples"]
        w = windows.setdefault(l["offset"] // region * region,
                               {"samples": 0.0, "executed": 0.0,
                                "landmarks": collections.Counter()})
        w["samples"] += l["samples"]
        w["executed"] += l["executed"]
        if op in LANDMARKS:
            w["landmarks"][op] += 1

    def main_stall(l):
        return max(l["stalls"].items(), key=lambda kv: kv[1], default=("-", 0))[0]

    return {
        "instructions_executed": executed,
        "samples": samples,
        "stalls": {k: v / samples for k, v in stalls.most_common() if v},
        "opcodes": [{"opcode": k, "executed": v / executed,
                     "samples": ops_samples[k] / samples}
                    for k, v in ops_executed.most_common()],
        "regions": [{"offset": hex(o), "samples": w["samples"] / samples,
                     "executed": w["executed"] / executed,
                     "landmarks": dict(w["landmarks"])}
                    for o, w in windows.items()],
        "top_lines": [{"offset": hex(l["offset"]), "text": l["text"],
                       "samples": l["samples"] / samples,
                       "stall": main_stall(l)}
                      for l in sorted(lines, key=lambda l: -l["samples"])[:top]],
        "reloads": reloads(lines, repeats),
    }


def show(kernel, s, shown_share):
    pct = lambda v: f"{100 * v:5.1f}%"
    print(f"{kernel}: {s['instructions_executed']:.0f} warp instructions, "
          f"{s['samples']:.0f} samples")
    print("stall reasons: " + ", ".join(f"{k} {100 * v:.1f}%"
                                        for k, v in list(s["stalls"].items())[:8]))
    print("opcode       instructions  samples")
    for o in s["opcodes"][:16]:
        print(f"  {o['opcode']:10s} {pct(o['executed'])}      {pct(o['samples'])}")
    print("region     samples  instructions  landmarks")
    for r in s["regions"]:
        if r["samples"] < shown_share and r["executed"] < shown_share:
            continue
        marks = " ".join(f"{k}{v}" for k, v in r["landmarks"].items())
        print(f"  {r['offset']:>8s} {pct(r['samples'])}  {pct(r['executed'])}       {marks}")
    print("lines with the most samples")
    for l in s["top_lines"]:
        print(f"  {l['offset']:>8s} {pct(l['samples'])} {l['stall']:14s} {l['text'][:72]}")
    if s["reloads"]:
        print("global loads repeated from one address operand")
        for g in s["reloads"]:
            print(f"  {g['operand']}: {g['loads']} loads, {g['executed_each']:.0f} "
                  f"executions each, at {', '.join(g['offsets'][:6])}"
                  + (" ..." if len(g["offsets"]) > 6 else ""))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lines", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--region", type=lambda t: int(t, 0), default=0x400,
                    help="bytes of code per region (default 0x400)")
    ap.add_argument("--top", type=int, default=25, help="lines listed (default 25)")
    ap.add_argument("--repeats", type=int, default=4,
                    help="loads from one operand that count as reloads (default 4)")
    ap.add_argument("--json", help="also write the summary here")
    args = ap.parse_args(argv)
    if args.region <= 0 or args.top < 0 or args.repeats < 2:
        ap.error("--region must be positive, --top at least 0, --repeats at least 2")
    try:
        kernel, lines = read_lines(args.lines)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    s = summarise(lines, args.region, args.top, args.repeats)
    show(kernel, s, shown_share=0.004)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernel": kernel, **s}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
