#!/usr/bin/env python3
"""Runs the kernels of ssd-test-warp-specialized-ssd on the GPU, checks each
against a float64 chunked SSD of the same inputs and times it.

    run_warp_specialized_ssd.py DIR [--json FILE]
    run_warp_specialized_ssd.py --self-check

DIR holds <name>.cubin and cases.txt (one line per kernel: name batch heads
seqlen stages shared_bytes output_groups [headdim groups [panels]], 64, 1
and 0 where left out; panels 1: the kernel copies C and B through panel
maps, ssd-test-warp-specialized-ssd's panel-maps), as
scripts/device/build-artifacts.sh writes them. Each kernel,
`warp_specialized_ssd`, runs the Mamba-2 SSD (chunks of 64 tokens, state
size 128, groups of heads sharing B and C) of batch x
heads independent sequences: one block of 128 (2 + output_groups) threads
per (batch row, head, 64 columns of the head dimension), grid
batch * heads * headdim / 64, with the module's ssd.shared_memory bytes of
dynamic shared memory. Its arguments: the tensor maps of C, B, x and dt
(device pointers to the 128-byte CUtensorMaps this script encodes with the
driver's cuTensorMapEncodeTiled over the layer's layouts: C and B bf16
[batch][seqlen][groups][128], x bf16 [batch][seqlen][heads][headdim],
boxes of 64 tokens x 64 columns with the 128-byte swizzle; dt f32
[batch][seqlen][heads], boxes of 64 tokens x 4 heads unswizzled: dt before
the layer's softplus(dt + bias)), then A, dt's bias and D (memref<heads x f32> each),
the initial states (memref<batch x heads x headdim x 128 x f32>), y
(memref<batch x seqlen x heads x headdim x bf16>: the SSD plus D x) and
the final states (memref<batch x heads x headdim x 128 x f32>) as expanded
memref descriptors; y and the states start as NaN, so an output the kernel
leaves unwritten fails.

Each case runs in a child process with a time limit, so that a kernel whose
mbarrier ring deadlocks is reported as a FAIL instead of hanging the run.
After its check each case is timed (CUDA events: 3 launches to warm up,
then 20 back to back), as ms per launch, TFLOP/s of its four products and
GB/s of the bytes it must read and write. Cases of more than 2^22
token-heads check the first 4 heads of batch row 0 only (the reference
would take longer than the kernel's whole run); every output must still be
finite. Prints one PASS/FAIL line per kernel and exits 1 when y or the
states are off by more than 1.5e-2 relative to their largest element (the
bf16 bound: the kernel hands the chunk state to C S^T in bf16). Before the
cases, the chunked reference is checked against the token-by-token
recurrence on a small shape (--self-check does that alone, with numpy, for
a machine without a GPU).
"""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_tile_products import (  # noqa: E402
    descriptor, finish, from_bf16_bits, relative_error, to_bf16_bits)
from tensor_maps import FLOAT32, SWIZZLE_NONE, tensor_map  # noqa: E402

BOUND = 1.5e-2
# A bf16 NaN's bits: y starts as NaN, so that what the kernel leaves unwritten fails.
BF16_NAN = 0x7FC0
# P_BLOCK: the head-dimension columns of a block (the head dimension is
# whole p-blocks).
CHUNK, P_BLOCK, STATE = 64, 64, 128
GROUP_THREADS = 128
WARMUP, TIMED = 3, 20
# Token-heads above which only LARGE_HEADS heads of batch row 0 are checked.
LARGE = 2 ** 22
LARGE_HEADS = 4
# A kernel that gives no result within the limit deadlocked; the large
# cases need the extra time for their inputs (generated on the host).
TIME_LIMIT_S, LARGE_TIME_LIMIT_S = 120, 300
# The products of one chunk of one head: C B^T and C S^T (64 x 64 x 128),
# the causal scores times x (64 x 64 x 64, counted whole) and the state
# update (64 x 128 x 64), two flops a multiply-add.
CHUNK_FLOPS = 2 * (2 * CHUNK * CHUNK * STATE + CHUNK * CHUNK * P_BLOCK
                   + P_BLOCK * STATE * CHUNK)
# The reference's tolerance against the recurrence: both in float64.
SELF_CHECK_BOUND = 1e-9


def checked(batch, heads, seqlen):
    """The batch rows and heads a case checks (the first of each), and how
    the row says so."""
    if batch * heads * seqlen > LARGE:
        nh = min(heads, LARGE_HEADS)
        return 1, nh, f"b0 h0-{nh - 1}"
    return batch, heads, "all"


