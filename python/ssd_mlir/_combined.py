"""What ssd_mlir.torch and ssd_mlir.numpy share for mamba_chunk_scan_combined:
the argument checks, the kernel spec a call needs, the cu_seqlens checks,
the return value, and the in-process CPU kernels.

Nothing here imports an array library: each front end describes its arrays
through an ArrayKind (shape, dtype, device and how messages spell them), so
that ssd_mlir.numpy imports without PyTorch and ssd_mlir.torch without numpy.
Every error names the argument, what was expected and what was given.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional, TypeVar, Union

from . import _layer
from ._layer import LayerSpec

THREADS_ENV = "SSD_MLIR_CPU_THREADS"
CHUNK_SIZE_ENV = "SSD_MLIR_CHUNK_SIZE"
# The CPU kernels' largest chunk size: the Mamba-2 2.7B layer (f32, L=4096,
# one thread, 2-core EPYC) takes 167 ms at chunk 32 and 64 against 200 at
# 128 and 261 at 256 (bench/NOTES-cpu.md).
CPU_MAX_CHUNK_SIZE = 64


def kernel_chunk_size(chunk_size: int, tuned: int) -> int:
    """The chunk size a kernel runs for a call that asks chunk_size: `tuned`,
    unless $SSD_MLIR_CHUNK_SIZE says `requested` (then chunk_size) or names a
    power of two from 16 to 1024 (then that)."""
    setting = os.environ.get(CHUNK_SIZE_ENV, "").strip().lower()
    if setting in ("", "tuned"):
        return tuned
    if setting == "requested":
        return chunk_size
    value = int(setting) if setting.isdigit() else 0
    if value & (value - 1) or not 16 <= value <= 1024:
        raise ValueError(
            f"${CHUNK_SIZE_ENV}: expected 'tuned', 'requested' or a power of two "
            f"from 16 to 1024 (the GPU kernels' chunk sizes), got {setting!r}")
    return value


def cpu_kernel_chunk_size(chunk_size: int) -> int:
    """The chunk size the CPU kernels run for a call that asks chunk_size:
    at most CPU_MAX_CHUNK_SIZE, or as $SSD_MLIR_CHUNK_SIZE says."""
    return kernel_chunk_size(chunk_size, min(chunk_size, CPU_MAX_CHUNK_SIZE))


class ArrayKind:
    """How one array library's arrays are read and named in messages."""

    #: The array type in "x: expected <array_type>, got list".
    array_type = "an array"
    #: The accepted dtypes of x, B, C and z, in "x: expected dtype <io_dtypes>".
    io_dtypes = "float32 or float16"
    #: The index dtype of seq_idx and cu_seqlens, in "expected dtype <index_dtype>".
    index_dtype = "int32"

    def is_array(self, value: Any) -> bool:
        raise NotImplementedError

    def shape(self, t: Any) -> tuple[int, ...]:
        return tuple(int(d) for d in t.shape)

    def dtype_text(self, t: Any) -> str:
        """t's dtype as messages print it."""
        return str(t.dtype)

    def io_dtype(self, t: Any) -> Optional[str]:
        """The kernels' name of t's dtype ("f32", "bf16", "f16") where x, B,
        C and z may have it, else None."""
        raise NotImplementedError

    def is_float(self, t: Any) -> bool:
        raise NotImplementedError

    def is_index(self, t: Any) -> bool:
        raise NotImplementedError

    def device(self, t: Any) -> Any:
        """Where t lives; None for a library without devices."""
        return None


@dataclass(frozen=True)
class Call:
    """A checked call: its sizes, the kernel it runs and its flags."""

    batch: int
    seqlen: int
    nheads: int
    headdim: int
    ngroups: int
    dstate: int
    spec: LayerSpec
    dt_limit: tuple[float, float]
    varlen: bool


# ---------------------------------------------------------------------------
# Argument checks.
# ---------------------------------------------------------------------------


def _expect_array(kind: ArrayKind, name: str, value: Any) -> Any:
    if not kind.is_array(value):
        raise TypeError(f"{name}: expected {kind.array_type}, got {type(value).__name__}")
    return value


def _expect_shape(kind: ArrayKind, name: str, t: Any, expected: Sequence[int],
                  symbols: str) -> None:
    if kind.shape(t) != tuple(expected):
        raise ValueError(
            f"{name}: expected shape {symbols} = {tuple(expected)}, got {kind.shape(t)}")


