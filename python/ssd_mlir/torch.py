"""A drop-in for mamba_ssm's ``mamba_chunk_scan_combined`` on SSD-MLIR kernels.

    from ssd_mlir.torch import mamba_chunk_scan_combined
    y = mamba_chunk_scan_combined(x, dt, A, B, C, chunk_size=128, D=D, z=z,
                                  dt_bias=dt_bias, dt_softplus=True)

Same arguments, semantics and return values as mamba_ssm's forward. The op is
``torch.ops.ssd_mlir.chunk_scan_combined`` (torch.library.custom_op with a
fake implementation, so torch.compile(fullgraph=True) traces it); backward
raises NotImplementedError.

CPU tensors run in process: the layer is JIT-compiled once through libSSDCAPI
(the CPU pipeline on MLIR's ExecutionEngine) per (static sizes, features,
dtype, chunk size, dt_limit) and reused for every batch and length.

CUDA tensors launch an artifact through libSSDRuntime on
torch.cuda.current_stream(), with the workspace from PyTorch's allocator.
Artifacts are cached per (static sizes, features, dtype, chunk size,
compute capability): loaded from $SSD_MLIR_ARTIFACTS (folders named by
``artifact_name``), else compiled on demand into $SSD_MLIR_CACHE where
libSSDCAPI (MLIR) is present; otherwise the error gives the ssd-compile
command that builds the missing artifact.

The chunk size is a blocking of the computation, not part of its result
(outputs agree across chunk sizes to rounding, within the golden bounds), so
CUDA tensors run the GPU kernel at the chunk size it is fastest at, 128,
whatever chunk_size asks (Mamba-2 models ask 256, where the fused kernel is
1.4x slower); $SSD_MLIR_CHUNK_SIZE=requested runs the requested one, and a
power of two from 16 to 1024 there runs that one. ``kernel_spec`` gives the
GPU kernel a call runs. CPU tensors run at most chunk 64, the CPU kernels'
fastest (Mamba-2's 256 takes 1.56x as long there), with the same
$SSD_MLIR_CHUNK_SIZE settings.
"""

# No `from __future__ import annotations`: torch.library infers the op's
# schema from the annotations at run time.
import math
import os
import pathlib
import shlex
import threading
from typing import Any, Optional, Tuple, Union

import torch
from torch import Tensor

from . import _combined, _layer
from ._layer import LayerSpec
from ._library import LibraryNotFoundError

__all__ = [
    "ARTIFACTS_ENV",
    "CACHE_ENV",
    "CHUNK_SIZE_ENV",
    "TUNED_CHUNK_SIZE",
    "ArtifactNotFoundError",
    "artifact_name",
    "compile_command",
    "kernel_chunk_size",
    "kernel_spec",
    "layer_spec",
    "mamba_chunk_scan_combined",
]

ARTIFACTS_ENV = "SSD_MLIR_ARTIFACTS"
CACHE_ENV = "SSD_MLIR_CACHE"
THREADS_ENV = _combined.THREADS_ENV
CHUNK_SIZE_ENV = _combined.CHUNK_SIZE_ENV
# The fused Hopper kernel's fastest chunk size: the Mamba-2 2.7B layer (bf16,
# H200, c5de1fa) takes 0.149 / 0.634 / 4.61 / 4.67 ms at chunk 128 against
# 0.202 / 0.870 / 6.33 / 6.38 at 256 (b1 2K / 16K / 128K, b8 16K).
TUNED_CHUNK_SIZE = 128

_IO_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}


class ArtifactNotFoundError(RuntimeError):
    """No GPU artifact for a layer, and no compiler here to build one."""


# ---------------------------------------------------------------------------
# Argument checks (ssd_mlir._combined, shared with ssd_mlir.numpy). Each
# message names the argument, what was expected and what was given; they run
# in the Python wrapper, so under torch.compile they become guards on shapes
# and dtypes rather than graph breaks.
# ---------------------------------------------------------------------------


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(int(d) for d in t.shape)


class _TorchKind(_combined.ArrayKind):
    array_type = "a torch.Tensor"
    io_dtypes = "torch.float32, torch.bfloat16 or torch.float16"
    index_dtype = "torch.int32"

    def is_array(self, value: Any) -> bool:
        return isinstance(value, torch.Tensor)

    def io_dtype(self, t: Any) -> Optional[str]:
        return _IO_DTYPES.get(t.dtype)

    def is_float(self, t: Any) -> bool:
        return bool(t.dtype.is_floating_point)

    def is_index(self, t: Any) -> bool:
        return t.dtype in (torch.int32, torch.int64)

    def device(self, t: Any) -> Any:
        return t.device


