"""Hugging Face transformers' Mamba-2 with its SSD on SSD-MLIR's kernels.

    from transformers import Mamba2Config, Mamba2ForCausalLM
    from ssd_mlir.transformers import route_ssd

    model = Mamba2ForCausalLM(config).cuda().bfloat16().eval()
    with route_ssd():
        logits = model(input_ids).logits  # every mixer's SSD on ssd_mlir

What is routed: the chunked SSD of the mixer's prefill (the "chunk form":
every forward with more than one new token), that is the call the mixer
makes to ``modeling_mamba2.mamba2_chunk_scan`` (transformers' torch SSD, or
mamba_ssm's ``mamba_chunk_scan_combined`` where mamba_ssm is installed),
goes to ``ssd_mlir.torch.mamba_chunk_scan_combined`` with the same
arguments. Everything else is the mixer's own code, unchanged: in_proj, the
causal conv1d (transformers' torch conv, or causal_conv1d where installed),
the gated RMSNorm, out_proj, the cache updates, and the one-token decode
step (``mamba2_selective_state_update``), which is not an SSD scan.

mamba_ssm's fused training kernel (``mamba_split_conv1d_scan_combined``,
taken when the model is in training mode without a cache) is switched off
inside the context, so that a training-mode forward also takes the routed
chunk form rather than silently bypassing it; ssd_mlir's op has no backward,
so a backward pass through it raises NotImplementedError.

``route_ssd(scan)`` routes any function with mamba_ssm's signature the same
way (e.g. mamba_ssm's own Triton op, for a comparison on equal terms).

The routing replaces module-level names of ``modeling_mamba2`` for the
duration of the ``with`` block, so it holds for every Mamba-2 model of the
process (and every thread) meanwhile; the previous functions are restored on
exit. Supported: transformers releases whose ``Mamba2Mixer.forward`` calls
``mamba2_chunk_scan``, itself or through
``mamba2_scan_forward`` (5.x; tested with 5.17, 5.24 and 5.25). Older releases
(4.x: ``cuda_kernels_forward`` / ``torch_forward``) raise
UnsupportedTransformersError.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

__all__ = [
    "MODELING_MODULE",
    "ROUTED_NAME",
    "UnsupportedTransformersError",
    "modeling_module",
    "route_ssd",
    "routed",
]

MODELING_MODULE = "transformers.models.mamba2.modeling_mamba2"
# The name the mixer's forward looks up for its chunked SSD.
ROUTED_NAME = "mamba2_chunk_scan"
# mamba_ssm's fused training kernel; transformers' fallback returns None.
FUSED_TRAINING_NAME = "mamba2_split_conv1d_scan_combined"

# The arguments of mamba_ssm's mamba_chunk_scan_combined (ssd_mlir's op has
# the same); others the mixer forwards in **kwargs are dropped, as
# transformers' own kernel wrapper does.
_SCAN_PARAMETERS = (
    "chunk_size", "D", "z", "dt_bias", "initial_states", "seq_idx", "cu_seqlens",
    "dt_softplus", "dt_limit", "return_final_states", "return_varlen_states",
)

_lock = threading.Lock()


class UnsupportedTransformersError(ImportError):
    """transformers is missing, or its Mamba-2 mixer is not one route_ssd knows."""


def _transformers_version() -> str:
    try:
        module = importlib.import_module("transformers")
    except ImportError:
        return "not installed"
    return str(getattr(module, "__version__", "unknown version"))


def _functions_behind(value: Any) -> list[Any]:
    """The Python functions a callable runs: itself under its decorators, or,
    for a function wrapped into a module object (5.25's hub-kernel
    decorators), that object's forward and the functions it closes over."""
    function = inspect.unwrap(value) if callable(value) else None
    if inspect.isfunction(function):
        return [function]
    forward = getattr(type(value), "forward", None)
    if not inspect.isfunction(forward):
        return []
    cells = [cell.cell_contents for cell in forward.__closure__ or ()]
    return [forward] + [cell for cell in cells if inspect.isfunction(cell)]


