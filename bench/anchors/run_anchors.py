#!/usr/bin/env python3
"""The anchors and the project's kernels, timed in one device call.

Runs on the GPU machine (torch, triton, jax; no network) with the folder that
bench/anchors/fetch.sh fills carried along and its wheels installed (see
bench/anchors/README.md, or bench/anchors/run.sh, which does both steps):

    python3 bench/anchors/run_anchors.py [--artifacts device-artifacts] [--out DIR]

The layer (--layer): Mamba-2 2.7B (h=80, p=64, n=128, g=1) by default, or a
Granite 4.0 H layer of TARGETS.md's table; bf16 x/B/C, fp32 dt/A/D/dt_bias,
dt_softplus with dt_bias, D per head, fp32 state, forward only; cases b1 L=2K,
16K, 128K and b8 L=16K. Strategies (each in its own try, a failure is a row
with "error"):

  mamba_ssm-triton        mamba_ssm.ops.triton.ssd_combined.mamba_chunk_scan_combined
                          (the five Triton kernels), chunk 64/128/256
  fla-chunk_simple_gla    fla.ops.simple_gla.chunk_simple_gla (q=C, k=B repeated
                          per head, v=dt*x in bf16, g=dt*A) plus the softplus,
                          v, g and D*x around it: the whole op; chunk 64 (its
                          default; --fla-chunks for more, ~50 s of autotuning each)
  jax-linear-attention    jla.layers.ssm.mamba2_ssd on the Mosaic GPU kernels
                          (impl="mosaic_gpu"; its chunk is fixed at 64)
  jax-linear-attention-vscale
                          jla.ops.mosaic_gpu.scalar_gate.run with v_scale=dt: the
                          same kernel forming dt*x inside (jla's inference path)
  default / fused / unfused
                          this project's artifacts (<layer prefix>-<strategy>-q<Q>-bf16,
                          mamba2-... for the default layer): default is the
                          compiler's own choices (the warp-specialised kernels),
                          fused the persistent kernel, unfused the five kernels
                          through bench/ssd-bench, built here (runtime only)

Time: device time per call. torch anchors: one CUDA graph per input set,
CUDA events around each replay, median of --iters after --warmup (input sets
rotated until 256 MB, as ssd-bench does, so that no set stays in L2; the
eager calls before capture do the Triton autotuning, at the first case's
shape, which later cases reuse as the libraries do: their keys hold no
sequence length). JAX anchors: JAX has no events; the jitted call is
dispatched --iters times without waiting (the GPU runs them back to back
on one stream), then block_until_ready; wall time / iters, median of 5 such
batches. The torch anchors report the same measure of their graphs as
ms_pipelined, to compare (it matched their event time within 1-3% on the H200).
ssd-bench: one CUDA graph replay per call (its default, --timing graph; each
row's "timing" says graph or direct), CUDA events, median (its own inputs,
same distributions).

Correctness: y and the final states of input set 0 against a float64 chunked
reference on the GPU (reference_f64), all heads where b*L <= 16K, else
--check-heads heads spread over the heads (every batch row); max_rel_err =
max(|out - ref|) / max(|ref|) per output, the larger of y's and the final
states' (as ssd-bench and the golden cases define it).

Writes one JSON (DESIGN.md's results format) to --json, or
<out>/<date>-<commit>-anchors.json (-<layer prefix>-anchors.json for a layer other
than the default), and prints a table last.
"""
import argparse
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import traceback

from mamba_shim import mamba_chunk_scan_combined_from

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The layers of docs TARGETS.md's "shapes that matter": (nheads, headdim,
# dstate, ngroups) and the prefix of the project's artifacts of that layer
# (scripts/device/build-artifacts.sh). --layer picks one per run.
LAYERS = {
    "mamba2-2.7b": ((80, 64, 128, 1), "mamba2"),
    "granite-4.0-h-small": ((128, 64, 128, 1), "granite-h-small"),
    "granite-4.0-h-tiny": ((48, 64, 128, 1), "granite-h-tiny"),
    "granite-4.0-h-350m": ((48, 32, 128, 1), "granite-h-350m"),
}
LAYER = "mamba2-2.7b"
(NHEADS, HEADDIM, DSTATE, NGROUPS), ARTIFACT_PREFIX = LAYERS[LAYER]
CASES = {"b1-2k": (1, 2048), "b1-16k": (1, 16384), "b1-128k": (1, 131072), "b8-16k": (8, 16384)}
ANCHORS = ("mamba_ssm", "fla", "jla", "jla-vscale")
STRATEGY = {"mamba_ssm": "mamba_ssm-triton", "fla": "fla-chunk_simple_gla",
            "jla": "jax-linear-attention", "jla-vscale": "jax-linear-attention-vscale"}