_TORCH = _TorchKind()


# ---------------------------------------------------------------------------
# Specs and artifact names.
# ---------------------------------------------------------------------------


def layer_spec(
    x: Tensor, B: Tensor, chunk_size: int, D: Optional[Tensor] = None,
    z: Optional[Tensor] = None, dt_bias: Optional[Tensor] = None,
    initial_states: bool = False, seq_idx: bool = False, varlen: bool = False,
    dt_softplus: bool = False, dt_limit: tuple[float, float] = (0.0, math.inf),
) -> LayerSpec:
    """The kernel a call with these arguments needs (sizes from x and B)."""
    return _combined.layer_spec(_TORCH, x, B, chunk_size, D=D, z=z, dt_bias=dt_bias,
                                initial_states=initial_states, seq_idx=seq_idx,
                                varlen=varlen, dt_softplus=dt_softplus,
                                dt_limit=dt_limit)


def kernel_chunk_size(chunk_size: int) -> int:
    """The chunk size the GPU kernels run for a call that asks chunk_size:
    TUNED_CHUNK_SIZE, unless $SSD_MLIR_CHUNK_SIZE says `requested` (then
    chunk_size) or names a power of two (then that)."""
    return _combined.kernel_chunk_size(chunk_size, TUNED_CHUNK_SIZE)


# Checked calls by what the checks read (_call_key), so that a layer called
# again with the same shapes is not checked again; emptied when full.
_checked_calls: dict[tuple[Any, ...], _combined.Call] = {}
_CHECKED_CALLS = 1024
# Exact types whose shape, dtype and device are what they say (a model's D
# and dt_bias are parameters).
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def _call_key(tensors: Tuple[Any, ...], chunk_size: Any, dt_softplus: Any,
              dt_limit: Any, return_varlen_states: Any) -> Optional[tuple[Any, ...]]:
    """Everything the argument checks and the kernel choice read: each
    tensor's shape, dtype and device, the scalars with their types, and
    $SSD_MLIR_CHUNK_SIZE. None where an argument is not plainly a tensor,
    None or a scalar of the expected type (a subclass such as torch.compile's
    fake tensors, or a wrong type): such a call is checked in full."""
    parts: list[Optional[tuple[Any, ...]]] = []
    for t in tensors:
        if t is None:
            parts.append(None)
        elif type(t) in _PLAIN_TENSORS:
            parts.append((t.shape, t.dtype, t.device))
        else:
            return None
    if (type(chunk_size) is not int or type(dt_softplus) is not bool
            or type(return_varlen_states) is not bool or type(dt_limit) is not tuple
            or len(dt_limit) != 2 or not all(type(v) in (int, float) for v in dt_limit)):
        return None
    return (tuple(parts), chunk_size, dt_softplus, dt_limit,
            tuple(type(v) for v in dt_limit), return_varlen_states,
            os.environ.get(CHUNK_SIZE_ENV))


def _checked_call(
    x: Tensor, dt: Tensor, A: Tensor, B: Tensor, C: Tensor, chunk_size: int,
    D: Optional[Tensor], z: Optional[Tensor], dt_bias: Optional[Tensor],
    initial_states: Optional[Tensor], seq_idx: Optional[Tensor],
    cu_seqlens: Optional[Tensor], dt_softplus: bool, dt_limit: Any,
    return_varlen_states: bool,
) -> _combined.Call:
    """The arguments checked (chunk_size as asked), with the kernel the call
    runs (at kernel_chunk_size(chunk_size)); a refused call raises every time."""
    key = _call_key((x, dt, A, B, C, D, z, dt_bias, initial_states, seq_idx, cu_seqlens),
                    chunk_size, dt_softplus, dt_limit, return_varlen_states)
    call = _checked_calls.get(key) if key is not None else None
    if call is None:
        call = _combined.checked_call(_TORCH, x, dt, A, B, C, chunk_size, D, z, dt_bias,
                                      initial_states, seq_idx, cu_seqlens, dt_softplus,
                                      dt_limit, return_varlen_states, kernel_chunk_size)
        if key is not None:
            if len(_checked_calls) >= _CHECKED_CALLS:
                _checked_calls.clear()
            _checked_calls[key] = call
    return call


