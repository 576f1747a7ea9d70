"""ctypes declarations of the C API functions the package calls.

Every MLIR C API handle is a struct holding one pointer, passed and returned
by value; MlirStringRef is a (data, length) pair.
"""

from __future__ import annotations

import ctypes
from typing import Any

from . import _library


class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]

    def is_null(self) -> bool:
        return not self.ptr


class MlirContext(_Handle):
    pass


class MlirDialectRegistry(_Handle):
    pass


class MlirModule(_Handle):
    pass


class MlirOperation(_Handle):
    pass


class MlirLocation(_Handle):
    pass


class MlirDiagnostic(_Handle):
    pass


class MlirPassManager(_Handle):
    pass


class MlirOpPassManager(_Handle):
    pass


class MlirStringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    @classmethod
    def of(cls, data: bytes) -> MlirStringRef:
        """A view of `data`; the caller keeps `data` alive during the call."""
        return cls(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


class MlirLogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]

    def succeeded(self) -> bool:
        return bool(self.value)


MLIR_DIAGNOSTIC_ERROR = 0

MlirStringCallback = ctypes.CFUNCTYPE(None, MlirStringRef, ctypes.c_void_p)
# ctypes callbacks cannot return structs; MlirLogicalResult is one int8_t,
# which every supported ABI returns exactly like a plain int8_t.
MlirDiagnosticHandler = ctypes.CFUNCTYPE(ctypes.c_int8, MlirDiagnostic,
                                         ctypes.c_void_p)
DeleteUserData = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# ctypes types, as restype and argtypes take them.
_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    # name: (result type, argument types)
    "mlirDialectRegistryCreate": (MlirDialectRegistry, []),
    "mlirDialectRegistryDestroy": (None, [MlirDialectRegistry]),
    "ssdRegisterAllDialects": (None, [MlirDialectRegistry]),
    "mlirContextCreateWithRegistry": (
        MlirContext,
        [MlirDialectRegistry, ctypes.c_bool],
    ),
    "mlirContextDestroy": (None, [MlirContext]),
    "mlirContextAttachDiagnosticHandler": (
        ctypes.c_uint64,
        [MlirContext, MlirDiagnosticHandler, ctypes.c_void_p, DeleteUserData],
    ),
    "mlirContextDetachDiagnosticHandler": (None, [MlirContext, ctypes.c_uint64]),
    "mlirDiagnosticPrint": (
        None,
        [MlirDiagnostic, MlirStringCallback, ctypes.c_void_p],
    ),
    "mlirDiagnosticGetLocation": (MlirLocation, [MlirDiagnostic]),
    "mlirDiagnosticGetSeverity": (ctypes.c_int, [MlirDiagnostic]),
    "mlirDiagnosticGetNumNotes": (ctypes.c_ssize_t, [MlirDiagnostic]),
    "mlirDiagnosticGetNote": (MlirDiagnostic, [MlirDiagnostic, ctypes.c_ssize_t]),
    "mlirLocationPrint": (None, [MlirLocation, MlirStringCallback, ctypes.c_void_p]),
    "ssdModuleCreateParseUnverified": (MlirModule, [MlirContext, MlirStringRef]),
    "mlirModuleDestroy": (None, [MlirModule]),
    "mlirModuleGetOperation": (MlirOperation, [MlirModule]),
    "mlirOperationVerify": (ctypes.c_bool, [MlirOperation]),
    "mlirOperationPrint": (None, [MlirOperation, MlirStringCallback, ctypes.c_void_p]),
    "mlirRegisterAllPasses": (None, []),
    "ssdRegisterAllPasses": (None, []),
    "mlirPassManagerCreate": (MlirPassManager, [MlirContext]),
    "mlirPassManagerDestroy": (None, [MlirPassManager]),
    "mlirPassManagerGetAsOpPassManager": (MlirOpPassManager, [MlirPassManager]),
    "mlirParsePassPipeline": (
        MlirLogicalResult,
        [MlirOpPassManager, MlirStringRef, MlirStringCallback, ctypes.c_void_p],
    ),
    "mlirPassManagerRunOnOp": (MlirLogicalResult, [MlirPassManager, MlirOperation]),
}

@_library.once
def lib() -> ctypes.CDLL:
    """The loaded library, its prototypes declared and its passes registered."""
    loaded = _library.load(_library.CAPI)
    _library.declare(loaded, _PROTOTYPES, "the MLIR and SSD-MLIR C API")
    # Pipelines name passes through MLIR's global registry.
    loaded.mlirRegisterAllPasses()
    loaded.ssdRegisterAllPasses()
    return loaded


class StringCollector:
    """An MlirStringCallback that gathers the text it is given."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self.callback = MlirStringCallback(self._append)

    def _append(self, text: MlirStringRef, _user_data: int | None) -> None:
        self._parts.append(ctypes.string_at(text.data, text.length))

    def text(self) -> str:
        return b"".join(self._parts).decode("utf-8", errors="replace")
