"""Finds and loads the project's native libraries, the one place that does:
libSSDCAPI (the C API this package wraps) and libSSDRuntime (the GPU runtime
ssd_mlir.torch launches artifacts through).

Where each is looked for, in order:

1. Its environment variable ($SSD_MLIR_LIB, $SSD_MLIR_RUNTIME_LIB), the
   library or the folder that holds it. When set it is the only place looked
   at: falling back silently would hide a mistyped path behind another
   build's library. libSSDRuntime is next looked for beside $SSD_MLIR_LIB
   (the two are built into one folder), so that a build named there is not
   mixed with another copy's runtime.
2. The package's own folder ssd_mlir/_lib/, which the platform wheel fills
   (its libraries find each other through RUNPATH $ORIGIN).
3. build/lib of the repository the package sits in (an editable install from
   a checkout).

A library that cannot be loaded raises LibraryNotFoundError naming every
place looked at and why each failed.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

_SUFFIX = ".dylib" if sys.platform == "darwin" else ".so"

# The folder of the libraries a platform wheel carries.
BUNDLED_DIR = pathlib.Path(__file__).resolve().parent / "_lib"
# <repo>/python/ssd_mlir/ -> <repo>, when the package runs from a checkout.
_REPOSITORY = pathlib.Path(__file__).resolve().parent.parent.parent


class LibraryNotFoundError(RuntimeError):
    """A native library of the project could not be found or loaded."""


@dataclass(frozen=True)
class Library:
    """One of the project's shared libraries and how to find it."""

    file_name: str
    env: str
    description: str
    # What to do when it is found nowhere.
    remedy: str
    # Another library's variable whose folder holds this one too.
    beside_env: str | None = None


CAPI = Library(
    file_name=f"libSSDCAPI{_SUFFIX}",
    env="SSD_MLIR_LIB",
    description="the SSD-MLIR C API library",
    remedy="Install the ssd-mlir platform wheel, build it (ninja -C build "
    "SSDCAPI) or set SSD_MLIR_LIB to the library or the folder that holds it.",
)

RUNTIME = Library(
    file_name=f"libSSDRuntime{_SUFFIX}",
    env="SSD_MLIR_RUNTIME_LIB",
    description="the SSD-MLIR runtime",
    remedy="Install the ssd-mlir platform wheel, or build it (cmake -S . -B "
    "build-rt -DSSD_BUILD_COMPILER=OFF && cmake --build build-rt) and set "
    "SSD_MLIR_RUNTIME_LIB to build-rt/lib.",
    beside_env=CAPI.env,
)


def _in(folder_or_file: str, library: Library) -> pathlib.Path:
    path = pathlib.Path(folder_or_file).expanduser()
    return path / library.file_name if path.is_dir() else path


def candidates(library: Library) -> list[tuple[pathlib.Path, str]]:
    """Where to look for `library`, in order, each with why it is looked at."""
    configured = os.environ.get(library.env)
    if configured:
        return [(_in(configured, library), f"${library.env}")]
    found = []
    if library.beside_env and os.environ.get(library.beside_env):
        path = pathlib.Path(os.environ[library.beside_env]).expanduser()
        folder = path if path.is_dir() else path.parent
        found.append((folder / library.file_name, f"beside ${library.beside_env}"))
    found.append((BUNDLED_DIR / library.file_name, "bundled with the package"))
    if (_REPOSITORY / "CMakeLists.txt").is_file():
        found.append((_REPOSITORY / "build" / "lib" / library.file_name,
                      "the repository's build/lib"))
    return found


def declare(loaded: ctypes.CDLL, prototypes: Mapping[str, tuple[Any, list[Any]]],
            header: str) -> None:
    """Sets restype and argtypes of every function in `prototypes`
    ({name: (result type, argument types)}), which `header` declares."""
    for name, (restype, argtypes) in prototypes.items():
        try:
            function = getattr(loaded, name)
        except AttributeError:
            raise LibraryNotFoundError(
                f"{loaded._name} lacks {name} ({header}); it is not (a current "
                "build of) the library this package expects") from None
        function.restype = restype
        function.argtypes = argtypes


def load(library: Library = CAPI) -> ctypes.CDLL:
    """Loads `library` from the first place that has it, or raises
    LibraryNotFoundError saying where it looked."""
    looked = []
    if not os.environ.get(library.env):
        looked.append(f"${library.env}: not set")
    for path, origin in candidates(library):
        if not path.is_file():
            looked.append(f"{path} ({origin}): no such file")
            continue
        try:
            return ctypes.CDLL(str(path))
        except OSError as error:
            looked.append(f"{path} ({origin}): {error}")
    raise LibraryNotFoundError(
        f"cannot load {library.file_name}, {library.description}.\n  "
        + "\n  ".join(looked) + "\n" + library.remedy)


_T = TypeVar("_T")


def once(make: Callable[[], _T]) -> Callable[[], _T]:
    """A function returning make()'s result, made by the first call that
    succeeds and kept; calls are serialised, so that it is made once (a
    failure raises and is tried again on the next call)."""
    lock = threading.Lock()
    made: list[_T] = []

    def get() -> _T:
        with lock:
            if not made:
                made.append(make())
            return made[0]

    get.__doc__ = make.__doc__
    return get
