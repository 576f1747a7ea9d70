"""mamba_ssm's ``mamba_chunk_scan_combined`` on numpy arrays, in process.

    from ssd_mlir.numpy import mamba_chunk_scan_combined
    y = mamba_chunk_scan_combined(x, dt, A, B, C, chunk_size=128, D=D, z=z,
                                  dt_bias=dt_bias, dt_softplus=True)

The same arguments, semantics, checks and return values as
ssd_mlir.torch.mamba_chunk_scan_combined (mamba_ssm's forward), taking and
returning numpy arrays; it needs numpy only, never PyTorch. The layer runs on
the CPU through libSSDCAPI (the CPU pipeline, JIT-compiled by MLIR's
ExecutionEngine), compiled once per (static sizes, features, dtype, chunk
size, dt_limit) and reused for every batch and length; the kernels are the
ones ssd_mlir.torch runs on CPU tensors (one cache serves both). As there,
the kernels run at most chunk 64, the CPU's fastest (chunk_size changes
rounding, never the result); $SSD_MLIR_CHUNK_SIZE=requested runs the asked
one, and a power of two from 16 to 1024 there runs that one.

x, B, C and z are float32 or float16 (numpy has no bfloat16 dtype; bfloat16
layers run through ssd_mlir.torch).
"""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _combined, _layer

__all__ = ["mamba_chunk_scan_combined"]

Array = npt.NDArray[Any]

_IO_DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16"}
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_CODES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
          np.dtype(np.int32): "i32"}