def kernel_spec(
    x: Tensor, dt: Tensor, A: Tensor, B: Tensor, C: Tensor, chunk_size: int,
    D: Optional[Tensor] = None, z: Optional[Tensor] = None,
    dt_bias: Optional[Tensor] = None, initial_states: Optional[Tensor] = None,
    seq_idx: Optional[Tensor] = None, cu_seqlens: Optional[Tensor] = None,
    dt_softplus: bool = False, dt_limit: Tuple[float, float] = (0.0, float("inf")),
    return_final_states: bool = False, return_varlen_states: bool = False,
) -> LayerSpec:
    """The kernel that mamba_chunk_scan_combined(same arguments) runs on a
    GPU (at kernel_chunk_size(chunk_size)); with artifact_name and
    compile_command it says which artifact to build ahead of time for a GPU
    machine without MLIR."""
    return _checked_call(x, dt, A, B, C, chunk_size, D, z, dt_bias, initial_states,
                         seq_idx, cu_seqlens, dt_softplus, dt_limit,
                         return_varlen_states).spec


_targets: dict[torch.device, str] = {}


def _target_of(device: torch.device) -> str:
    target = _targets.get(device)
    if target is None:
        major, minor = torch.cuda.get_device_capability(device)
        # Hopper's kernels use sm_90a-only instructions (wgmma, setmaxnreg).
        target = f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")
        _targets[device] = target
    return target


def artifact_name(spec: LayerSpec, target: str = "sm_90a") -> str:
    """The folder name under $SSD_MLIR_ARTIFACTS that holds spec's artifact."""
    return spec.folder_name(target)


def compile_command(spec: LayerSpec, target: str = "sm_90a",
                    out_root: str = f"${ARTIFACTS_ENV}") -> str:
    """The ssd-compile command that writes spec's artifact where it is looked up."""
    out = f"{out_root}/{artifact_name(spec, target)}"
    words = ["ssd-compile", *spec.compile_flags(), "--target", target, "-o"]
    return " ".join(shlex.quote(w) for w in words) + " " + out


# ---------------------------------------------------------------------------
# CPU path: libSSDCAPI's JIT kernel on host memory.
# ---------------------------------------------------------------------------

# The kernels are ssd_mlir._combined's, shared with ssd_mlir.numpy.
_cpu_kernels = _combined.CPU_KERNELS


def _host(name: str, t: Tensor, dtype: str) -> _layer.HostTensor:
    return _layer.HostTensor(name, t.data_ptr(), dtype, _shape(t))


def _run_cpu(spec: LayerSpec, inputs: dict[str, Tensor], y: Tensor,
             states: Tensor) -> None:
    names = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
             torch.int32: "i32"}
    tensors = [_host(name, t, names[t.dtype]) for name, t in inputs.items()]
    tensors.append(_host("y", y, names[y.dtype]))
    tensors.append(_host("final_states", states, names[states.dtype]))
    _combined.run_cpu(spec, tensors)


# ---------------------------------------------------------------------------
# GPU path: libSSDRuntime on torch's current stream.
# ---------------------------------------------------------------------------

_artifacts: dict[tuple[LayerSpec, str], Any] = {}
_gpu_lock = threading.Lock()


def _cache_root() -> pathlib.Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return pathlib.Path(configured).expanduser()
    return pathlib.Path.home() / ".cache" / "ssd_mlir" / "artifacts"


def _find_or_compile(spec: LayerSpec, target: str) -> str:
    name = artifact_name(spec, target)
    roots = [r for r in os.environ.get(ARTIFACTS_ENV, "").split(os.pathsep) if r]
    for root in roots:
        folder = pathlib.Path(root).expanduser() / name
        if (folder / "manifest.json").is_file():
            return str(folder)
    folder = _cache_root() / name
    if (folder / "manifest.json").is_file():
        return str(folder)
    try:
        _layer.lib()
    except LibraryNotFoundError:
        looked = ", ".join(roots) or f"(${ARTIFACTS_ENV} is not set)"
        raise ArtifactNotFoundError(
            f"no SSD-MLIR artifact {name} for this layer (looked in {looked} and "
            f"{folder.parent}), and libSSDCAPI (the compiler) is not available "
            f"here to build one. Where MLIR is installed, run\n  "
            f"{compile_command(spec, target)}\nand set {ARTIFACTS_ENV} to that "
            f"folder on this machine (chunk {spec.chunk_size} is the chunk size the "
            f"kernels run: see ${CHUNK_SIZE_ENV}).") from None
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Written under a private name, then renamed: another process may race.
    partial = folder.parent / f".{name}.{os.getpid()}.{threading.get_ident()}"
    try:
        _layer.compile_artifact(spec, str(partial), target=target)
    except _layer.LayerError as error:
        raise RuntimeError(
            f"ssd_mlir: compiling {name} failed ({compile_command(spec, target)}): "
            f"{error}") from None
    try:
        partial.rename(folder)
    except OSError:
        if not (folder / "manifest.json").is_file():
            raise
    return str(folder)


