"""ctypes over ssd-c/Layer.h: whole layers compiled for the CPU, GPU
artifacts compiled in process, and the project's reference recurrence.

Everything here takes host memory by address; the callers (ssd_mlir.torch)
own the buffers and keep them alive across each call.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import _capi, _library

# SsdRtDType (ssd-c/Runtime.h).
DTYPE_CODES = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3, "i8": 4, "u8": 5,
               "i32": 6, "i64": 7}

# ssd-compile --features, in its canonical order.
KNOWN_FEATURES = ("D", "Dhp", "z", "dt_bias", "softplus", "dt_limit",
                  "initial_states", "seq_idx", "varlen")


class LayerError(RuntimeError):
    """A layer could not be compiled or run; the message is the C API's."""


@dataclass(frozen=True)
class LayerSpec:
    """What a kernel is specialised on (ssd-compile's layer flags)."""

    nheads: int
    headdim: int
    dstate: int
    ngroups: int
    chunk_size: int
    dtype: str = "f32"
    state_dtype: str = "f32"
    features: tuple[str, ...] = ()
    dt_limit: tuple[float, float] = (0.0, math.inf)

    def feature_list(self) -> str:
        return ",".join(f for f in KNOWN_FEATURES if f in self.features)

    def compile_flags(self) -> list[str]:
        """The layer flags of the equivalent ssd-compile command."""
        flags = ["--nheads", str(self.nheads), "--headdim", str(self.headdim),
                 "--dstate", str(self.dstate), "--ngroups", str(self.ngroups),
                 "--chunk-size", str(self.chunk_size), "--dtype", self.dtype,
                 "--state-dtype", self.state_dtype]
        if self.features:
            flags += ["--features", self.feature_list()]
        if "dt_limit" in self.features:
            lo, hi = self.dt_limit
            flags += ["--dt-limit", f"{lo!r},{'inf' if math.isinf(hi) else repr(hi)}"]
        return flags

    def folder_name(self, target: str) -> str:
        """A file name that differs for every distinct spec and target."""
        name = (f"h{self.nheads}-p{self.headdim}-n{self.dstate}-g{self.ngroups}"
                f"-q{self.chunk_size}-{self.dtype}-s{self.state_dtype}")
        name += "-" + (self.feature_list().replace(",", "_") or "plain")
        if "dt_limit" in self.features:
            lo, hi = self.dt_limit
            name += f"-lim{lo!r}_{'inf' if math.isinf(hi) else repr(hi)}"
        return f"{name}-{target}"


class _CSpec(ctypes.Structure):
    _fields_ = [
        ("nheads", ctypes.c_int64), ("headdim", ctypes.c_int64),
        ("dstate", ctypes.c_int64), ("ngroups", ctypes.c_int64),
        ("chunkSize", ctypes.c_int64), ("dtype", ctypes.c_char_p),
        ("stateDtype", ctypes.c_char_p), ("features", ctypes.c_char_p),
        ("dtLimitLo", ctypes.c_double), ("dtLimitHi", ctypes.c_double),
    ]

    @classmethod
    def of(cls, spec: LayerSpec) -> _CSpec:
        lo, hi = spec.dt_limit
        return cls(spec.nheads, spec.headdim, spec.dstate, spec.ngroups,
                   spec.chunk_size, spec.dtype.encode(), spec.state_dtype.encode(),
                   spec.feature_list().encode(), lo, hi)


class _CTensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p), ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
    ]


@dataclass
class HostTensor:
    """A C-order host array handed to the C API by address."""

    name: str
    address: int
    dtype: str
    shape: Sequence[int]


@dataclass
class _Packed:
    array: Any
    keep: list[Any] = field(default_factory=list)


