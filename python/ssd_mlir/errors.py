"""Exceptions raised by the package."""

from __future__ import annotations

from collections.abc import Iterable

from ._library import LibraryNotFoundError


class MLIRError(Exception):
    """An MLIR operation failed; `diagnostics` holds MLIR's error messages.

    Each diagnostic is one string, `<file>:<line>:<col>: error: <message>`,
    followed by its notes on indented lines.
    """

    def __init__(self, message: str, diagnostics: Iterable[str] = ()) -> None:
        self.diagnostics = list(diagnostics)
        text = message
        if self.diagnostics:
            text += ":\n" + "\n".join(self.diagnostics)
        super().__init__(text)


class PipelineError(MLIRError):
    """A pass pipeline string does not parse (unknown pass, bad option)."""


# Shown as ssd_mlir.X in tracebacks, where users import them from.
for _error in (LibraryNotFoundError, MLIRError, PipelineError):
    _error.__module__ = "ssd_mlir"

__all__ = ["LibraryNotFoundError", "MLIRError", "PipelineError"]