def _expect_float(kind: ArrayKind, name: str, t: Any) -> None:
    if not kind.is_float(t):
        raise TypeError(f"{name}: expected a floating-point dtype, got {kind.dtype_text(t)}")


def _expect_index(kind: ArrayKind, name: str, t: Any) -> None:
    if not kind.is_index(t):
        raise TypeError(
            f"{name}: expected dtype {kind.index_dtype}, got {kind.dtype_text(t)}")


def _expect_device(kind: ArrayKind, name: str, t: Any, device: Any) -> None:
    if kind.device(t) != device:
        raise ValueError(
            f"{name}: expected a tensor on {device} (x's device), got {kind.device(t)}")


def _expect_io_dtype(kind: ArrayKind, name: str, t: Any, x: Any) -> None:
    if kind.io_dtype(t) != kind.io_dtype(x):
        raise TypeError(
            f"{name}: expected dtype {kind.dtype_text(x)} (x's dtype), got "
            f"{kind.dtype_text(t)}")


def check_arguments(
    kind: ArrayKind, x: Any, dt: Any, A: Any, B: Any, C: Any, chunk_size: Any,
    D: Any, z: Any, dt_bias: Any, initial_states: Any, seq_idx: Any,
    cu_seqlens: Any, dt_limit: Any, return_varlen_states: bool,
) -> None:
    """Raises TypeError or ValueError for the first argument that
    mamba_chunk_scan_combined cannot take."""
    x = _expect_array(kind, "x", x)
    if len(kind.shape(x)) != 4:
        raise ValueError(
            f"x: expected shape (batch, seqlen, nheads, headdim), got {kind.shape(x)}")
    if kind.io_dtype(x) is None:
        raise TypeError(f"x: expected dtype {kind.io_dtypes}, got {kind.dtype_text(x)}")
    b, L, h, p = kind.shape(x)
    B = _expect_array(kind, "B", B)
    if len(kind.shape(B)) != 4:
        raise ValueError(
            f"B: expected shape (batch, seqlen, ngroups, dstate), got {kind.shape(B)}")
    g, n = kind.shape(B)[2:]
    device = kind.device(x)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise TypeError(f"chunk_size: expected an int, got {type(chunk_size).__name__}")
    if chunk_size <= 0 or chunk_size & (chunk_size - 1):
        raise ValueError(
            f"chunk_size: expected a power of two (SSD-MLIR's kernels take no "
            f"other), got {chunk_size}")
    if g <= 0 or h % g:
        raise ValueError(f"B: ngroups (dimension 2) = {g} must divide nheads = {h}")
    tokens = (b, L, h, p)
    groups = (b, L, g, n)
    required = [
        ("dt", dt, (b, L, h), "(batch, seqlen, nheads)"),
        ("A", A, (h,), "(nheads,)"),
        ("B", B, groups, "(batch, seqlen, ngroups, dstate)"),
        ("C", C, groups, "(batch, seqlen, ngroups, dstate)"),
    ]
    for name, t, shape, symbols in required:
        t = _expect_array(kind, name, t)
        _expect_shape(kind, name, t, shape, symbols)
        _expect_float(kind, name, t)
        _expect_device(kind, name, t, device)
    _expect_io_dtype(kind, "B", B, x)
    _expect_io_dtype(kind, "C", C, x)
    if D is not None:
        D = _expect_array(kind, "D", D)
        if kind.shape(D) not in ((h,), (h, p)):
            raise ValueError(
                f"D: expected shape (nheads,) = {(h,)} or (nheads, headdim) = "
                f"{(h, p)}, got {kind.shape(D)}")
        _expect_float(kind, "D", D)
        _expect_device(kind, "D", D, device)
    if z is not None:
        z = _expect_array(kind, "z", z)
        _expect_shape(kind, "z", z, tokens, "(batch, seqlen, nheads, headdim)")
        _expect_io_dtype(kind, "z", z, x)
        _expect_device(kind, "z", z, device)
    if dt_bias is not None:
        dt_bias = _expect_array(kind, "dt_bias", dt_bias)
        _expect_shape(kind, "dt_bias", dt_bias, (h,), "(nheads,)")
        _expect_float(kind, "dt_bias", dt_bias)
        _expect_device(kind, "dt_bias", dt_bias, device)
    if initial_states is not None:
        initial_states = _expect_array(kind, "initial_states", initial_states)
        _expect_shape(kind, "initial_states", initial_states, (b, h, p, n),
                      "(batch, nheads, headdim, dstate)")
        _expect_float(kind, "initial_states", initial_states)
        _expect_device(kind, "initial_states", initial_states, device)
    if seq_idx is not None:
        seq_idx = _expect_array(kind, "seq_idx", seq_idx)
        _expect_shape(kind, "seq_idx", seq_idx, (b, L), "(batch, seqlen)")
        _expect_index(kind, "seq_idx", seq_idx)
        _expect_device(kind, "seq_idx", seq_idx, device)
    if (not isinstance(dt_limit, (tuple, list)) or len(dt_limit) != 2
            or not all(isinstance(v, (int, float)) for v in dt_limit)):
        raise TypeError(f"dt_limit: expected a pair (low, high) of floats, got {dt_limit!r}")
    lo, hi = float(dt_limit[0]), float(dt_limit[1])
    if math.isnan(lo) or math.isnan(hi) or lo < 0 or lo > hi:
        raise ValueError(f"dt_limit: expected 0 <= low <= high, got {(lo, hi)}")
    if return_varlen_states:
        if cu_seqlens is None:
            raise ValueError("cu_seqlens: required when return_varlen_states is True")
        cu_seqlens = _expect_array(kind, "cu_seqlens", cu_seqlens)
        cu_shape = kind.shape(cu_seqlens)
        if len(cu_shape) != 1 or cu_shape[0] < 2:
            raise ValueError(
                f"cu_seqlens: expected shape (num_sequences + 1,) with at least "
                f"one sequence, got {cu_shape}")
        _expect_index(kind, "cu_seqlens", cu_seqlens)
        _expect_device(kind, "cu_seqlens", cu_seqlens, device)
        if b != 1:
            raise ValueError(
                f"x: return_varlen_states needs batch 1 (sequences packed along "
                f"seqlen), got batch {b}")