def _artifact(spec: LayerSpec, device: torch.device) -> Any:
    from . import _runtime

    target = _target_of(device)
    key = (spec, target)
    with _gpu_lock:
        artifact = _artifacts.get(key)
        if artifact is None:
            artifact = _runtime.Artifact(_find_or_compile(spec, target))
            _artifacts[key] = artifact
        return artifact


def _dense(t: Tensor) -> Tensor:
    return t.contiguous()


def _takes_view(t: Tensor, layout: str, alignment: int) -> bool:
    """Whether a kernel whose manifest gives this tensor `layout` and
    `alignment` reads t in place: under `inner_contiguous` the innermost
    stride is 1 and the rows start on the boundaries the dense layout gives
    them (mamba_ssm's x/B/C/z/dt views of one projection, for instance).
    The runtime checks the same rule."""
    if layout != "inner_contiguous" or t.data_ptr() % alignment:
        return False
    sizes, strides, size = t.shape, t.stride(), t.element_size()
    if sizes and sizes[-1] > 1 and strides[-1] != 1:
        return False
    outer = [d for d in range(len(sizes) - 1) if sizes[d] > 1]
    row_align, dense = alignment, 1
    for d in range(len(sizes) - 1, -1, -1):
        if d in outer:
            row_align = math.gcd(row_align, dense * size)
        dense *= sizes[d]
    return all(strides[d] * size % row_align == 0 for d in outer)


def _as_taken(t: Tensor, layout: str, alignment: int) -> Tensor:
    """t itself where the kernel takes it as it is, else one dense copy
    aligned as the manifest asks."""
    if not t.numel() or _takes_view(t, layout, alignment):
        return t
    t = t.contiguous()
    if t.data_ptr() % alignment:
        t = t.clone()
    return t


_RUNTIME_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
                   torch.int32: "i32"}


def _run_gpu(spec: LayerSpec, inputs: dict[str, Tensor], y: Tensor,
             states: Tensor) -> None:
    from . import _runtime

    device = y.device
    index = device.index if device.index is not None else torch.cuda.current_device()
    with torch.cuda.device(index):
        artifact = _artifact(spec, device)
        all_tensors = {
            name: _as_taken(t, *artifact.layouts.get(name, ("contiguous", 16)))
            for name, t in inputs.items()}
        all_tensors.update(y=y, final_states=states)  # fresh, dense, aligned
        # Everything the runtime's tensor descriptions are made of: a repeated
        # call (the same buffers, as a caching allocator hands them back)
        # reuses its packed arguments and workspace size.
        key = (index, *((name, t.data_ptr(), t.dtype, t.shape, t.stride())
                        for name, t in all_tensors.items()))

        def describe() -> list[Any]:
            return [_runtime.DeviceTensor(name, t.data_ptr(), _RUNTIME_DTYPES[t.dtype],
                                          _shape(t), [int(s) for s in t.stride()],
                                          index)
                    for name, t in all_tensors.items()]

        try:
            packed, size = artifact.prepared(key, describe)
            workspace = torch.empty(max(size, 1), dtype=torch.uint8, device=device)
            stream = torch.cuda.current_stream(device).cuda_stream
            artifact.launch_prepared(packed, stream, workspace.data_ptr(), size)
        except _runtime.RuntimeError_ as error:
            raise RuntimeError(f"ssd_mlir GPU launch ({artifact.folder}): {error}") from None


# ---------------------------------------------------------------------------
# The custom op.
# ---------------------------------------------------------------------------