def _forward_reaches(module: ModuleType, mixer: Any, name: str) -> bool:
    """Whether Mamba2Mixer.forward reads the module-level name, directly or
    through the module's functions it calls (5.25 moved the call into
    mamba2_scan_forward)."""
    seen: set[str] = set()
    pending = [inspect.unwrap(mixer.forward)]
    while pending:
        code = getattr(pending.pop(), "__code__", None)
        names = set(code.co_names) if code is not None else set()
        if name in names:
            return True
        for callee in sorted(names - seen):
            seen.add(callee)
            pending.extend(_functions_behind(getattr(module, callee, None)))
    return False


def modeling_module() -> ModuleType:
    """transformers' modeling_mamba2, checked to have what route_ssd replaces."""
    try:
        module = importlib.import_module(MODELING_MODULE)
    except ImportError as error:
        raise UnsupportedTransformersError(
            f"ssd_mlir.transformers needs Hugging Face transformers with its Mamba-2 "
            f"model ({MODELING_MODULE}; transformers: {_transformers_version()}): "
            f"{error}. Install it with `pip install 'transformers>=5'`.") from None
    mixer = getattr(module, "Mamba2Mixer", None)
    missing = [name for name in (ROUTED_NAME, "Mamba2Mixer") if not hasattr(module, name)]
    if not missing and mixer is not None and not _forward_reaches(module, mixer, ROUTED_NAME):
        missing.append(f"Mamba2Mixer.forward calling {ROUTED_NAME}")
    if missing:
        raise UnsupportedTransformersError(
            f"transformers {_transformers_version()}: ssd_mlir.transformers routes the "
            f"Mamba-2 mixer's call to {MODELING_MODULE}.{ROUTED_NAME}, and this "
            f"release lacks {' and '.join(missing)} (releases 4.x choose between "
            f"cuda_kernels_forward and torch_forward instead). Use transformers 5.x "
            f"(tested with 5.17, 5.24 and 5.25).")
    return module


def routed(scan: Callable[..., Any]) -> Callable[..., Any]:
    """The stand-in for modeling_mamba2.mamba2_chunk_scan that calls scan
    (mamba_ssm's signature) with the mixer's arguments."""

    def mamba2_chunk_scan(hidden_states: Any, dt: Any, A: Any, B: Any, C: Any,
                          *args: Any, **kwargs: Any) -> Any:
        names = _SCAN_PARAMETERS[:len(args)]
        call = dict(zip(names, args))
        for name, value in kwargs.items():
            if name in _SCAN_PARAMETERS:
                call[name] = value
        if "dt_limit" in call:
            call["dt_limit"] = (float(call["dt_limit"][0]), float(call["dt_limit"][1]))
        return scan(hidden_states, dt, A, B, C, **call)

    mamba2_chunk_scan.__qualname__ = f"routed({getattr(scan, '__qualname__', scan)})"
    return mamba2_chunk_scan


def _no_fused_training_kernel(*args: Any, **kwargs: Any) -> None:
    # transformers' own fallback: None makes the mixer take its unfused path.
    return None


@contextlib.contextmanager
def route_ssd(scan: Callable[..., Any] | None = None) -> Iterator[Callable[..., Any]]:
    """Within the block, every Mamba-2 mixer's chunked SSD calls scan
    (default: ssd_mlir.torch.mamba_chunk_scan_combined) instead of its own.
    Yields the routed function (what the mixers call)."""
    module = modeling_module()
    if scan is None:
        from .torch import mamba_chunk_scan_combined
        scan = mamba_chunk_scan_combined
    stand_in = routed(scan)
    with _lock:
        saved = {name: getattr(module, name) for name in (ROUTED_NAME, FUSED_TRAINING_NAME)
                 if hasattr(module, name)}
        setattr(module, ROUTED_NAME, stand_in)
        if FUSED_TRAINING_NAME in saved:
            setattr(module, FUSED_TRAINING_NAME, _no_fused_training_kernel)
    try:
        yield stand_in
    finally:
        with _lock:
            for name, value in saved.items():
                setattr(module, name, value)
