"""SSD-MLIR from Python: parse, verify and transform IR of the ssd dialect.

A thin ctypes layer over libSSDCAPI.so (found through $SSD_MLIR_LIB, in the
package's _lib/ folder where the platform wheel put it, or in the repository's
build/lib: see _library), loaded when the first Context is created.

ssd_mlir.torch (imported on first use, since it needs PyTorch) holds the
drop-in for mamba_ssm's mamba_chunk_scan_combined; ssd_mlir.numpy (likewise,
needs numpy only) the same op on numpy arrays; ssd_mlir.transformers
(likewise, needs Hugging Face transformers) routes transformers' Mamba-2
models' SSD to the PyTorch op.
"""

import importlib
from typing import Any

from ._version import __version__
from .errors import LibraryNotFoundError, MLIRError, PipelineError
from .ir import Context, Module, parse
from .passes import run_pipeline

__all__ = [
    "Context",
    "LibraryNotFoundError",
    "MLIRError",
    "Module",
    "PipelineError",
    "parse",
    "run_pipeline",
]


def __getattr__(name: str) -> Any:
    # `ssd_mlir.torch` without importing PyTorch for users who never touch it
    # (and `ssd_mlir.numpy`, `ssd_mlir.transformers` without numpy,
    # transformers).
    if name in ("numpy", "torch", "transformers"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