HOW = {
    "mamba_ssm": "mamba_chunk_scan_combined(D, dt_bias, dt_softplus, return_final_states): 5 Triton kernels; "
                 "state carried in fp32, the per-chunk states handed to chunk_scan stored in bf16",
    "fla": "softplus(dt + dt_bias), v = bf16(dt x), g = dt A, B and C repeated to 80 heads, "
           "chunk_simple_gla(scale=1, output_final_state), + D x; state carried in fp32, per-chunk states "
           "stored in bf16",
    "jla": "softplus(dt + dt_bias) + jla.layers.ssm.mamba2_ssd(d=D, impl='mosaic_gpu', output_final_state): "
           "v = bf16(dt x) in XLA, grouped B/C, Mosaic GPU (TMA + wgmma) fused state pass and output; fp32 state",
    "jla-vscale": "softplus(dt + dt_bias) + jla.ops.mosaic_gpu.scalar_gate.run(v_scale=dt, output_final_state): "
                  "dt x formed in the kernel, + D x in XLA; fp32 state",
}
PROJECT = ("default", "fused", "unfused")
ROTATE_BYTES = 256e6  # as ssd-bench: rotate input sets until well beyond L2
MAX_SETS = 8
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


# --- what ssd-bench computes (bench/Problem.cpp) ---------------------------

def min_bytes(batch, seqlen):
    """minimumBytes: per token x and y (bf16), dt (f32), B and C (bf16)."""
    per_token = 2 * NHEADS * HEADDIM * 2 + NHEADS * 4 + 2 * NGROUPS * DSTATE * 2
    return float(per_token * batch * seqlen)


def chunked_flops(batch, seqlen, q):
    """chunkedFlops: C B^T per group; (CB o decay) x, B^T (x o decay), C s per head."""
    chunks = math.ceil(seqlen / q) * batch
    per_chunk = NGROUPS * 2 * q * q * DSTATE + NHEADS * (2 * q * q * HEADDIM + 4 * q * DSTATE * HEADDIM)
    return float(chunks * per_chunk)


# --- inputs and the float64 reference --------------------------------------

class Inputs:
    """One input set: x, B, C bf16; dt, A, D, dt_bias f32 (ssd-bench's ranges)."""

    def __init__(self, torch, batch, seqlen, seed):
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)

        def uniform(shape, lo, hi, dtype=torch.float32):
            t = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32)
            return (t * (hi - lo) + lo).to(dtype)

        h, p, n, g = NHEADS, HEADDIM, DSTATE, NGROUPS
        self.x = uniform((batch, seqlen, h, p), -1, 1, torch.bfloat16)
        self.dt = uniform((batch, seqlen, h), -4, -1)  # softplus(dt + dt_bias) ~ 0.01-0.4
        self.A = uniform((h,), -4, -0.5)
        self.B = uniform((batch, seqlen, g, n), -1, 1, torch.bfloat16)
        self.C = uniform((batch, seqlen, g, n), -1, 1, torch.bfloat16)
        self.D = uniform((h,), 0.5, 1.5)
        self.dt_bias = uniform((h,), -0.5, 0.5)


