"""ctypes over ssd-c/Runtime.h (libSSDRuntime): load an artifact, size its
workspace and launch it on a CUDA stream.

The runtime needs no MLIR: a GPU machine builds it alone
(cmake -DSSD_BUILD_COMPILER=OFF) and points $SSD_MLIR_RUNTIME_LIB at it.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._layer import DTYPE_CODES
from ._library import LIBRARY_ENV, LibraryNotFoundError

RUNTIME_ENV = "SSD_MLIR_RUNTIME_LIB"
RUNTIME_NAME = "libSSDRuntime.dylib" if sys.platform == "darwin" else "libSSDRuntime.so"


class RuntimeError_(RuntimeError):
    """The runtime refused or failed a call; the message is its own."""


class _CTensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p), ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("device", ctypes.c_int32),
    ]


@dataclass
class DeviceTensor:
    """A tensor in device memory, strides in elements."""

    name: str
    address: int
    dtype: str
    shape: Sequence[int]
    strides: Sequence[int]
    device: int


_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "ssdRtErrorGetMessage": (ctypes.c_char_p, [ctypes.c_void_p]),
    "ssdRtErrorDestroy": (None, [ctypes.c_void_p]),
    "ssdRtArtifactLoad": (ctypes.c_void_p, [ctypes.c_char_p,
                                            ctypes.POINTER(ctypes.c_void_p)]),
    "ssdRtArtifactDestroy": (None, [ctypes.c_void_p]),
    "ssdRtArtifactGetTarget": (ctypes.c_char_p, [ctypes.c_void_p]),
    "ssdRtArtifactGetWorkspaceSize": (ctypes.c_void_p, [
        ctypes.c_void_p, ctypes.POINTER(_CTensor), ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_uint64)]),
    "ssdRtArtifactLaunch": (ctypes.c_void_p, [
        ctypes.c_void_p, ctypes.POINTER(_CTensor), ctypes.c_size_t,
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]),
}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def _candidates() -> list[tuple[pathlib.Path, str]]:
    configured = os.environ.get(RUNTIME_ENV)
    if configured:
        path = pathlib.Path(configured).expanduser()
        return [(path / RUNTIME_NAME if path.is_dir() else path, f"${RUNTIME_ENV}")]
    found = []
    capi = os.environ.get(LIBRARY_ENV)
    if capi:
        # The runtime is built beside libSSDCAPI.
        path = pathlib.Path(capi).expanduser()
        folder = path if path.is_dir() else path.parent
        found.append((folder / RUNTIME_NAME, f"beside ${LIBRARY_ENV}"))
    repo = pathlib.Path(__file__).resolve().parent.parent.parent
    found.append((repo / "build" / "lib" / RUNTIME_NAME, "the repository's build/lib"))
    return found


def lib() -> ctypes.CDLL:
    """The loaded runtime library, its prototypes declared."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        looked = []
        for path, origin in _candidates():
            if not path.is_file():
                looked.append(f"{path} ({origin}): no such file")
                continue
            try:
                loaded = ctypes.CDLL(str(path))
            except OSError as error:
                looked.append(f"{path} ({origin}): {error}")
                continue
            for name, (restype, argtypes) in _PROTOTYPES.items():
                function = getattr(loaded, name)
                function.restype = restype
                function.argtypes = argtypes
            _lib = loaded
            return _lib
        raise LibraryNotFoundError(
            f"cannot load {RUNTIME_NAME}, the SSD-MLIR runtime.\n  "
            + "\n  ".join(looked)
            + f"\nBuild it (cmake -S . -B build-rt -DSSD_BUILD_COMPILER=OFF && "
            f"cmake --build build-rt) and set {RUNTIME_ENV} to build-rt/lib.")


def _check(error: int | None) -> None:
    if not error:
        return
    runtime = lib()
    message = runtime.ssdRtErrorGetMessage(error)
    text = message.decode("utf-8", errors="replace") if message else "unknown error"
    runtime.ssdRtErrorDestroy(error)
    raise RuntimeError_(text)


class _Packed:
    def __init__(self, tensors: Sequence[DeviceTensor]) -> None:
        self.array = (_CTensor * max(len(tensors), 1))()
        self.count = len(tensors)
        self.keep: list[Any] = []
        for slot, t in zip(self.array, tensors):
            shape = (ctypes.c_int64 * max(len(t.shape), 1))(*t.shape)
            strides = (ctypes.c_int64 * max(len(t.strides), 1))(*t.strides)
            name = t.name.encode()
            self.keep += [shape, strides, name]
            slot.name = name
            slot.data = t.address or None
            slot.dtype = DTYPE_CODES[t.dtype]
            slot.rank = len(t.shape)
            slot.shape = shape
            slot.strides = strides
            slot.device = t.device


class Artifact:
    """A loaded artifact folder (kernels.cubin + manifest.json)."""

    def __init__(self, folder: str) -> None:
        self._lib = lib()
        handle = ctypes.c_void_p()
        _check(self._lib.ssdRtArtifactLoad(folder.encode(), ctypes.byref(handle)))
        self._handle: int | None = handle.value
        self.folder = folder

    @property
    def target(self) -> str:
        value = self._lib.ssdRtArtifactGetTarget(self._handle)
        return value.decode() if value else ""

    def workspace_size(self, tensors: Sequence[DeviceTensor]) -> int:
        packed = _Packed(tensors)
        size = ctypes.c_uint64()
        _check(self._lib.ssdRtArtifactGetWorkspaceSize(
            self._handle, packed.array, packed.count, ctypes.byref(size)))
        return size.value

    def launch(self, tensors: Sequence[DeviceTensor], stream: int, workspace: int,
               workspace_bytes: int) -> None:
        packed = _Packed(tensors)
        _check(self._lib.ssdRtArtifactLaunch(
            self._handle, packed.array, packed.count, stream or None,
            workspace or None, workspace_bytes))

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.ssdRtArtifactDestroy(handle)
