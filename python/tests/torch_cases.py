"""Random layer cases for the PyTorch op and their expected outputs.

The expected outputs come from the project's independent reference (the
float64 recurrence of lib/Reference, through ssdLayerReference), never from
the code under test. The GPU machine has no libSSDCAPI, so
scripts/device/build-torch-cases.py computes them here and the GPU tests
load them (see `save_case` / `load_case`).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from typing import Any

import torch

from ssd_mlir import _layer
from ssd_mlir.torch import CHUNK_SIZE_ENV, kernel_spec, layer_spec

# The golden bounds (max|out - expected| / max|expected|) per compute dtype.
BOUNDS = {torch.float32: 1e-4, torch.bfloat16: 1.5e-2, torch.float16: 5e-3}

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def make_inputs(seed: int, batch: int, seqlen: int, nheads: int, headdim: int,
                ngroups: int, dstate: int, dtype: torch.dtype,
                D: str | None = None, z: bool = False, dt_bias: bool = False,
                initial_states: bool = False, seq_idx_cuts: tuple[int, ...] = (),
                cu_seqlens: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Inputs of mamba_chunk_scan_combined (as keyword arguments, CPU)."""
    g = torch.Generator().manual_seed(seed)

    def rand(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return torch.randn(*shape, generator=g) * scale

    b, L, h, p, n = batch, seqlen, nheads, headdim, dstate
    args: dict[str, Any] = {
        "x": rand(b, L, h, p).to(dtype),
        # Small steps keep the state bounded over a few hundred tokens.
        "dt": torch.rand(b, L, h, generator=g) * 0.2 + 0.01,
        "A": -(torch.rand(h, generator=g) * 2.0 + 0.1),
        "B": rand(b, L, ngroups, n).to(dtype),
        "C": rand(b, L, ngroups, n).to(dtype),
    }
    if D == "h":
        args["D"] = rand(h)
    elif D == "hp":
        args["D"] = rand(h, p)
    if z:
        args["z"] = rand(b, L, h, p).to(dtype)
    if dt_bias:
        args["dt_bias"] = rand(h, scale=0.1)
    if initial_states:
        args["initial_states"] = rand(b, h, p, n, scale=0.5)
    if seq_idx_cuts:
        row = torch.zeros(L, dtype=torch.int32)
        for cut in seq_idx_cuts:
            row[cut:] += 1
        args["seq_idx"] = row.repeat(b, 1)
    if cu_seqlens is not None:
        args["cu_seqlens"] = torch.tensor(cu_seqlens, dtype=torch.int32)
    return args


def reference(args: dict[str, Any], chunk_size: int = 16, dt_softplus: bool = False,
              dt_limit: tuple[float, float] = (0.0, math.inf),
              varlen: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, states) of the reference in float64: final states (b, h, p, n),
    or with varlen the end state of every sequence of cu_seqlens, each from
    its own start (the first from initial_states)."""
    x, B = args["x"], args["B"]
    b, L, h, p = x.shape
    n = B.shape[3]
    init = args.get("initial_states")
    inputs: dict[str, torch.Tensor] = {
        name: args[name] for name in ("x", "dt", "A", "B", "C", "D", "z", "dt_bias")
        if args.get(name) is not None
    }
    if varlen:
        cu = args["cu_seqlens"]
        s = cu.shape[0] - 1
        inputs["cu_seqlens"] = cu
        if init is not None:
            per_seq = torch.zeros(s, h, p, n)
            per_seq[:1] = init[:1].float()
            inputs["initial_states"] = per_seq
    else:
        s = b
        if init is not None:
            inputs["initial_states"] = init
        if args.get("seq_idx") is not None:
            inputs["seq_idx"] = args["seq_idx"]
    spec = layer_spec(x, B, chunk_size, D=args.get("D"), z=args.get("z"),
                      dt_bias=args.get("dt_bias"),
                      initial_states="initial_states" in inputs,
                      seq_idx="seq_idx" in inputs, varlen=varlen,
                      dt_softplus=dt_softplus, dt_limit=dt_limit)
    keep = {}
    tensors = []
    for name, t in inputs.items():
        integer = name in ("seq_idx", "cu_seqlens")
        t = t.to(torch.int32 if integer else torch.float32).contiguous()
        keep[name] = t
        tensors.append(_layer.HostTensor(name, t.data_ptr(), "i32" if integer else "f32",
                                         tuple(t.shape)))
    y = torch.empty(b, L, h, p, dtype=torch.float64)
    states = torch.empty(s, h, p, n, dtype=torch.float64)
    _layer.reference(spec, tensors, y.data_ptr(), states.data_ptr())
    return y, states


def rel_error(out: torch.Tensor, expected: torch.Tensor) -> float:
    """The golden error measure: max|out - expected| / max|expected|."""
    out64 = out.detach().to("cpu", torch.float64)
    scale = expected.abs().max().item() if expected.numel() else 0.0
    diff = (out64 - expected).abs().max().item() if expected.numel() else 0.0
    return diff / scale if scale > 0 else diff


# The cases the GPU tests run (artifacts and expected outputs are built here
# by scripts/device/build-torch-cases.py). Chunk sizes within the GPU
# lowerings' range (16 to 1024).
GPU_CASES: list[dict[str, Any]] = [
    {"name": "plain-f32", "dtype": "f32", "chunk": 64,
     "shape": dict(batch=2, seqlen=100, nheads=4, headdim=8, ngroups=1, dstate=16),
     "inputs": {}, "call": {}},
    {"name": "mamba2-bf16", "dtype": "bf16", "chunk": 64,
     "shape": dict(batch=2, seqlen=150, nheads=4, headdim=16, ngroups=2, dstate=16),
     "inputs": dict(D="h", z=True, dt_bias=True),
     "call": dict(dt_softplus=True)},
    {"name": "all-f16", "dtype": "f16", "chunk": 64,
     "shape": dict(batch=2, seqlen=100, nheads=4, headdim=8, ngroups=2, dstate=16),
     "inputs": dict(D="hp", z=True, dt_bias=True, initial_states=True),
     "call": dict(dt_softplus=True, dt_limit=(0.001, 0.2), return_final_states=True)},
    {"name": "seq-idx-bf16", "dtype": "bf16", "chunk": 128,
     "shape": dict(batch=2, seqlen=200, nheads=4, headdim=8, ngroups=1, dstate=16),
     "inputs": dict(D="h", initial_states=True, seq_idx_cuts=(37, 130)),
     "call": dict(return_final_states=True)},
    # Whole 64-element panels of headdim and dstate: the fused kernel copies
    # x, B and C by TMA (descriptors the launch encodes).
    {"name": "tma-bf16", "dtype": "bf16", "chunk": 128,
     "shape": dict(batch=2, seqlen=300, nheads=4, headdim=64, ngroups=1, dstate=128),
     "inputs": dict(D="h", z=True, dt_bias=True),
     "call": dict(dt_softplus=True, return_final_states=True)},
    {"name": "varlen-bf16", "dtype": "bf16", "chunk": 64,
     "shape": dict(batch=1, seqlen=150, nheads=4, headdim=8, ngroups=1, dstate=16),
     "inputs": dict(dt_bias=True, initial_states=True, seq_idx_cuts=(40, 90),
                    cu_seqlens=(0, 40, 90, 150)),
     "call": dict(dt_softplus=True, return_final_states=True,
                  return_varlen_states=True)},
]


def gpu_case(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(inputs, call options) of one GPU case, on the CPU."""
    args = make_inputs(len(case["name"]) * 7919, dtype=DTYPES[case["dtype"]],
                       **case["shape"], **case["inputs"])
    call = dict(case["call"], chunk_size=case["chunk"])
    return args, call


# The golden cases (../shared/golden, see its README.md) as torch op calls:
# every case in each compute dtype at these chunk sizes (the result does not
# depend on the chunk size, only its rounding does).
GOLDEN_CHUNKS = (64, 128, 256)


def golden_case(folder: Any, dtype: str, chunk: int) -> dict[str, Any]:
    """One golden case folder as a torch op call, in mamba_ssm's layout:
    {"args", "call", "y", "states", "expected"}. x, B, C and z are rounded
    to the compute dtype (the golden bounds assume it); the other inputs
    stay float32. Expected outputs are the golden files' (float64), except
    where cu_seqlens gives every sequence its own initial state: mamba_ssm
    takes one per row (the first sequence's, the others start from zero),
    so those come from the float64 reference with that start."""
    import json
    import pathlib

    import numpy as np

    folder = pathlib.Path(folder)
    meta = json.loads((folder / "case.json").read_text())

    def load(name: str) -> torch.Tensor:
        return torch.from_numpy(np.load(folder / f"{name}.npy"))

    rounded = DTYPES[dtype]
    args: dict[str, Any] = {}
    for name in ("x", "dt", "A", "B", "C", "D", "z", "dt_bias", "initial_states",
                 "seq_idx", "cu_seqlens"):
        if name in meta["inputs"]:
            t = load(name)
            args[name] = t.to(rounded) if name in ("x", "B", "C", "z") else t
    lo, hi = meta.get("dt_limit") or (0.0, None)
    call: dict[str, Any] = dict(chunk_size=chunk, dt_softplus=bool(meta.get("dt_softplus")),
                                return_final_states=True)
    if lo != 0.0 or hi is not None:
        call["dt_limit"] = (float(lo), math.inf if hi is None else float(hi))
    y = load("y").to(torch.float64)
    states = load("final_states").to(torch.float64)
    expected = "golden"
    if "cu_seqlens" in args:
        call["return_varlen_states"] = True
        init = args.get("initial_states")
        if init is not None:
            args["initial_states"] = init[:1].contiguous()
            if init.shape[0] > 1 and bool(init[1:].any()):
                y, states = reference(args, chunk_size=chunk,
                                      dt_softplus=call["dt_softplus"],
                                      dt_limit=call.get("dt_limit", (0.0, math.inf)),
                                      varlen=True)
                expected = "reference (one initial state per row)"
    return {"args": args, "call": call, "y": y, "states": states, "expected": expected}


@contextlib.contextmanager
def chunk_size_setting(setting: str) -> Iterator[None]:
    """$SSD_MLIR_CHUNK_SIZE set to setting within the block."""
    saved = os.environ.get(CHUNK_SIZE_ENV)
    os.environ[CHUNK_SIZE_ENV] = setting
    try:
        yield
    finally:
        if saved is None:
            del os.environ[CHUNK_SIZE_ENV]
        else:
            os.environ[CHUNK_SIZE_ENV] = saved


def kernel_specs(args: dict[str, Any], call: dict[str, Any]) -> list[Any]:
    """The GPU kernels one call runs: at the tuned chunk size (the default)
    and at the chunk size it asks ($SSD_MLIR_CHUNK_SIZE=requested)."""
    specs = [kernel_spec(**args, **call)]
    with chunk_size_setting("requested"):
        requested = kernel_spec(**args, **call)
    return specs + ([requested] if requested not in specs else [])