def reference_f64(torch, s, heads, q=128, block=8):
    """y (b, L, len(heads), p) and final states (b, len(heads), p, n) in float64.

    Chunked SSD written out: per chunk of q tokens the intra-chunk product
    (C_i . B_j) exp(cs_i - cs_j) dt_j x_j for j <= i, the chunk's own state
    sum_j exp(cs_last - cs_j) dt_j x_j B_j^T, a sequential pass over the
    chunks for the incoming state, C_i exp(cs_i) S_in, and D x. Padded tokens
    have dt = 0 and x = B = C = 0, so they change nothing. Heads in blocks of
    `block` to bound memory.
    """
    f64 = torch.float64
    b, L = s.x.shape[:2]
    pad = (-L) % q
    c = (L + pad) // q

    def padded(t):
        if pad == 0:
            return t
        return torch.cat([t, t.new_zeros((t.shape[0], pad) + tuple(t.shape[2:]))], 1)

    Bc = padded(s.B[:, :, 0].to(f64)).reshape(b, c, q, DSTATE)
    Cc = padded(s.C[:, :, 0].to(f64)).reshape(b, c, q, DSTATE)
    CB = torch.einsum("bcin,bcjn->bcij", Cc, Bc)
    causal = torch.ones(q, q, dtype=torch.bool, device="cuda").tril()[None, None, :, :, None]
    ys, finals = [], []
    for start in range(0, len(heads), block):
        hs = torch.tensor(heads[start:start + block], device="cuda")
        nh = len(hs)
        x = padded(s.x.index_select(2, hs).to(f64)).reshape(b, c, q, nh, HEADDIM)
        dt = torch.nn.functional.softplus(s.dt.index_select(2, hs).to(f64) + s.dt_bias[hs].to(f64))
        dt = padded(dt).reshape(b, c, q, nh)
        A = s.A[hs].to(f64)
        D = s.D[hs].to(f64)
        cs = torch.cumsum(dt * A, dim=2)  # (b, c, q, h)
        diff = cs[:, :, :, None, :] - cs[:, :, None, :, :]  # (b, c, i, j, h)
        decay = torch.exp(torch.where(causal, diff, torch.full_like(diff, -math.inf)))
        w = CB[..., None] * decay * dt[:, :, None, :, :]
        del diff, decay
        y = torch.einsum("bcijh,bcjhp->bcihp", w, x)
        del w
        xw = (torch.exp(cs[:, :, -1:, :] - cs) * dt)[..., None] * x  # (b, c, j, h, p)
        own = torch.einsum("bcjhp,bcjn->bchpn", xw, Bc)  # (b, c, h, p, n)
        del xw
        state = torch.zeros(b, nh, HEADDIM, DSTATE, dtype=f64, device="cuda")
        incoming = torch.empty_like(own)
        chunk_decay = torch.exp(cs[:, :, -1, :])  # (b, c, h)
        for k in range(c):
            incoming[:, k] = state
            state = chunk_decay[:, k, :, None, None] * state + own[:, k]
        del own
        y += torch.einsum("bcin,bchpn->bcihp", Cc, incoming) * torch.exp(cs)[..., None]
        del incoming
        y += D[:, None] * x
        ys.append(y.reshape(b, c * q, nh, HEADDIM)[:, :L])
        finals.append(state)
    return torch.cat(ys, 2), torch.cat(finals, 1)


def naive_f64(torch, s, heads):
    """The token-by-token recurrence (self test of reference_f64)."""
    f64 = torch.float64
    hs = torch.tensor(heads, device="cuda")
    x = s.x.index_select(2, hs).to(f64)
    dt = torch.nn.functional.softplus(s.dt.index_select(2, hs).to(f64) + s.dt_bias[hs].to(f64))
    A, D = s.A[hs].to(f64), s.D[hs].to(f64)
    B, C = s.B[:, :, 0].to(f64), s.C[:, :, 0].to(f64)
    b, L = x.shape[:2]
    state = torch.zeros(b, len(heads), HEADDIM, DSTATE, dtype=f64, device="cuda")
    ys = []
    for t in range(L):
        state = (torch.exp(A * dt[:, t])[:, :, None, None] * state
                 + (dt[:, t, :, None] * x[:, t])[..., None] * B[:, t, None, None, :])
        ys.append(torch.einsum("bhpn,bn->bhp", state, C[:, t]) + D[:, None] * x[:, t])
    return torch.stack(ys, 1), state


def rel_err(torch, out, ref):
    """max|out - ref| / max|ref| (float64)."""
    out = out.to(torch.float64)
    return float((out - ref).abs().max() / ref.abs().max())