def _pack(tensors: Iterable[HostTensor]) -> _Packed:
    items = list(tensors)
    array = (_CTensor * max(len(items), 1))()
    keep: list[Any] = []
    for slot, t in zip(array, items):
        shape = (ctypes.c_int64 * max(len(t.shape), 1))(*t.shape)
        name = t.name.encode()
        keep += [shape, name]
        slot.name = name
        slot.data = t.address or None
        slot.dtype = DTYPE_CODES[t.dtype]
        slot.rank = len(t.shape)
        slot.shape = shape
    return _Packed(array, keep)


_MessagePtr = ctypes.POINTER(ctypes.c_char_p)

_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "ssdLayerFreeMessage": (None, [ctypes.c_void_p]),
    "ssdLayerSpecValidate": (ctypes.c_int, [ctypes.POINTER(_CSpec), ctypes.c_void_p]),
    "ssdCpuKernelCreate": (ctypes.c_int, [ctypes.POINTER(_CSpec), ctypes.c_int32,
                                          ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.c_void_p]),
    "ssdCpuKernelDestroy": (None, [ctypes.c_void_p]),
    "ssdCpuKernelRun": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(_CTensor),
                                       ctypes.c_size_t, ctypes.c_void_p]),
    "ssdLayerCompileArtifact": (ctypes.c_int, [ctypes.POINTER(_CSpec),
                                               ctypes.c_char_p, ctypes.c_char_p,
                                               ctypes.c_char_p, ctypes.c_void_p]),
    "ssdLayerReference": (ctypes.c_int, [ctypes.POINTER(_CSpec),
                                         ctypes.POINTER(_CTensor), ctypes.c_size_t,
                                         ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_void_p]),
}

@_library.once
def lib() -> ctypes.CDLL:
    """libSSDCAPI with the layer functions declared."""
    loaded = _capi.lib()
    _library.declare(loaded, _PROTOTYPES, "ssd-c/Layer.h")
    return loaded


def _call(function: Any, *args: Any) -> None:
    """Calls a C function whose last argument is `char **error`."""
    message = ctypes.c_void_p()
    if function(*args, ctypes.byref(message)) == 0:
        return
    text = "unknown error"
    if message.value:
        text = ctypes.string_at(message.value).decode("utf-8", errors="replace")
        lib().ssdLayerFreeMessage(message)
    raise LayerError(text)


def validate(spec: LayerSpec) -> None:
    cspec = _CSpec.of(spec)
    _call(lib().ssdLayerSpecValidate, ctypes.byref(cspec))


class CpuKernel:
    """A layer JIT-compiled for this CPU (dynamic batch and seqlen)."""

    def __init__(self, spec: LayerSpec, threads: int = 0) -> None:
        self.spec = spec
        self._lib = lib()
        handle = ctypes.c_void_p()
        cspec = _CSpec.of(spec)
        _call(self._lib.ssdCpuKernelCreate, ctypes.byref(cspec), threads,
              ctypes.byref(handle))
        self._handle: int | None = handle.value

    def run(self, tensors: Sequence[HostTensor]) -> None:
        if self._handle is None:
            raise LayerError("the kernel was destroyed")
        packed = _pack(tensors)
        _call(self._lib.ssdCpuKernelRun, self._handle, packed.array, len(tensors))

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.ssdCpuKernelDestroy(handle)


def compile_artifact(spec: LayerSpec, out_dir: str, target: str = "sm_90a",
                     strategy: str = "fused") -> None:
    """ssd-compile's artifact for `spec`, written to `out_dir`."""
    cspec = _CSpec.of(spec)
    _call(lib().ssdLayerCompileArtifact, ctypes.byref(cspec), target.encode(),
          strategy.encode(), out_dir.encode())


def reference(spec: LayerSpec, tensors: Sequence[HostTensor], y_address: int,
              states_address: int) -> None:
    """The reference recurrence; writes float64 y and final states."""
    cspec = _CSpec.of(spec)
    packed = _pack(tensors)
    _call(lib().ssdLayerReference, ctypes.byref(cspec), packed.array, len(tensors),
          y_address, states_address)
