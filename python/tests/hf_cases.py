"""Hugging Face Mamba-2 models for the transformers client's tests.

Configurations written here (no downloads): the released 130M and 2.7B
models' shapes (state-spaces/mamba2-130m and mamba2-2.7b as transformers
converts them) and a tiny one for the CPU tests; random weights.

Also what the GPU test and scripts/device/build-torch-cases.py share: the
kernels (LayerSpec) a model's prefill asks ssd_mlir for, found by running
the model on the meta device (no memory, no compute) with a recording scan,
and mamba_ssm's Triton op taken from bench/anchors/.cache (fetch.sh) without
mamba_ssm's package __init__ (which imports its CUDA extensions).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import torch

# The released models' shapes (d_model, n_layer, headdim 64, d_state 128,
# ngroups 1, chunk 256, expand 2, conv 4, vocab padded to 50288).
MAMBA2_130M: dict[str, Any] = dict(
    vocab_size=50288, hidden_size=768, num_hidden_layers=24, num_heads=24, head_dim=64,
    state_size=128, n_groups=1, expand=2, conv_kernel=4, chunk_size=256,
    use_bias=False, use_conv_bias=True, residual_in_fp32=True, tie_word_embeddings=True,
    time_step_limit=(0.0, float("inf")), initializer_range=0.02)
MAMBA2_2_7B: dict[str, Any] = dict(MAMBA2_130M, hidden_size=2560, num_hidden_layers=64,
                                   num_heads=80)
# The CPU tests': 2 layers, 8 heads of 16 (2 groups), state 16, chunk 16.
TINY: dict[str, Any] = dict(
    vocab_size=256, hidden_size=64, num_hidden_layers=2, num_heads=8, head_dim=16,
    state_size=16, n_groups=2, expand=2, conv_kernel=4, chunk_size=16,
    use_bias=False, use_conv_bias=True, residual_in_fp32=True, tie_word_embeddings=True,
    time_step_limit=(0.0, float("inf")), initializer_range=0.1)

GPU_MODELS: dict[str, dict[str, Any]] = {"mamba2-130m": MAMBA2_130M,
                                         "mamba2-2.7b": MAMBA2_2_7B}
# The GPU test's prefill and the dtypes it runs each model in.
GPU_BATCH, GPU_SEQLEN = 1, 2048
GPU_DTYPES: dict[str, tuple[torch.dtype, ...]] = {
    "mamba2-130m": (torch.bfloat16, torch.float32),
    "mamba2-2.7b": (torch.bfloat16,),
}


def make_model(config: dict[str, Any], seed: int = 0, dtype: torch.dtype = torch.float32,
               device: str = "cpu", layers: int | None = None) -> Any:
    """A Mamba2ForCausalLM with transformers' random initialization, in eval mode."""
    from transformers import Mamba2Config, Mamba2ForCausalLM

    values = dict(config)
    if layers is not None:
        values["num_hidden_layers"] = layers
    torch.manual_seed(seed)
    with torch.device(device):
        model = Mamba2ForCausalLM(Mamba2Config(**values))
    return model.to(dtype).eval()


def prefill_specs(config: dict[str, Any], dtype: torch.dtype, batch: int = 1,
                  seqlen: int = 64) -> list[Any]:
    """The LayerSpecs (ssd_mlir.torch.kernel_spec) of the SSD calls a prefill of
    this model makes, with and without a cache, at the tuned chunk size and at
    the model's own, found on the meta device."""
    from ssd_mlir.transformers import route_ssd
    from torch_cases import kernel_specs

    specs: list[Any] = []

    def record(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
               C: torch.Tensor, chunk_size: int, **call: Any) -> Any:
        for spec in kernel_specs(dict(x=x, dt=dt, A=A, B=B, C=C),
                                 dict(call, chunk_size=chunk_size)):
            if spec not in specs:
                specs.append(spec)
        b, L, h, p = x.shape
        y = torch.empty_like(x)
        if call.get("return_final_states"):
            return y, x.new_empty((b, h, p, B.shape[3]), dtype=torch.float32)
        return y

    model = make_model(config, dtype=dtype, device="meta", layers=1)
    ids = torch.zeros((batch, seqlen), dtype=torch.long, device="meta")
    with torch.no_grad(), route_ssd(record):
        model(ids, use_cache=False)
        model(ids, use_cache=True)
    return specs


def mamba_ssm_scan(cache: str) -> Callable[..., Any]:
    """mamba_ssm.ops.triton.ssd_combined.mamba_chunk_scan_combined from the Triton
    files bench/anchors/fetch.sh extracts into CACHE/mamba: its packages are
    registered empty (their __init__.py import the CUDA extensions)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "bench", "anchors"))
    try:
        from mamba_shim import mamba_chunk_scan_combined_from
    finally:
        sys.path.pop(0)
    return mamba_chunk_scan_combined_from(cache)  # type: ignore[no-any-return]


def rel_error(out: torch.Tensor, expected: torch.Tensor) -> float:
    """max|out - expected| / max|expected| (the golden error measure)."""
    diff = (out.double() - expected.double()).abs().max().item()
    scale = expected.double().abs().max().item()
    return diff / scale if scale > 0 else diff


def torch_ssd() -> Callable[..., Any]:
    """transformers' own torch SSD (modeling_mamba2.mamba2_chunk_scan under the
    wrapper that would pick mamba_ssm's where installed)."""
    import inspect

    from ssd_mlir.transformers import modeling_module

    return inspect.unwrap(modeling_module().mamba2_chunk_scan)  # type: ignore[no-any-return]


def checking(scan: Callable[..., Any], errors: list[dict[str, float]],
             keep_first: dict[str, Any] | None = None) -> Callable[..., Any]:
    """scan (mamba_ssm's signature), which also computes every call again on
    transformers' torch SSD in float32 from the same inputs and appends
    {"y": ..., "states": ...} (rel_error of scan's outputs against it) to
    errors; keep_first receives the first call's arguments."""
    reference = torch_ssd()

    def check(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
              C: torch.Tensor, chunk_size: int, **call: Any) -> Any:
        if keep_first is not None and not keep_first:
            keep_first.update(x=x.clone(), dt=dt.clone(), A=A.clone(), B=B.clone(),
                              C=C.clone(), chunk_size=chunk_size, **call)
        out = scan(x, dt, A, B, C, chunk_size, **dict(call, return_final_states=True))
        y, states = out
        f32 = {k: (v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
               for k, v in call.items() if k in ("D", "dt_bias", "initial_states", "dt_softplus",
                                                  "dt_limit")}
        with torch.no_grad():
            y_ref, states_ref = reference(x.float(), dt.float(), A.float(), B.float(), C.float(),
                                          chunk_size, return_final_states=True, **f32)
        errors.append({"y": rel_error(y, y_ref), "states": rel_error(states, states_ref)})
        return out if call.get("return_final_states") else y

    return check


def time_ms(fn: Callable[[], Any], warmup: int = 3, iters: int = 10) -> float:
    """Median of CUDA-event times of fn() after warmup calls."""
    import statistics

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