@torch.library.custom_op("ssd_mlir::chunk_scan_combined", mutates_args=())
def _chunk_scan_combined(
    x: Tensor, dt: Tensor, A: Tensor, B: Tensor, C: Tensor, chunk_size: int,
    D: Optional[Tensor], z: Optional[Tensor], dt_bias: Optional[Tensor],
    initial_states: Optional[Tensor], seq_idx: Optional[Tensor],
    cu_seqlens: Optional[Tensor], dt_softplus: bool, dt_limit_lo: float,
    dt_limit_hi: float, varlen: bool,
) -> Tuple[Tensor, Tensor, Tensor]:
    """(y, final_states (b, h, p, n) f32, varlen_states (s, h, p, n) in C's
    dtype, or (0, h, p, n) without varlen)."""
    b, L, h, p = _shape(x)
    n = int(B.shape[3])
    s = int(cu_seqlens.shape[0]) - 1 if varlen and cu_seqlens is not None else 0
    y = torch.empty((b, L, h, p), dtype=x.dtype, device=x.device)
    final = torch.empty((b, h, p, n), dtype=torch.float32, device=x.device)
    if b == 0 or L == 0:
        # No token: every state passes through (the kernels take no empty extent).
        start = (initial_states.float() if initial_states is not None
                 else torch.zeros_like(final))
        final.copy_(start)
        if not varlen:
            return y, final, torch.empty((0, h, p, n), dtype=C.dtype, device=x.device)
        seqs = torch.zeros((s, h, p, n), dtype=torch.float32, device=x.device)
        seqs[:1] = start[:1]
        return y, final, seqs.to(C.dtype)

    spec = _combined.call_spec(_TORCH, x, B, chunk_size, D, z, dt_bias,
                               initial_states, seq_idx, dt_softplus,
                               (dt_limit_lo, dt_limit_hi), varlen)
    cuda = x.device.type == "cuda"
    if not cuda and x.device.type != "cpu":
        raise NotImplementedError(
            f"ssd_mlir.torch.mamba_chunk_scan_combined runs on CPU and CUDA tensors, "
            f"got {x.device}")
    # CUDA inputs are fitted to the artifact's layouts once it is loaded.
    prepare = (lambda t: t) if cuda else _dense
    inputs: dict[str, Tensor] = {
        "x": prepare(x),
        "dt": prepare(dt.to(torch.float32)),
        "A": prepare(A.to(torch.float32)),
        "B": prepare(B),
        "C": prepare(C),
    }
    if D is not None:
        inputs["D"] = prepare(D.to(torch.float32))
    if z is not None:
        inputs["z"] = prepare(z)
    if dt_bias is not None:
        inputs["dt_bias"] = prepare(dt_bias.to(torch.float32))
    if varlen:
        assert cu_seqlens is not None
        cu = prepare(cu_seqlens.to(torch.int32))
        if not cuda or not torch.cuda.is_current_stream_capturing():
            # The kernels index tokens by cu_seqlens; a host read is fine
            # outside graph capture (the CPU kernel checks again).
            _check_cu_seqlens(cu, L, seq_idx)
        if initial_states is not None:
            # mamba_ssm's initial state is the row's: the first sequence's.
            per_seq = torch.zeros((s, h, p, n), dtype=torch.float32, device=x.device)
            per_seq[:1] = initial_states[:1].to(torch.float32)
            inputs["initial_states"] = prepare(per_seq)
        inputs["cu_seqlens"] = cu
        seqs = torch.empty((s, h, p, n), dtype=torch.float32, device=x.device)
        (_run_gpu if cuda else _run_cpu)(spec, inputs, y, seqs)
        # The row's final state is that of its last non-empty sequence.
        lengths = cu[1:] - cu[:-1]
        order = torch.arange(s, device=x.device)
        last = torch.where(lengths > 0, order, torch.full_like(order, -1)).max()
        final.copy_(seqs.index_select(0, last.reshape(1)))
        return y, final, seqs.to(C.dtype)
    if initial_states is not None:
        inputs["initial_states"] = prepare(initial_states.to(torch.float32))
    if seq_idx is not None:
        inputs["seq_idx"] = prepare(seq_idx.to(torch.int32))
    (_run_gpu if cuda else _run_cpu)(spec, inputs, y, final)
    return y, final, torch.empty((0, h, p, n), dtype=C.dtype, device=x.device)


