"""SSD-MLIR from Python: parse, verify and transform IR of the ssd dialect.

A thin ctypes layer over libSSDCAPI.so (found through $SSD_MLIR_LIB or the
repository's build/lib), loaded when the first Context is created.
"""

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
