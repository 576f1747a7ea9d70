"""Artifact.prepared: a repeated call reuses its packed arguments and
workspace size, a new key prepares again, errors are raised and not kept.

Runs the runtime against the fake CUDA driver of the C++ tests
(libssd-rt-fake-cuda.so, built beside the runtime with the unit tests) in a
child process, since the runtime opens its driver once per process.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

# The build folder: $SSD_MLIR_LIB's parent, as `make test` sets it.
_LIB = pathlib.Path(os.environ.get("SSD_MLIR_LIB") or
                    pathlib.Path(__file__).resolve().parents[2] / "build" / "lib")
_BUILD = (_LIB if _LIB.is_dir() else _LIB.parent).parent
_FAKE_DRIVER = _BUILD / "lib" / "libssd-rt-fake-cuda.so"

_CHILD = textwrap.dedent("""
    import sys
    from ssd_mlir import _runtime

    artifact = _runtime.Artifact(sys.argv[1])
    L, h, p, n = 128, 4, 16, 32

    def tensors(length=L, x_address=0x100000):
        def t(name, address, dtype, shape):
            strides, step = [], 1
            for d in reversed(shape):
                strides.insert(0, step)
                step *= d
            return _runtime.DeviceTensor(name, address, dtype, shape, strides, 0)
        return [t("x", x_address, "bf16", [1, length, h, p]),
                t("dt", 0x200000, "f32", [1, length, h]),
                t("A", 0x300000, "f32", [h]),
                t("B", 0x400000, "bf16", [1, length, 1, n]),
                t("C", 0x500000, "bf16", [1, length, 1, n]),
                t("y", 0x600000, "bf16", [1, length, h, p]),
                t("final_states", 0x700000, "f32", [1, h, p, n])]

    built = []
    def describe(**kw):
        def make():
            built.append(kw)
            return tensors(**kw)
        return make

    first = artifact.prepared(("a",), describe())
    again = artifact.prepared(("a",), describe())
    assert again is first and len(built) == 1, (again, first, built)
    packed, size = first
    assert size > 0, size
    artifact.launch_prepared(packed, 0, 0x10000000, size)

    moved = artifact.prepared(("b",), describe(x_address=0x900000))
    assert moved is not first and len(built) == 2
    assert moved[1] == size  # The workspace does not depend on addresses.
    longer = artifact.prepared(("c",), describe(length=2 * L))
    assert longer[1] > size, (longer[1], size)

    # A refused call raises every time: nothing is kept for it.
    for _ in range(2):
        try:
            artifact.prepared(("bad",), describe(length=L + 1000000000))
        except _runtime.RuntimeError_ as error:
            message = str(error)
        else:
            raise AssertionError("a bad call was prepared")
    assert "tensor argument" in message, message
    assert len(built) == 5

    # Least recently used first out.
    artifact.PREPARED_CALLS = 2
    artifact.prepared(("a",), describe())  # a is now the newest of a, b, c.
    artifact.prepared(("d",), describe())
    assert len(built) == 6
    artifact.prepared(("a",), describe())
    assert len(built) == 6
    artifact.prepared(("b",), describe())
    assert len(built) == 7
    print("ok")
""")


@pytest.mark.skipif(not _FAKE_DRIVER.is_file(),
                    reason=f"{_FAKE_DRIVER} (built with the runtime's unit tests) is absent")
def test_prepared_calls_are_reused_and_errors_are_not(tmp_path):
    art = tmp_path / "art"
    subprocess.run([str(_BUILD / "bin" / "ssd-compile"), "--nheads", "4", "--headdim", "16",
                    "--dstate", "32", "--ngroups", "1", "--chunk-size", "64",
                    "--dtype", "bf16", "--target", "sm_90a", "-o", str(art)],
                   check=True)
    env = dict(os.environ, SSD_RT_CUDA_DRIVER=str(_FAKE_DRIVER),
               SSD_MLIR_RUNTIME_LIB=str(_BUILD / "lib"),
               PYTHONPATH=os.pathsep.join(
                   [str(pathlib.Path(__file__).resolve().parents[1])] +
                   [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    child = subprocess.run([sys.executable, "-c", _CHILD, str(art)], env=env,
                           capture_output=True, text=True)
    assert child.returncode == 0, child.stdout + child.stderr
    assert child.stdout.strip() == "ok"