def reference(xp, x, b, c, dt, a, initial):
    """y (nb x L x nh x P) and the final states (nb x nh x P x N), in
    float64 with the array module xp (numpy or cupy), of x (nb x L x nh x
    P), B and C (nb x L x nh x N: each head's group's), dt (nb x nh x L), A
    (nh) and the initial states (nb x nh x P x N), by chunks of 64 tokens:
    the products vectorised over heads and chunks, a loop over the chunks
    for the state scan only. A ragged last chunk is padded with tokens of
    dt = 0 and x = 0, which leave the state as it is."""
    nb, length, nh, p = x.shape
    n = b.shape[-1]
    k = -(-length // CHUNK)
    pad = k * CHUNK - length
    if pad:
        def padded(v, axis):
            widths = [(0, 0)] * v.ndim
            widths[axis] = (0, pad)
            return xp.pad(v, widths)
        y, state = reference(xp, padded(x, 1), padded(b, 1), padded(c, 1), padded(dt, 2),
                             a, initial)
        return y[:, :length], state
    dtc = dt.reshape(nb, nh, k, CHUNK)
    # g: the inclusive cumsum of dt A inside each chunk.
    g = xp.cumsum(dtc * a[None, :, None, None], axis=-1)
    xc = x.reshape(nb, k, CHUNK, nh, p).transpose(0, 3, 1, 2, 4)  # nb nh k Q P
    bc = b.reshape(nb, k, CHUNK, nh, n).transpose(0, 3, 1, 2, 4)  # nb nh k Q N
    cc = c.reshape(nb, k, CHUNK, nh, n).transpose(0, 3, 1, 2, 4)
    # exp(g_t - g_s) for s <= t, 0 above the diagonal: -inf added before
    # the exp (not a mask after it), so that exp never sees the growing
    # differences there.
    above = xp.triu(xp.full((CHUNK, CHUNK), -xp.inf), 1)
    decay = xp.exp(g[..., :, None] - g[..., None, :] + above)
    y = ((cc @ bc.swapaxes(-1, -2)) * decay * dtc[..., None, :]) @ xc
    # Each chunk's own contribution to the state it hands on, then the scan:
    # S_{k+1} = exp(g_last(k)) S_k + that contribution, S_0 the initial state.
    last = g[..., -1:]
    increments = (xc * (xp.exp(last - g) * dtc)[..., None]).swapaxes(-1, -2) @ bc
    entering = xp.empty_like(increments)
    state = initial
    for chunk in range(k):
        entering[:, :, chunk] = state
        state = xp.exp(last[:, :, chunk])[..., None] * state + increments[:, :, chunk]
    # What the states entering the chunks add: exp(g_t) C_t S_k^T.
    y += xp.exp(g)[..., None] * (cc @ entering.swapaxes(-1, -2))
    return y.transpose(0, 2, 3, 1, 4).reshape(nb, length, nh, p), state


def recurrence(xp, x, b, c, dt, a, initial):
    """The same outputs token by token: h_t = exp(dt_t A) h_{t-1} +
    dt_t x_t B_t^T, y_t = h_t C_t. Independent of the chunked form, and slow:
    for the self-check."""
    nb, length, nh, p = x.shape
    state = initial
    y = xp.empty((nb, length, nh, p))
    for t in range(length):
        state = (xp.exp(dt[:, :, t] * a)[..., None, None] * state
                 + (dt[:, :, t, None] * x[:, t])[..., None] * b[:, t, :, None, :])
        y[:, t] = (state @ c[:, t, :, :, None])[..., 0]
    return y, state


def self_check():
    """The chunked reference against the recurrence (numpy, float64) on two
    batch rows, three heads and three chunks, with the runner's input
    ranges: the larger of the two relative errors (y, states)."""
    rng = np.random.default_rng(1)
    nb, nh, length = 2, 3, 3 * CHUNK - 5
    x = rng.standard_normal((nb, length, nh, 2 * P_BLOCK))
    b, c = (rng.standard_normal((nb, length, nh, STATE)) for _ in range(2))
    dt = rng.uniform(0.001, 0.1, (nb, nh, length))
    a = -rng.uniform(1, 16, nh)
    initial = rng.standard_normal((nb, nh, 2 * P_BLOCK, STATE))
    errors = []
    for chunked, token in zip(reference(np, x, b, c, dt, a, initial),
                              recurrence(np, x, b, c, dt, a, initial)):
        errors.append(float(np.abs(chunked - token).max() / np.abs(token).max()))
    return max(errors)


def state_map(cuda, device_bits, batch, seqlen, groups, panels):
    """The map of C or B ([batch][seqlen][groups][128] bf16 bits): boxes of
    64 tokens by one 64-column panel, or with `panels` (the kernel's panel
    maps) by both panels at once, the panel index a dimension between the
    row and the token, 128 bytes apart."""
    from cupy.lib.stride_tricks import as_strided
    rows = device_bits.reshape(batch, seqlen, groups, STATE)
    if not panels:
        return tensor_map(cuda, rows, (64, 1, 64, 1))
    token = groups * STATE * 2
    view = as_strided(rows, shape=(batch, STATE // 64, seqlen, groups, 64),
                      strides=(seqlen * token, 128, token, STATE * 2, 2))
    return tensor_map(cuda, view, (64, 1, 64, STATE // 64, 1))


def run_case(folder, name, batch, heads, seqlen, shared, output_groups, headdim, groups,
             panels):
    """y's and the states' max errors relative to their largest elements,
    and the kernel's ms per launch."""
    import cupy as cp
    cuda = ctypes.CDLL("libcuda.so.1")
    rng = np.random.default_rng(7)
    tokens = batch * seqlen
    # B and C of each group of heads side by side: [tokens][groups * N].
    d_b = cp.asarray(to_bf16_bits(rng.standard_normal((tokens, groups * STATE), dtype=np.float32)))
    d_c = cp.asarray(to_bf16_bits(rng.standard_normal((tokens, groups * STATE), dtype=np.float32)))
    # dt before the layer's processing, [tokens][heads] as the layer holds
    # it (the kernel's map reads 4 heads a box); the kernel takes softplus(dt +
    # bias), the bias set so that dt lands around 0.001 .. 0.1 (Mamba-2's
    # initialisation).
    d_dt = cp.asarray(rng.uniform(-1, 1, (tokens, heads)).astype(np.float32))
    d_bias = cp.asarray(np.log(np.expm1(rng.uniform(0.001, 0.1, heads))).astype(np.float32))
    d_a = cp.asarray(-rng.uniform(1, 16, heads).astype(np.float32))
    d_d = cp.asarray(rng.uniform(0.5, 1.5, heads).astype(np.float32))
    d_initial = cp.asarray(rng.standard_normal((batch, heads, headdim, STATE), dtype=np.float32))
    # x a batch row at a time: the large case's whole x in float32 would
    # take gigabytes of host memory.
    d_x = cp.empty((batch, seqlen, heads, headdim), dtype=cp.uint16)
    for row in range(batch):
        d_x[row] = cp.asarray(to_bf16_bits(
            rng.standard_normal((seqlen, heads, headdim), dtype=np.float32)))
    d_y = cp.full((batch, seqlen, heads, headdim), BF16_NAN, dtype=cp.uint16)
    d_states = cp.full((batch, heads, headdim, STATE), np.nan, dtype=cp.float32)
    # The layer's tensors as the maps see them, boxes innermost first: a
    # chunk's rows of one 64-wide panel; dt's of 4 heads. Tokens past a
    # row's end read as zeros.
    maps = [cp.asarray(state_map(cuda, d_c, batch, seqlen, groups, panels)),
            cp.asarray(state_map(cuda, d_b, batch, seqlen, groups, panels)),
            cp.asarray(tensor_map(cuda, d_x, (64, 1, 64, 1))),
            cp.asarray(tensor_map(cuda, d_dt.reshape(batch, seqlen, heads), (4, 64, 1),
                                  FLOAT32, SWIZZLE_NONE))]
    kernel = cp.RawModule(path=f"{folder}/{name}.cubin").get_function("warp_specialized_ssd")
    kernel.max_dynamic_shared_size_bytes = shared
    args = (tuple(maps) + descriptor(d_a) + descriptor(d_bias) + descriptor(d_d)
            + descriptor(d_initial) + descriptor(d_y) + descriptor(d_states))

    def launch():
        kernel((batch * heads * (headdim // P_BLOCK),), (GROUP_THREADS * (2 + output_groups),),
               args, shared_mem=shared)

    launch()
    nb, nh, _ = checked(batch, heads, seqlen)

    def wide(bits):
        return from_bf16_bits(bits).astype(cp.float64)
    raw = (d_dt.reshape(batch, seqlen, heads).transpose(0, 2, 1)[:nb, :nh].astype(cp.float64)
           + d_bias[:nh, None].astype(cp.float64))
    dt = cp.where(raw > 20, raw, cp.log1p(cp.exp(raw)))
    x = wide(d_x[:nb, :, :nh])
    # Each checked head's group's B and C.
    group_of = cp.arange(nh) // (heads // groups)

    def per_head(bits):
        return wide(bits.reshape(batch, seqlen, groups, STATE)[:nb][:, :, group_of])
    ref_y, ref_states = reference(
        cp, x, per_head(d_b), per_head(d_c), dt, d_a[:nh].astype(cp.float64),
        d_initial[:nb, :nh].astype(cp.float64))
    ref_y += d_d[:nh, None].astype(cp.float64) * x
    y = from_bf16_bits(d_y)
    err_y = relative_error(cp, y[:nb, :, :nh], cp.asnumpy(ref_y))
    err_states = relative_error(cp, d_states[:nb, :nh], cp.asnumpy(ref_states))
    # The outputs outside the checked heads must have been written too.
    if not (bool(cp.isfinite(y).all()) and bool(cp.isfinite(d_states).all())):
        err_y = err_states = float("inf")
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(WARMUP):
        launch()
    start.record()
    for _ in range(TIMED):
        launch()
    stop.record()
    stop.synchronize()
    return err_y, err_states, cp.cuda.get_elapsed_time(start, stop) / TIMED


def throughput(batch, heads, seqlen, ms, headdim, groups):
    """TFLOP/s and GB/s of one launch of ms milliseconds: the four products
    of every chunk of every head; x, B and C (bf16), dt and the initial
    states (f32) read once, y (bf16) and the states (f32) written once."""
    flops = CHUNK_FLOPS * (seqlen // CHUNK) * batch * heads * (headdim // P_BLOCK)
    tokens = batch * seqlen
    states = 4 * batch * heads * headdim * STATE
    read = 2 * tokens * (heads * headdim + 2 * groups * STATE) + 4 * batch * heads * seqlen + states
    written = 2 * tokens * heads * headdim + states
    return flops / (ms * 1e-3) / 1e12, (read + written) / (ms * 1e-3) / 1e9


def main():
    if "--self-check" in sys.argv:
        err = self_check()
        print(f"{'PASS' if err <= SELF_CHECK_BOUND else 'FAIL'}: chunked reference against "
              f"the token recurrence, max_rel_err={err:.3e}")
        return 0 if err <= SELF_CHECK_BOUND else 1
    folder = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "--one":
        name = sys.argv[3]
        batch, heads, seqlen, shared, output_groups, headdim, groups, panels = map(
            int, sys.argv[4:12])
        err_y, err_states, ms = run_case(folder, name, batch, heads, seqlen, shared,
                                         output_groups, headdim, groups, panels)
        print(json.dumps({"y": err_y, "states": err_states, "ms": ms}))
        return 0
    json_path = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    # A wrong reference would pass or fail every kernel for nothing.
    err = self_check()
    if err > SELF_CHECK_BOUND:
        print(f"FAIL: the chunked reference is off the token recurrence by {err:.3e}")
        return 1
    rows = []
    with open(f"{folder}/cases.txt") as cases:
        for line in cases:
            if not line.strip():
                continue
            name, *numbers = line.split()
            # headdim and groups: 64 and 1 where the line leaves them out.
            # panels: 1 where the kernel copies C and B through panel maps.
            batch, heads, seqlen, stages, shared, output_groups, headdim, groups, panels = (
                list(map(int, numbers)) + [P_BLOCK, 1, 0][len(numbers) - 6:])[:9]
            _, _, subset = checked(batch, heads, seqlen)
            limit = TIME_LIMIT_S if subset == "all" else LARGE_TIME_LIMIT_S
            err_y = err_states = float("inf")
            ms = tflops = gbps = None
            error = None
            try:
                child = subprocess.run(
                    [sys.executable, __file__, folder, "--one", name,
                     *map(str, (batch, heads, seqlen, shared, output_groups, headdim, groups,
                                panels))],
                    capture_output=True, text=True, timeout=limit)
                if child.returncode != 0:
                    error = (child.stderr.strip().splitlines() or ["exited with no message"])[-1]
                else:
                    result = json.loads(child.stdout.strip().splitlines()[-1])
                    err_y, err_states, ms = result["y"], result["states"], result["ms"]
                    tflops, gbps = throughput(batch, heads, seqlen, ms, headdim, groups)
            except subprocess.TimeoutExpired:
                error = f"no result within {limit} s (a deadlocked ring?)"
            ok = err_y <= BOUND and err_states <= BOUND
            timing = f" {ms:.3f} ms {tflops:.1f} TFLOP/s {gbps:.0f} GB/s" if ms is not None else ""
            print(f"{'PASS' if ok else 'FAIL'}: {name} batch={batch} heads={heads} "
                  f"seqlen={seqlen} headdim={headdim} groups={groups} stages={stages} "
                  f"output_groups={output_groups} max_rel_err_y={err_y:.3e} "
                  f"max_rel_err_states={err_states:.3e} checked={subset}{timing}"
                  + (f" ({error})" if error else ""))
            rows.append({"name": name, "batch": batch, "heads": heads, "seqlen": seqlen,
                         "headdim": headdim, "groups": groups, "stages": stages,
                         "output_groups": output_groups, "checked": subset, "max_rel_err_y": err_y,
                         "max_rel_err_states": err_states, "ms": ms, "tflops": tflops,
                         "gbps": gbps, "status": "PASS" if ok else "FAIL",
                         **({"error": error} if error else {})})
    return finish(rows, json_path, BOUND)


if __name__ == "__main__":
    sys.exit(main())