def _check_cu_seqlens(cu: Tensor, seqlen: int, seq_idx: Optional[Tensor]) -> None:
    _combined.check_cu_seqlens(
        [int(v) for v in cu.cpu().tolist()], seqlen,
        None if seq_idx is None else [int(v) for v in seq_idx[0].cpu().tolist()])


@_chunk_scan_combined.register_fake
def _(
    x: Tensor, dt: Tensor, A: Tensor, B: Tensor, C: Tensor, chunk_size: int,
    D: Optional[Tensor], z: Optional[Tensor], dt_bias: Optional[Tensor],
    initial_states: Optional[Tensor], seq_idx: Optional[Tensor],
    cu_seqlens: Optional[Tensor], dt_softplus: bool, dt_limit_lo: float,
    dt_limit_hi: float, varlen: bool,
) -> Tuple[Tensor, Tensor, Tensor]:
    b, L, h, p = x.shape
    n = B.shape[3]
    s = cu_seqlens.shape[0] - 1 if varlen and cu_seqlens is not None else 0
    return (x.new_empty((b, L, h, p)),
            x.new_empty((b, h, p, n), dtype=torch.float32),
            x.new_empty((s, h, p, n), dtype=C.dtype))


def _backward(ctx: Any, *grads: Any) -> Any:
    raise NotImplementedError(
        "ssd_mlir.torch.mamba_chunk_scan_combined has no backward: SSD-MLIR "
        "compiles the forward only (the backward kernels for dx, ddt, dA, dB, "
        "dC, dD, dz, ddt_bias and dinitial_states are not written yet); use "
        "mamba_ssm's op for training")


torch.library.register_autograd("ssd_mlir::chunk_scan_combined", _backward)


def mamba_chunk_scan_combined(
    x: Tensor, dt: Tensor, A: Tensor, B: Tensor, C: Tensor, chunk_size: int,
    D: Optional[Tensor] = None, z: Optional[Tensor] = None,
    dt_bias: Optional[Tensor] = None, initial_states: Optional[Tensor] = None,
    seq_idx: Optional[Tensor] = None, cu_seqlens: Optional[Tensor] = None,
    dt_softplus: bool = False, dt_limit: tuple[float, float] = (0.0, float("inf")),
    return_final_states: bool = False, return_varlen_states: bool = False,
) -> Union[Tensor, tuple[Tensor, Tensor], tuple[Tensor, Tensor, Tensor]]:
    """mamba_ssm's ``mamba_chunk_scan_combined`` forward on SSD-MLIR.

    x (b, L, h, p); dt (b, L, h); A (h,); B, C (b, L, g, n); D (h,) or (h, p);
    z like x; dt_bias (h,); initial_states (b, h, p, n); seq_idx (b, L) int32;
    cu_seqlens (num_sequences + 1,), read only with return_varlen_states.

    x, B, C and z share one dtype (float32, bfloat16 or float16); dt, A, D,
    dt_bias and initial_states may be any float dtype (computed in float32).

    Returns y (like x); with return_final_states also the final states
    (b, h, p, n) in float32; with return_varlen_states the state at the end
    of every sequence of cu_seqlens (num_sequences, h, p, n) in C's dtype:
    y | (y, final_states) | (y, varlen_states) | (y, final_states, varlen_states).

    With return_varlen_states every sequence of cu_seqlens is computed from
    its own start (the first from initial_states), as mamba_ssm does when
    seq_idx marks the same sequences; a seq_idx that disagrees is refused
    where it can be read without a device sync.
    """
    call = _checked_call(x, dt, A, B, C, chunk_size, D, z, dt_bias, initial_states,
                         seq_idx, cu_seqlens, dt_softplus, dt_limit,
                         return_varlen_states)
    lo, hi = call.dt_limit
    # The CPU kernels run at most their own largest chunk size.
    chunk = (_combined.cpu_kernel_chunk_size(chunk_size) if x.device.type == "cpu"
             else call.spec.chunk_size)
    outputs: Tuple[Tensor, Tensor, Tensor] = _chunk_scan_combined(
        x, dt, A, B, C, chunk, D, z, dt_bias, initial_states, seq_idx,
        cu_seqlens if return_varlen_states else None, bool(dt_softplus), lo, hi,
        call.varlen)
    y, final_states, varlen_states = outputs
    return _combined.select_outputs(y, final_states, varlen_states,
                                    return_final_states, return_varlen_states)
