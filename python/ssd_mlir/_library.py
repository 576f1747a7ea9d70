"""Finds and loads libSSDCAPI.so, the C API library this package wraps."""

from __future__ import annotations

import ctypes
import os
import pathlib
import sys

LIBRARY_ENV = "SSD_MLIR_LIB"

if sys.platform == "darwin":
    LIBRARY_NAME = "libSSDCAPI.dylib"
else:
    LIBRARY_NAME = "libSSDCAPI.so"


class LibraryNotFoundError(RuntimeError):
    """libSSDCAPI could not be found or loaded."""


def _candidates() -> list[tuple[pathlib.Path, str]]:
    """Where to look, in order, each with why it was looked at."""
    configured = os.environ.get(LIBRARY_ENV)
    if configured:
        path = pathlib.Path(configured).expanduser()
        if path.is_dir():
            path = path / LIBRARY_NAME
        # An explicit setting is the only candidate: falling back silently
        # would hide a mistyped path behind another build's library.
        return [(path, f"${LIBRARY_ENV}")]
    # An editable install from a checkout: <repo>/python/ssd_mlir/ -> <repo>.
    repo = pathlib.Path(__file__).resolve().parent.parent.parent
    return [(repo / "build" / "lib" / LIBRARY_NAME, "the repository's build/lib")]


def load() -> ctypes.CDLL:
    """Loads the library, or raises LibraryNotFoundError saying where it looked."""
    looked = []
    for path, origin in _candidates():
        if not path.is_file():
            looked.append(f"{path} ({origin}): no such file")
            continue
        try:
            return ctypes.CDLL(str(path))
        except OSError as error:
            looked.append(f"{path} ({origin}): {error}")
    raise LibraryNotFoundError(
        f"cannot load {LIBRARY_NAME}, the SSD-MLIR C API library.\n  "
        + "\n  ".join(looked)
        + f"\nBuild it (ninja -C build SSDCAPI) or set {LIBRARY_ENV} to the "
        "library or the folder that holds it."
    )