def check_cu_seqlens(values: Sequence[int], seqlen: int,
                     seq_idx_row: Optional[Sequence[int]]) -> None:
    """cu_seqlens' values (and seq_idx's first row beside them), read on
    the host: the kernels index tokens by them."""
    if values[0] != 0 or values[-1] != seqlen:
        raise ValueError(
            f"cu_seqlens: expected offsets from 0 to seqlen = {seqlen}, got "
            f"{values[0]} to {values[-1]}")
    for i in range(1, len(values)):
        if values[i] < values[i - 1]:
            raise ValueError(
                f"cu_seqlens: expected non-decreasing offsets, element {i} is "
                f"{values[i]} after {values[i - 1]}")
    if seq_idx_row is None:
        return
    # Every sequence is computed from its own start: seq_idx must mark the
    # same sequences (it does when mamba_ssm's callers derive it).
    starts = sorted({v for v in values[1:-1] if 0 < v < seqlen})
    changes = [t for t in range(1, seqlen) if seq_idx_row[t] != seq_idx_row[t - 1]]
    if changes != starts:
        raise ValueError(
            f"seq_idx: with return_varlen_states it must change exactly where "
            f"cu_seqlens starts a sequence (at tokens {starts}), it changes at "
            f"{changes}")


# ---------------------------------------------------------------------------
# Kernel specs.
# ---------------------------------------------------------------------------


def layer_spec(
    kind: ArrayKind, x: Any, B: Any, chunk_size: int, D: Any = None, z: Any = None,
    dt_bias: Any = None, initial_states: bool = False, seq_idx: bool = False,
    varlen: bool = False, dt_softplus: bool = False,
    dt_limit: tuple[float, float] = (0.0, math.inf),
) -> LayerSpec:
    """The kernel a call with these arguments needs (sizes from x and B)."""
    features = []
    if D is not None:
        features.append("D" if len(kind.shape(D)) == 1 else "Dhp")
    if z is not None:
        features.append("z")
    if dt_bias is not None:
        features.append("dt_bias")
    if dt_softplus:
        features.append("softplus")
    lo, hi = float(dt_limit[0]), float(dt_limit[1])
    if (lo, hi) != (0.0, math.inf):
        features.append("dt_limit")
    if initial_states:
        features.append("initial_states")
    if seq_idx:
        features.append("seq_idx")
    if varlen:
        features.append("varlen")
    dtype = kind.io_dtype(x)
    if dtype is None:
        raise TypeError(f"x: expected dtype {kind.io_dtypes}, got {kind.dtype_text(x)}")
    _, _, h, p = kind.shape(x)
    _, _, g, n = kind.shape(B)
    return LayerSpec(
        nheads=h, headdim=p, dstate=n, ngroups=g, chunk_size=chunk_size, dtype=dtype,
        features=tuple(features),
        dt_limit=(lo, hi) if "dt_limit" in features else (0.0, math.inf))