def check_heads(batch, seqlen, k):
    if batch * seqlen <= 16384:
        return list(range(NHEADS))
    k = max(1, min(k, NHEADS))
    return sorted({i * (NHEADS - 1) // max(1, k - 1) for i in range(k)})


# --- the anchors -----------------------------------------------------------

def torch_anchor(torch, name, q, cache):
    """fn(set) -> (y, final states (b, h, p, n)) for a torch anchor."""
    F = torch.nn.functional
    if name == "mamba_ssm":
        combined = mamba_chunk_scan_combined_from(cache)

        def run(s):
            return combined(s.x, s.dt, s.A, s.B, s.C, q, D=s.D, dt_bias=s.dt_bias, dt_softplus=True,
                            return_final_states=True)
        return run
    if name == "fla":
        from fla.ops.simple_gla import chunk_simple_gla

        def run(s):
            b, L = s.x.shape[:2]
            dt = F.softplus(s.dt + s.dt_bias)
            v = (s.x.float() * dt[..., None]).to(s.x.dtype)
            qh = s.C.expand(b, L, NHEADS, DSTATE)
            kh = s.B.expand(b, L, NHEADS, DSTATE)
            o, ht = chunk_simple_gla(qh, kh, v, g=dt * s.A, scale=1.0, output_final_state=True, chunk_size=q)
            y = (o.float() + s.D[:, None] * s.x.float()).to(s.x.dtype)
            return y, ht.transpose(-1, -2)  # fla's state is (b, h, K=n, V=p)
        return run
    raise ValueError(name)


def time_torch(torch, fn, sets, warmup, iters):
    """Median device ms of one CUDA graph replay per call (graphs of the
    rotated sets), the pipelined wall ms, and set 0's outputs after a replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # autotuning and first compiles, before capture
        for i in range(max(3, len(sets))):
            fn(sets[i % len(sets)])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graphs, outs, pool = [], [], None
    for s in sets:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            outs.append(fn(s))
        pool = g.pool()
        graphs.append(g)
    for i in range(warmup):
        graphs[i % len(graphs)].replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        graphs[i % len(graphs)].replay()
        ends[i].record()
    torch.cuda.synchronize()
    ms = statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends))
    walls = []
    for _ in range(5):
        t = time.perf_counter()
        for i in range(iters):
            graphs[i % len(graphs)].replay()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t) * 1e3 / iters)
    graphs[0].replay()
    torch.cuda.synchronize()
    return ms, statistics.median(walls), outs[0], graphs


def jax_modules():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # share the GPU with torch
    import jax
    import jax.numpy as jnp
    return jax, jnp


def to_jax(torch, jax, t):
    try:
        return jax.dlpack.from_dlpack(t)
    except Exception:  # through the host (bf16 as its bits)
        import jax.numpy as jnp
        if t.dtype == torch.bfloat16:
            bits = jnp.asarray(t.view(torch.int16).cpu().numpy())
            return jax.lax.bitcast_convert_type(bits, jnp.bfloat16)
        return jnp.asarray(t.cpu().numpy())


def to_torch(torch, jax, a):
    """A JAX array as a float64 torch tensor on the GPU."""
    import numpy as np
    return torch.from_numpy(np.array(jax.device_get(a.astype("float32")))).to("cuda", torch.float64)


def jax_anchor(jax, jnp, name):
    """A jitted fn(x, dt, A, B, C, D, dt_bias) -> (y, state (b, h, n, p))."""
    if name == "jla":
        from jla.layers.ssm import mamba2_ssd

        def op(x, dt, A, B, C, D, dt_bias):
            dtp = jax.nn.softplus(dt + dt_bias)
            return mamba2_ssd(x, dtp, A, B, C, d=D, output_final_state=True, impl="mosaic_gpu", chunk_size=64)
        return jax.jit(op)
    if name == "jla-vscale":
        from jla.ops.mosaic_gpu import scalar_gate

        def op(x, dt, A, B, C, D, dt_bias):
            dtp = jax.nn.softplus(dt + dt_bias)
            g = dtp * A
            reason = scalar_gate.unsupported_reason(C, B, x, (g,), dict(scale=1.0, output_final_state=True),
                                                    delta=False)
            if reason is not None:
                raise ValueError(f"scalar_gate: {reason}")
            y, state = scalar_gate.run(C, B, x, g, None, delta=False, scale=1.0, initial_state=None,
                                       output_final_state=True, v_scale=dtp)
            y = (y.astype(jnp.float32) + D[:, None] * x.astype(jnp.float32)).astype(x.dtype)
            return y, state
        return jax.jit(op)
    raise ValueError(name)


def time_jax(jax, fn, sets, warmup, iters):
    out = fn(*sets[0])
    jax.block_until_ready(out)
    for i in range(warmup):
        out = fn(*sets[i % len(sets)])
    jax.block_until_ready(out)
    walls = []
    for _ in range(5):
        t = time.perf_counter()
        for i in range(iters):
            out = fn(*sets[i % len(sets)])
        jax.block_until_ready(out)
        walls.append((time.perf_counter() - t) * 1e3 / iters)
    return statistics.median(walls), fn(*sets[0])


# --- the project's kernels (ssd-bench) -------------------------------------

class Builder(threading.Thread):
    """Builds bench/ssd-bench in the runtime-only configuration, in the background."""

    def __init__(self, build_dir):
        super().__init__(daemon=True)
        self.build_dir = build_dir
        self.binary = os.path.join(build_dir, "bin", "ssd-bench")
        self.error = None

    def run(self):
        os.makedirs(self.build_dir, exist_ok=True)
        logpath = os.path.join(self.build_dir, "anchors-build.log")
        gen = ["-G", "Ninja"] if subprocess.run(["sh", "-c", "command -v ninja"], capture_output=True).returncode == 0 else []
        steps = [["cmake", "-S", ROOT, "-B", self.build_dir, *gen, "-DSSD_BUILD_COMPILER=OFF",
                  "-DSSD_BUILD_TESTS=OFF", "-DSSD_BUILD_PYTHON=OFF", "-DCMAKE_BUILD_TYPE=Release"],
                 ["cmake", "--build", self.build_dir, "--target", "ssd-bench", "-j", str(max(2, (os.cpu_count() or 4) // 2))]]
        with open(logpath, "w") as logf:
            for cmd in steps:
                r = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT)
                if r.returncode != 0:
                    self.error = f"{' '.join(cmd[:2])} failed (exit {r.returncode}); log {logpath}"
                    return
        if not os.path.exists(self.binary):
            self.error = f"no {self.binary} after the build"


def project_runs(artifacts, cases, variants=PROJECT):
    runs = []
    for strategy in variants:
        for q in (64, 128, 256):
            art = os.path.join(artifacts, f"{ARTIFACT_PREFIX}-{strategy}-q{q}-bf16")
            if os.path.exists(os.path.join(art, "manifest.json")):
                runs += [(strategy, q, art, CASES[c]) for c in cases]
    return runs


def run_ssd_bench(binary, runs, args, commit):
    out = os.path.join("/tmp", f"ssd-bench-anchors-{os.getpid()}.json")
    cmd = [binary, "--warmup", str(args.warmup), "--iters", str(args.iters), "--check-heads",
           str(args.bench_check_heads), "--check-tokens", str(args.bench_check_tokens), "--what", "anchors",
           "--commit", commit, "--json", out]
    for _, _, art, (b, L) in runs:
        cmd += ["--run", f"{art}:{b}:{L}"]
    log("ssd-bench: " + " ".join(cmd[:12]) + f" ... ({len(runs)} runs)")
    # ssd-bench's table goes straight to the log; it rewrites its JSON after
    # every run, so a run stopped by the time limit keeps what it measured.
    try:
        r = subprocess.run(cmd, stdout=None, stderr=subprocess.PIPE, text=True,
                           timeout=args.bench_timeout)
    except subprocess.TimeoutExpired as exc:
        r = subprocess.CompletedProcess(cmd, 124, None, (exc.stderr or b"").decode()
                                        if isinstance(exc.stderr, bytes) else (exc.stderr or ""))
        r.stderr += f"\nssd-bench: error: stopped after {args.bench_timeout} s (--bench-timeout)"
    result = json.load(open(out)) if os.path.exists(out) else {}
    rows = result.get("rows", [])
    which = {art: (strategy, q) for strategy, q, art, _ in runs}
    for row in rows:
        row["source"] = "ssd-bench (this call)"
        # ssd-bench's own "timing" (graph or direct) stays in the row.
        row.setdefault("timing", "direct")
        # ssd-bench names the manifest's strategy; the variant (fused-f16state,
        # a fast mode, ...) is what the table must tell apart.
        # (ssd-bench writes the artifact folder's name, not its path.)
        named = {os.path.basename(art): v for art, v in which.items()}
        if row.get("artifact") in named:
            row["strategy"] = named[row["artifact"]][0]
    # A run that failed: "ssd-bench: error: ART b=B L=L: message" on stderr.
    failures = []
    for line in r.stderr.splitlines():
        m = re.match(r"ssd-bench: error: (.*) b=(\d+) L=(\d+): (.*)", line)
        if m and m.group(1) in which:
            strategy, q = which[m.group(1)]
            row = row_base(strategy, int(m.group(2)), int(m.group(3)), q)
            row.update(ms=None, max_rel_err=None, error=m.group(4), source="ssd-bench (this call)")
            rows.append(row)
            failures.append(f"{strategy} b={m.group(2)} L={m.group(3)} Q={q}: {m.group(4)}")
        elif "error" in line:
            failures.append(line)
    return rows, failures, r.returncode, result.get("gpu")


# --- driver ----------------------------------------------------------------

def git_commit(artifacts):
    try:
        c = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True, check=True).stdout.strip()
        if c:
            return c
    except Exception:
        pass
    try:
        return open(os.path.join(artifacts, "manifest.txt")).readline().split()[1].replace("+", "-")
    except Exception:
        return "unknown"


def row_base(strategy, batch, seqlen, q, how=None):
    return {"strategy": strategy, "batch": batch, "seqlen": seqlen, "nheads": NHEADS, "headdim": HEADDIM,
            "dstate": DSTATE, "ngroups": NGROUPS, "chunk_size": q, "dtype": "bf16", "state_dtype": "f32",
            **({"how": how} if how else {})}


def finish_row(row, ms, batch, seqlen, q):
    row["ms"] = ms
    row["flops"] = chunked_flops(batch, seqlen, q)
    row["min_bytes"] = min_bytes(batch, seqlen)
    row["tflops"] = row["flops"] / ms / 1e9
    row["gbps"] = row["min_bytes"] / ms / 1e6
    return row


def is_project(row):
    """A row of this project's kernels (ssd-bench's), not an anchor's."""
    return row.get("source", "").startswith("ssd-bench") or row["strategy"] in PROJECT


def merged_bench_rows(rows, source):
    """An ssd-bench JSON's rows for the table: only the anchors' layer, and
    named by artifact where one strategy names several (variants of one
    kernel, which the table would otherwise keep only the best of)."""
    layer = {"nheads": NHEADS, "headdim": HEADDIM, "dstate": DSTATE, "ngroups": NGROUPS}
    kept = [r for r in rows if all(r.get(k) == v for k, v in layer.items())]
    if len(kept) < len(rows):
        log(f"{source}: {len(rows) - len(kept)} row(s) of another layer left out of the table")
    artifacts = {}
    for r in kept:
        artifacts.setdefault(r["strategy"], set()).add(r.get("artifact"))
    for r in kept:
        r.setdefault("source", f"ssd-bench JSON {source}")
        if len(artifacts[r["strategy"]]) > 1 and r.get("artifact"):
            r["strategy"] = r["artifact"]
    return kept


def print_table(rows):
    print("\n=== anchors and this project (ms, device time; best chunk size of each) ===")
    print(f"{'case':<12} {'strategy':<30} {'Q':>4} {'ms':>9} {'max_rel_err':>12} {'vs best anchor':>15}")
    for case, (b, L) in CASES.items():
        mine = [r for r in rows if r["batch"] == b and r["seqlen"] == L and r.get("ms")]
        if not mine:
            continue
        best = {}
        for r in mine:
            if r["strategy"] not in best or r["ms"] < best[r["strategy"]]["ms"]:
                best[r["strategy"]] = r
        anchors = [r["ms"] for s, r in best.items() if not is_project(r)]
        ref = min(anchors) if anchors else None
        for s, r in sorted(best.items(), key=lambda kv: kv[1]["ms"]):
            err = r.get("max_rel_err")
            ratio = f"{r['ms'] / ref:.2f}x" if ref else "-"
            print(f"{case:<12} {s:<30} {r['chunk_size']:>4} {r['ms']:>9.4f} "
                  f"{(f'{err:.2e}' if isinstance(err, (int, float)) else '-'):>12} {ratio:>15}")


def select_layer(name):
    """Makes `name` the layer every helper above reads (module-wide: the
    inputs, the reference, the checks and the rows all describe one layer
    per run)."""
    global LAYER, NHEADS, HEADDIM, DSTATE, NGROUPS, ARTIFACT_PREFIX
    LAYER = name
    (NHEADS, HEADDIM, DSTATE, NGROUPS), ARTIFACT_PREFIX = LAYERS[name]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layer", default=LAYER, choices=sorted(LAYERS),
                    help="the layer's shape (default: the headline Mamba-2 2.7B layer)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma list of " + ", ".join(CASES))
    ap.add_argument("--anchors", default=",".join(ANCHORS), help="comma list of " + ", ".join(ANCHORS))
    ap.add_argument("--chunks", default="64,128,256", help="mamba_ssm's chunk sizes")
    ap.add_argument("--fla-chunks", default="64",
                    help="fla's chunk sizes (its default 64; each more costs ~50 s of autotuning on a fresh machine)")
    ap.add_argument("--artifacts", default=os.path.join(ROOT, "device-artifacts"))
    ap.add_argument("--project", default=",".join(PROJECT),
                    help="comma list of the project's variants (<layer prefix>-<variant>-q<Q>-bf16 artifacts)")
    ap.add_argument("--skip-project", action="store_true", help="anchors only (no ssd-bench)")
    ap.add_argument("--bench-json", help="merge this ssd-bench JSON instead of running ssd-bench")
    ap.add_argument("--ssd-bench", help="an ssd-bench binary (else built into --build-dir)")
    ap.add_argument("--build-dir", default="/tmp/ssd-anchors-rt")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--check-heads", type=int, default=8, help="heads checked where b*L > 16K")
    ap.add_argument("--bench-check-heads", type=int, default=2)
    ap.add_argument("--bench-check-tokens", type=int, default=2048,
                    help="tokens ssd-bench checks per run (0: the whole sequence and the final "
                         "states, minutes of host time at 128K)")
    ap.add_argument("--bench-timeout", type=int, default=240,
                    help="seconds ssd-bench may run; the rows measured by then are kept")
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--commit")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--json", help="output file (default <out>/<date>-<commit>-anchors.json)")
    ap.add_argument("--selftest", action="store_true", help="check reference_f64 against the recurrence first")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    select_layer(args.layer)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # before anything starts JAX
    cases = [c for c in args.cases.split(",") if c]
    anchors = [a for a in args.anchors.split(",") if a]
    chunks = {"mamba_ssm": [int(q) for q in args.chunks.split(",") if q],
              "fla": [int(q) for q in args.fla_chunks.split(",") if q]}
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case {c}")
    for a in anchors:
        if a not in ANCHORS:
            ap.error(f"unknown anchor {a}")
    commit = args.commit or git_commit(args.artifacts)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")

    builder = None
    runs = []
    if not args.skip_project and not args.bench_json:
        runs = project_runs(args.artifacts, cases, [v for v in args.project.split(",") if v])
        if not runs:
            log(f"no {ARTIFACT_PREFIX}-*-bf16 artifacts under {args.artifacts}: the project's kernels are left out")
        elif not args.ssd_bench:
            builder = Builder(args.build_dir)
            builder.start()

    torch, versions = None, {}
    if anchors or args.selftest:
        import torch
        torch.set_grad_enabled(False)
        gpu = torch.cuda.get_device_name(0)
        versions["torch"] = torch.__version__
        for mod in ("triton", "jax", "fla", "jla", "einops"):
            try:
                versions[mod] = __import__(mod).__version__
            except Exception as e:  # noqa: BLE001 - recorded
                versions[mod] = f"not importable: {type(e).__name__}: {e}"
    elif args.bench_json:
        gpu = json.load(open(args.bench_json)).get("gpu", "unknown")
    else:
        try:
            r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                               text=True)
            gpu = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "unknown"
        except OSError:
            gpu = "unknown"
    log(f"{gpu}; " + ", ".join(f"{k} {v}" for k, v in versions.items()))

    rows, failures = [], []
    # The file name keeps to [A-Za-z0-9._-] (a commit given as "abc+dirty"
    # would otherwise name a file the device tool does not bring back).
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", commit)
    layer_tag = "" if LAYER == "mamba2-2.7b" else f"-{ARTIFACT_PREFIX}"
    path = args.json or os.path.join(args.out, f"{date}-{safe}{layer_tag}-anchors.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def save(final=False):
        """The JSON so far (rewritten after every row, so a run cut short keeps what it measured)."""
        result = {
            "commit": commit, "gpu": gpu, "date": date, "what": "anchors", "layer": LAYER,
            "note": ("Anchors and this project's kernels in one device call (bench/anchors/run_anchors.py): "
                     f"layer {LAYER} (h={NHEADS}, p={HEADDIM}, n={DSTATE}, g={NGROUPS}), bf16 x/B/C, "
                     "fp32 dt/A/D/dt_bias, softplus with dt_bias, D per head, "
                     "forward. max_rel_err against a float64 reference (anchors: input set 0, reference_f64; "
                     "fused/unfused: ssd-bench's own check)."),
            "complete": final, "versions": versions, "wall_s": round(time.time() - T0, 1),
            "failures": failures, "rows": rows,
        }
        with open(path + ".tmp", "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        os.replace(path + ".tmp", path)

    def add(row):
        rows.append(row)
        save()

    def fail(strategy, b, L, q, err):
        msg = f"{type(err).__name__}: {err}".strip()[:2000]
        log(f"FAIL {strategy} b={b} L={L} Q={q}: {msg}")
        traceback.print_exc()
        r = row_base(strategy, b, L, q)
        r.update(ms=None, max_rel_err=None, error=msg)
        failures.append(f"{strategy} b={b} L={L} Q={q}: {msg}")
        add(r)

    if args.selftest:
        s = Inputs(torch, 2, 333, 7)
        hs = [0, 5, NHEADS - 1]
        ry, rs = reference_f64(torch, s, hs, q=64)
        ny, ns = naive_f64(torch, s, hs)
        ey, es = rel_err(torch, ry, ny), rel_err(torch, rs, ns)
        log(f"selftest: reference_f64 vs recurrence: y {ey:.2e}, final states {es:.2e}")
        if max(ey, es) > 1e-12:
            failures.append(f"selftest: reference_f64 differs from the recurrence ({ey:.2e}, {es:.2e})")
        del s

    jax = jnp = None
    for case in cases if anchors else []:
        b, L = CASES[case]
        nsets = min(MAX_SETS, max(1, math.ceil(ROTATE_BYTES / min_bytes(b, L))))
        sets = [Inputs(torch, b, L, args.seed * 1000 + i) for i in range(nsets)]
        heads = check_heads(b, L, args.check_heads)
        hidx = torch.tensor(heads, device="cuda")
        ref_y, ref_s = reference_f64(torch, sets[0], heads)
        torch.cuda.synchronize()
        log(f"case {case}: {nsets} input set(s), reference over {len(heads)} heads")

        def check(row, y, fs):
            ey = rel_err(torch, y.index_select(2, hidx), ref_y)
            es = rel_err(torch, fs.index_select(1, hidx), ref_s) if fs is not None else None
            row["max_rel_err_y"] = ey
            row["max_rel_err_final_states"] = es
            row["max_rel_err"] = max(ey, es) if es is not None else ey
            row["check_heads"] = len(heads)

        for name in anchors:
            strategy = STRATEGY[name]
            if name in ("mamba_ssm", "fla"):
                for q in chunks[name]:
                    try:
                        fn = torch_anchor(torch, name, q, args.cache)
                        ms, wall, (y, fs), graphs = time_torch(torch, fn, sets, args.warmup, args.iters)
                        row = row_base(strategy, b, L, q, HOW[name])
                        check(row, y, fs)
                        finish_row(row, ms, b, L, q)
                        row.update(ms_pipelined=wall, input_sets=nsets, warmup=args.warmup, iters=args.iters,
                                   timing="CUDA graph per call, CUDA events, median")
                        add(row)
                        log(f"{strategy:<30} {case} Q={q:<4} {ms:8.4f} ms (pipelined {wall:.4f}) "
                            f"err {row['max_rel_err']:.2e}")
                        del graphs, y, fs
                    except Exception as e:  # noqa: BLE001 - recorded
                        fail(strategy, b, L, q, e)
                    torch.cuda.empty_cache()
            else:
                q = 64
                try:
                    if jax is None:
                        jax, jnp = jax_modules()
                    torch.cuda.synchronize()
                    jsets = [tuple(to_jax(torch, jax, t) for t in (s.x, s.dt, s.A, s.B, s.C, s.D, s.dt_bias))
                             for s in sets]
                    fn = jax_anchor(jax, jnp, name)
                    ms, (y, st) = time_jax(jax, fn, jsets, args.warmup, args.iters)
                    row = row_base(strategy, b, L, q, HOW[name])
                    y_t = to_torch(torch, jax, jnp.take(y, jnp.asarray(heads), axis=2))
                    s_t = to_torch(torch, jax, jnp.take(st, jnp.asarray(heads), axis=1)).transpose(-1, -2)
                    ey, es = rel_err(torch, y_t, ref_y), rel_err(torch, s_t, ref_s)
                    row.update(max_rel_err_y=ey, max_rel_err_final_states=es, max_rel_err=max(ey, es),
                               check_heads=len(heads))
                    finish_row(row, ms, b, L, q)
                    row.update(input_sets=nsets, warmup=args.warmup, iters=args.iters,
                               timing="JAX: iters calls dispatched back to back, block_until_ready, "
                                      "wall / iters, median of 5")
                    add(row)
                    log(f"{strategy:<30} {case} Q={q:<4} {ms:8.4f} ms (pipelined wall) err {row['max_rel_err']:.2e}")
                    del y, st, jsets
                except Exception as e:  # noqa: BLE001 - recorded
                    fail(strategy, b, L, q, e)
        del sets, ref_y, ref_s
        torch.cuda.empty_cache()

    # The project's kernels, after the anchors (same process lifetime, same GPU).
    bench_rows = []
    if args.bench_json:
        bench_rows = merged_bench_rows(json.load(open(args.bench_json))["rows"],
                                       os.path.basename(args.bench_json))
    elif runs:
        binary = args.ssd_bench
        if builder is not None:
            log("waiting for the ssd-bench build")
            builder.join()
            if builder.error:
                failures.append(f"ssd-bench build: {builder.error}")
                log(f"FAIL ssd-bench build: {builder.error}")
            else:
                binary = builder.binary
        if binary:
            try:
                if torch is not None:
                    torch.cuda.empty_cache()
                bench_rows, bench_failures, rc, bench_gpu = run_ssd_bench(binary, runs, args, commit)
                failures += bench_failures
                if gpu == "unknown" and bench_gpu:
                    gpu = bench_gpu
                log(f"ssd-bench: {len(bench_rows)} rows, exit {rc}")
            except Exception as e:  # noqa: BLE001 - recorded
                failures.append(f"ssd-bench: {type(e).__name__}: {e}")
                log(f"FAIL ssd-bench: {e}")
    rows += bench_rows

    save(final=True)
    log(f"wrote {path} ({len(rows)} rows, {len(failures)} failures)")
    for f_ in failures:
        print("failure:", f_)
    print_table(rows)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
