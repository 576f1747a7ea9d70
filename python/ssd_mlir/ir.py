"""Contexts and modules: parsing, verifying and printing IR."""

import contextlib
import re

from . import _capi
from .errors import MLIRError

_FILE_LOCATION = re.compile(r'^loc\("(.*)":(\d+):(\d+)\)$')


def _location_text(lib, location):
    """`file:line:col` for a file location, MLIR's own text otherwise."""
    printed = _capi.StringCollector()
    lib.mlirLocationPrint(location, printed.callback, None)
    text = printed.text()
    match = _FILE_LOCATION.match(text)
    if match:
        return "{}:{}:{}".format(*match.groups())
    return text


def _diagnostic_text(lib, diagnostic, kind="error", indent=""):
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

    def __init__(self, lib, threading):
        self.lib = lib
        registry = lib.mlirDialectRegistryCreate()
        try:
            lib.ssdRegisterAllDialects(registry)
            self.handle = lib.mlirContextCreateWithRegistry(registry, threading)
        finally:
            lib.mlirDialectRegistryDestroy(registry)
        self.users = 1
        self.errors = None
        # Kept here: the C side holds only a pointer to the callback.
        self.handler = _capi.MlirDiagnosticHandler(self._on_diagnostic)
        self.handler_id = lib.mlirContextAttachDiagnosticHandler(
            self.handle, self.handler, None, _capi.DeleteUserData()
        )

    def _on_diagnostic(self, diagnostic, _user_data):
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

    def acquire(self):
        self.users += 1

    def release(self):
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

    def __init__(self, threading=True):
        self._owner = _ContextOwner(_capi.lib(), bool(threading))

    @property
    def _lib(self):
        return self._owner.lib

    @property
    def _handle(self):
        return self._owner.handle

    @contextlib.contextmanager
    def _capture_errors(self):
        """Collects the error diagnostics emitted inside the block."""
        owner = self._owner
        outer, owner.errors = owner.errors, []
        try:
            yield owner.errors
        finally:
            owner.errors = outer

    def __del__(self):
        owner = getattr(self, "_owner", None)
        if owner is not None:
            self._owner = None
            owner.release()


class Module:
    """A builtin.module owned by Python; create it with `parse`."""

    def __init__(self, context, handle):
        self._context = context
        self._owner = context._owner
        self._owner.acquire()
        self._handle = handle

    @property
    def context(self):
        return self._context

    @property
    def _operation(self):
        return self._owner.lib.mlirModuleGetOperation(self._handle)

    def verify(self):
        """Runs the verifiers; raises MLIRError with their diagnostics."""
        with self._context._capture_errors() as errors:
            valid = self._owner.lib.mlirOperationVerify(self._operation)
        if not valid:
            raise MLIRError("module verification failed", errors)

    def __str__(self):
        printed = _capi.StringCollector()
        self._owner.lib.mlirOperationPrint(self._operation, printed.callback, None)
        return printed.text()

    def __repr__(self):
        return f"<ssd_mlir.Module at {self._handle.ptr:#x}>"

    def __del__(self):
        owner = getattr(self, "_owner", None)
        if owner is not None:
            self._owner = None
            owner.lib.mlirModuleDestroy(self._handle)
            owner.release()


def parse(text, context=None, verify=True):
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
        handle = context._lib.ssdModuleCreateParseUnverified(
            context._handle, _capi.MlirStringRef.of(data)
        )
    if handle.is_null():
        raise MLIRError("cannot parse module", errors)
    module = Module(context, handle)
    if verify:
        module.verify()
    return module