def call_spec(kind: ArrayKind, x: Any, B: Any, chunk_size: int, D: Any, z: Any,
              dt_bias: Any, initial_states: Any, seq_idx: Any, dt_softplus: bool,
              dt_limit: tuple[float, float], varlen: bool) -> LayerSpec:
    """The kernel a call runs: layer_spec with the optional inputs it passes."""
    # The varlen kernel resets at cu_seqlens; seq_idx then only checks them.
    return layer_spec(kind, x, B, chunk_size, D=D, z=z, dt_bias=dt_bias,
                      initial_states=initial_states is not None,
                      seq_idx=seq_idx is not None and not varlen, varlen=varlen,
                      dt_softplus=dt_softplus, dt_limit=dt_limit)


def checked_call(
    kind: ArrayKind, x: Any, dt: Any, A: Any, B: Any, C: Any, chunk_size: int,
    D: Any, z: Any, dt_bias: Any, initial_states: Any, seq_idx: Any, cu_seqlens: Any,
    dt_softplus: bool, dt_limit: Any, return_varlen_states: bool,
    kernel_chunk_size: Optional[Callable[[int], int]] = None,
) -> Call:
    """mamba_chunk_scan_combined's arguments checked, with the kernel they
    need: at chunk_size, or at kernel_chunk_size(chunk_size) where given."""
    check_arguments(kind, x, dt, A, B, C, chunk_size, D, z, dt_bias, initial_states,
                    seq_idx, cu_seqlens, dt_limit, return_varlen_states)
    if kernel_chunk_size is not None:
        chunk_size = kernel_chunk_size(chunk_size)
    limit = (float(dt_limit[0]), float(dt_limit[1]))
    varlen = bool(return_varlen_states)
    b, L, h, p = kind.shape(x)
    _, _, g, n = kind.shape(B)
    spec = call_spec(kind, x, B, chunk_size, D, z, dt_bias, initial_states, seq_idx,
                     bool(dt_softplus), limit, varlen)
    return Call(batch=b, seqlen=L, nheads=h, headdim=p, ngroups=g, dstate=n,
                spec=spec, dt_limit=limit, varlen=varlen)


# ---------------------------------------------------------------------------
# Return values.
# ---------------------------------------------------------------------------

T = TypeVar("T")


def select_outputs(y: T, final_states: T, varlen_states: T, return_final_states: bool,
                   return_varlen_states: bool) -> Union[T, tuple[T, T], tuple[T, T, T]]:
    """y | (y, final_states) | (y, varlen_states) | (y, final_states, varlen_states)."""
    if return_varlen_states:
        if return_final_states:
            return y, final_states, varlen_states
        return y, varlen_states
    if return_final_states:
        return y, final_states
    return y


# ---------------------------------------------------------------------------
# The CPU kernels: libSSDCAPI's JIT on host memory, one per spec and thread
# count, shared by every front end.
# ---------------------------------------------------------------------------

CPU_KERNELS: dict[tuple[LayerSpec, int], _layer.CpuKernel] = {}
_cpu_lock = threading.Lock()


def cpu_kernel(spec: LayerSpec) -> _layer.CpuKernel:
    """spec's kernel, compiled on first use for $SSD_MLIR_CPU_THREADS threads."""
    threads = int(os.environ.get(THREADS_ENV, "0") or 0)
    key = (spec, threads)
    with _cpu_lock:
        kernel = CPU_KERNELS.get(key)
        if kernel is None:
            kernel = _layer.CpuKernel(spec, threads)
            CPU_KERNELS[key] = kernel
        return kernel


def run_cpu(spec: LayerSpec, tensors: Sequence[_layer.HostTensor]) -> None:
    """Runs spec's kernel on C-order host buffers (inputs, y, final_states)."""
    try:
        cpu_kernel(spec).run(tensors)
    except _layer.LayerError as error:
        raise RuntimeError(f"ssd_mlir CPU kernel: {error}") from None
