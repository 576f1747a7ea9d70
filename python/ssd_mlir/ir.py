"""Contexts and modules: parsing, verifying and printing IR."""

from __future__ import annotations

import contextlib
import ctypes
import re
from collections.abc import Iterator

from . import _capi
from .errors import MLIRError

_FILE_LOCATION = re.compile(r'^loc\("(.*)":(\d+):(\d+)\)$')


def _location_text(lib: ctypes.CDLL, location: _capi.MlirLocation) -> str:
    """`file:line:col` for a file location, MLIR's own text otherwise."""
    printed = _capi.StringCollector()
    lib.mlirLocationPrint(location, printed.callback, None)
    text = printed.text()
    match = _FILE_LOCATION.match(text)
    if match:
        return "{}:{}:{}".format(*match.groups())
    return text


def _diagnostic_text(
    lib: ctypes.CDLL,
    diagnostic: _capi.MlirDiagnostic,
    kind: str = "error",
    indent: str = "",
) -> str:
    """One diagnostic in mlir-opt's layout, its notes indented below it."""
    message = _capi.StringCollector()
    lib.mlirDiagnosticPrint(diagnostic, message.callback, None)
    location = _location_text(lib, lib.mlirDiagnosticGetLocation(diagnostic))
    lines = [f"{indent}{location}: {kind}: {message.text()}"]
    for i in range(lib.mlirDiagnosticGetNumNotes(diagnostic)):
        note = lib.mlirDiagnosticGetNote(diagnostic, i)
        lines.append(_diagnostic_text(lib, note, "note", indent + "  "))
    return "\n".join(lines)


class _ContextOwner:
    """Owns one MLIR context and its diagnostic handler.

    The context is destroyed when the Context and every Module in it are
    gone. Counting users, rather than relying on the Module's reference to
    its Context, keeps that order even when the garbage collector finalizes
    a cycle that holds both in arbitrary order.
    """

    def __init__(self, lib: ctypes.CDLL, threading: bool) -> None:
        self.lib = lib
        registry = lib.mlirDialectRegistryCreate()
        try:
            lib.ssdRegisterAllDialects(registry)
            # None once destroyed: a stale use then fails in ctypes rather
            # than passing a dangling pointer to MLIR.
            self.handle: _capi.MlirContext | None = lib.mlirContextCreateWithRegistry(
                registry, threading
            )
        finally:
            lib.mlirDialectRegistryDestroy(registry)
        self.users = 1
        self.errors: list[str] | None = None
        # Kept here: the C side holds only a pointer to the callback.
        self.handler = _capi.MlirDiagnosticHandler(self._on_diagnostic)
        self.handler_id = lib.mlirContextAttachDiagnosticHandler(
            self.handle, self.handler, None, _capi.DeleteUserData()
        )

    def _on_diagnostic(
        self, diagnostic: _capi.MlirDiagnostic, _user_data: int | None
    ) -> int:
        # Returning 0 passes the diagnostic on to MLIR's default handler.
        if self.errors is None:
            return 0
        # An exception cannot cross the C boundary: record it instead.
        try:
            severity = self.lib.mlirDiagnosticGetSeverity(diagnostic)
            if severity != _capi.MLIR_DIAGNOSTIC_ERROR:
                return 0
            self.errors.append(_diagnostic_text(self.lib, diagnostic))
        except Exception as error:  # pragma: no cover - defensive
            self.errors.append(f"(unreadable diagnostic: {error!r})")
        return 1

    def acquire(self) -> None:
        self.users += 1

    def release(self) -> None:
        self.users -= 1
        if self.users == 0:
            self.lib.mlirContextDetachDiagnosticHandler(self.handle, self.handler_id)
            self.lib.mlirContextDestroy(self.handle)
            self.handle = None


class Context:
    """An MLIR context with the ssd dialect and every upstream dialect.

    Error diagnostics emitted while this package parses, verifies or runs
    passes are collected into the MLIRError it raises; other diagnostics go
    on to MLIR's default handler.
    """

    def __init__(self, threading: bool = True) -> None:
        self._owner = _ContextOwner(_capi.lib(), bool(threading))

    @property
    def _lib(self) -> ctypes.CDLL:
        return self._owner.lib

    @property
    def _handle(self) -> _capi.MlirContext | None:
        return self._owner.handle

    @contextlib.contextmanager
    def _capture_errors(self) -> Iterator[list[str]]:
        """Collects the error diagnostics emitted inside the block."""
        owner = self._owner
        outer, owner.errors = owner.errors, []
        try:
            yield owner.errors
        finally:
            owner.errors = outer

    def __del__(self) -> None:
        # Absent when __init__ failed, or after a first __del__.
        owner = getattr(self, "_owner", None)
        if owner is not None:
            del self._owner
            owner.release()


class Module:
    """A builtin.module owned by Python; create it with `parse`."""

    def __init__(self, context: Context, handle: _capi.MlirModule) -> None:
        self._context = context
        self._owner = context._owner
        self._owner.acquire()
        self._handle = handle

    @property
    def context(self) -> Context:
        return self._context

    @property
    def _operation(self) -> _capi.MlirOperation:
        operation: _capi.MlirOperation = self._owner.lib.mlirModuleGetOperation(
            self._handle
        )
        return operation

    def verify(self) -> None:
        """Runs the verifiers; raises MLIRError with their diagnostics."""
        with self._context._capture_errors() as errors:
            valid = self._owner.lib.mlirOperationVerify(self._operation)
        if not valid:
            raise MLIRError("module verification failed", errors)

    def __str__(self) -> str:
        printed = _capi.StringCollector()
        self._owner.lib.mlirOperationPrint(self._operation, printed.callback, None)
        return printed.text()

    def __repr__(self) -> str:
        return f"<ssd_mlir.Module at {self._handle.ptr:#x}>"

    def __del__(self) -> None:
        # Absent when __init__ failed, or after a first __del__.
        owner = getattr(self, "_owner", None)
        if owner is not None:
            del self._owner
            owner.lib.mlirModuleDestroy(self._handle)
            owner.release()


def parse(text: str, context: Context | None = None, verify: bool = True) -> Module:
    """Parses `text` into a Module, verified unless `verify` is False.

    Raises MLIRError with MLIR's diagnostics when the text does not parse
    ("cannot parse module") or the IR is invalid ("module verification
    failed"). Without `context`, the module gets a new Context.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() expects the IR as str, got {type(text).__name__}")
    if context is None:
        context = Context()
    elif not isinstance(context, Context):
        raise TypeError(
            f"context must be an ssd_mlir.Context, got {type(context).__name__}"
        )
    data = text.encode("utf-8")
    with context._capture_errors() as errors:
        handle: _capi.MlirModule = context._lib.ssdModuleCreateParseUnverified(
            context._handle, _capi.MlirStringRef.of(data)
        )
    if handle.is_null():
        raise MLIRError("cannot parse module", errors)
    module = Module(context, handle)
    if verify:
        module.verify()
    return module
