"""ctypes over ssd-c/Runtime.h (libSSDRuntime): load an artifact, size its
workspace and launch it on a CUDA stream.

The runtime needs no MLIR: a GPU machine builds it alone
(cmake -DSSD_BUILD_COMPILER=OFF) and points $SSD_MLIR_RUNTIME_LIB at it;
_library says where else it is looked for.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from . import _library
from ._layer import DTYPE_CODES


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

@_library.once
def lib() -> ctypes.CDLL:
    """The loaded runtime library, its prototypes declared."""
    loaded = _library.load(_library.RUNTIME)
    _library.declare(loaded, _PROTOTYPES, "ssd-c/Runtime.h")
    return loaded


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
        self._prepared: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._prepared_lock = threading.Lock()
        # Per tensor: (layout, alignment in bytes), as the manifest asks.
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
            tensors = json.load(f)["tensors"]
        self.layouts: dict[str, tuple[str, int]] = {
            t["name"]: (t.get("layout", "contiguous"), int(t.get("alignment", 16)))
            for t in tensors}

    @property
    def target(self) -> str:
        value = self._lib.ssdRtArtifactGetTarget(self._handle)
        return value.decode() if value else ""

    #: How many argument sets prepared() keeps: as many as the runtime
    #: keeps prepared launches (one per layer of a deep model, and spare).
    PREPARED_CALLS = 256

    def prepared(self, key: Hashable,
                 tensors: Callable[[], Sequence[DeviceTensor]]) -> tuple[Any, int]:
        """The packed arguments and the workspace size of a call, kept by
        `key`, which must identify everything tensors() describes (names,
        addresses, dtypes, shapes, strides, devices): built on first use,
        then reused, so that a repeated call skips the packing and the
        workspace query. Errors are raised, not kept."""
        with self._prepared_lock:
            hit = self._prepared.get(key)
            if hit is not None:
                self._prepared.move_to_end(key)
                return hit
        packed = _Packed(tensors())
        entry = (packed, self._workspace_size(packed))
        with self._prepared_lock:
            self._prepared[key] = entry
            while len(self._prepared) > self.PREPARED_CALLS:
                self._prepared.popitem(last=False)
        return entry

    def launch_prepared(self, packed: Any, stream: int, workspace: int,
                        workspace_bytes: int) -> None:
        """launch() with arguments from prepared()."""
        _check(self._lib.ssdRtArtifactLaunch(
            self._handle, packed.array, packed.count, stream or None,
            workspace or None, workspace_bytes))

    def _workspace_size(self, packed: Any) -> int:
        size = ctypes.c_uint64()
        _check(self._lib.ssdRtArtifactGetWorkspaceSize(
            self._handle, packed.array, packed.count, ctypes.byref(size)))
        return size.value

    def workspace_size(self, tensors: Sequence[DeviceTensor]) -> int:
        return self._workspace_size(_Packed(tensors))

    def launch(self, tensors: Sequence[DeviceTensor], stream: int, workspace: int,
               workspace_bytes: int) -> None:
        self.launch_prepared(_Packed(tensors), stream, workspace, workspace_bytes)

    def __del__(self) -> None:
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.ssdRtArtifactDestroy(handle)