def _native(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return dtype.newbyteorder("=")


class _NumpyKind(_combined.ArrayKind):
    array_type = "a numpy.ndarray"
    io_dtypes = ("float32 or float16 (numpy has no bfloat16; ssd_mlir.torch runs "
                 "bfloat16)")
    index_dtype = "int32"

    def is_array(self, value: Any) -> bool:
        return isinstance(value, np.ndarray)

    def io_dtype(self, t: Any) -> Optional[str]:
        return _IO_DTYPES.get(_native(t.dtype))

    def is_float(self, t: Any) -> bool:
        return bool(t.dtype.kind == "f")

    def is_index(self, t: Any) -> bool:
        return _native(t.dtype) in _INDEX_DTYPES


_NUMPY = _NumpyKind()


def _buffer(t: Array, dtype: np.dtype[Any]) -> Array:
    """t as a C-order, aligned, native-endian array of dtype: t itself where
    it is one, else a copy."""
    return np.require(t, dtype=dtype, requirements=("C_CONTIGUOUS", "ALIGNED"))


def _host(name: str, t: Array) -> _layer.HostTensor:
    return _layer.HostTensor(name, int(t.ctypes.data), _CODES[t.dtype],
                             tuple(int(d) for d in t.shape))


def mamba_chunk_scan_combined(
    x: Array, dt: Array, A: Array, B: Array, C: Array, chunk_size: int,
    D: Optional[Array] = None, z: Optional[Array] = None,
    dt_bias: Optional[Array] = None, initial_states: Optional[Array] = None,
    seq_idx: Optional[Array] = None, cu_seqlens: Optional[Array] = None,
    dt_softplus: bool = False, dt_limit: tuple[float, float] = (0.0, float("inf")),
    return_final_states: bool = False, return_varlen_states: bool = False,
) -> Union[Array, tuple[Array, Array], tuple[Array, Array, Array]]:
    """mamba_ssm's ``mamba_chunk_scan_combined`` forward on numpy arrays.

    x (b, L, h, p); dt (b, L, h); A (h,); B, C (b, L, g, n); D (h,) or (h, p);
    z like x; dt_bias (h,); initial_states (b, h, p, n); seq_idx (b, L) int32
    or int64; cu_seqlens (num_sequences + 1,) int32 or int64, read only with
    return_varlen_states.

    x, B, C and z share one dtype, float32 or float16 (numpy has no
    bfloat16); dt, A, D, dt_bias and initial_states may be any float dtype
    (computed in float32). Arrays that are not C-contiguous, aligned and
    native-endian (strided views, for instance) are accepted and copied once.

    Returns y (x's dtype); with return_final_states also the final states
    (b, h, p, n) in float32; with return_varlen_states the state at the end
    of every sequence of cu_seqlens (num_sequences, h, p, n) in C's dtype:
    y | (y, final_states) | (y, varlen_states) | (y, final_states, varlen_states).

    With return_varlen_states (batch 1) every sequence of cu_seqlens is
    computed from its own start (the first from initial_states), as mamba_ssm
    does when seq_idx marks the same sequences; a seq_idx that disagrees is
    refused. Errors (TypeError, ValueError) name the argument, the expected
    and the actual shape or dtype.
    """
    call = _combined.checked_call(_NUMPY, x, dt, A, B, C, chunk_size, D, z, dt_bias,
                                  initial_states, seq_idx, cu_seqlens, dt_softplus,
                                  dt_limit, return_varlen_states,
                                  _combined.cpu_kernel_chunk_size)
    b, L, h, p, n = call.batch, call.seqlen, call.nheads, call.headdim, call.dstate
    io = _native(x.dtype)
    states_dtype = _native(C.dtype)  # varlen states come back in C's dtype
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    s = int(cu_seqlens.shape[0]) - 1 if call.varlen and cu_seqlens is not None else 0
    y = np.empty((b, L, h, p), dtype=io)
    final = np.empty((b, h, p, n), dtype=f32)

    def outputs(varlen_states: Array) -> Union[Array, tuple[Array, Array],
                                               tuple[Array, Array, Array]]:
        return _combined.select_outputs(y, final, varlen_states, return_final_states,
                                        return_varlen_states)

    if b == 0 or L == 0:
        # No token: every state passes through (the kernels take no empty extent).
        final[...] = 0.0 if initial_states is None else initial_states
        if not call.varlen:
            return outputs(np.empty((0, h, p, n), dtype=states_dtype))
        seqs = np.zeros((s, h, p, n), dtype=f32)
        seqs[:1] = final[:1]
        return outputs(seqs.astype(states_dtype))

    inputs: dict[str, Array] = {
        "x": _buffer(x, io),
        "dt": _buffer(dt, f32),
        "A": _buffer(A, f32),
        "B": _buffer(B, io),
        "C": _buffer(C, io),
    }
    if D is not None:
        inputs["D"] = _buffer(D, f32)
    if z is not None:
        inputs["z"] = _buffer(z, io)
    if dt_bias is not None:
        inputs["dt_bias"] = _buffer(dt_bias, f32)
    if call.varlen:
        assert cu_seqlens is not None
        cu = _buffer(cu_seqlens, i32)
        _combined.check_cu_seqlens(
            [int(v) for v in cu], L,
            None if seq_idx is None else [int(v) for v in seq_idx[0]])
        if initial_states is not None:
            # mamba_ssm's initial state is the row's: the first sequence's.
            per_seq = np.zeros((s, h, p, n), dtype=f32)
            per_seq[:1] = initial_states[:1]
            inputs["initial_states"] = per_seq
        inputs["cu_seqlens"] = cu
        seqs = np.empty((s, h, p, n), dtype=f32)
        _run(call, inputs, y, seqs)
        # The row's final state is that of its last non-empty sequence.
        nonempty = np.flatnonzero(cu[1:] > cu[:-1])
        final[...] = seqs[int(nonempty[-1])]
        return outputs(seqs.astype(states_dtype, copy=False))
    if initial_states is not None:
        inputs["initial_states"] = _buffer(initial_states, f32)
    if seq_idx is not None:
        inputs["seq_idx"] = _buffer(seq_idx, i32)
    _run(call, inputs, y, final)
    return outputs(np.empty((0, h, p, n), dtype=states_dtype))


def _run(call: _combined.Call, inputs: dict[str, Array], y: Array,
         states: Array) -> None:
    tensors = [_host(name, t) for name, t in inputs.items()]
    tensors += [_host("y", y), _host("final_states", states)]
    _combined.run_cpu(call.spec, tensors)
