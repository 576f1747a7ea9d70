"""Runs inside a fresh virtual environment that has the platform wheel
installed, with no $SSD_MLIR_LIB: the package must work from what the wheel
carries. Called by scripts/wheel/check_wheel.py with the expected version.

Needs nothing but the standard library (ctypes arrays, no numpy)."""

import ctypes
import os
import pathlib
import random
import sys
import time

for variable in ("SSD_MLIR_LIB", "SSD_MLIR_RUNTIME_LIB"):
    assert variable not in os.environ, f"{variable} must not be set here"

import ssd_mlir  # noqa: E402
from ssd_mlir import _capi, _layer, _library, _runtime  # noqa: E402

expected_version = sys.argv[1]
package = pathlib.Path(ssd_mlir.__file__).resolve().parent
print(f"ssd_mlir {ssd_mlir.__version__} from {package}")
assert ssd_mlir.__version__ == expected_version, ssd_mlir.__version__
# Imported from the environment, not from a checkout.
assert pathlib.Path(sys.prefix).resolve() in package.parents, package
assert (package / "py.typed").is_file()

# Both libraries load from the package's own folder.
bundled = package / "_lib"
for library, lib in ((_library.CAPI, _capi.lib), (_library.RUNTIME, _runtime.lib)):
    loaded = pathlib.Path(lib()._name)
    assert loaded == bundled / library.file_name, loaded
    print(f"loaded {loaded}")

# Parse, verify and transform through the C API.
TEXT = """
func.func @ssd(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,
               %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>,
               %C: tensor<1x64x1x8xf32>) -> tensor<1x64x2x4xf32> {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)
      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>)
      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)
      {chunk_size = 16 : i64}
      -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y : tensor<1x64x2x4xf32>
}
"""
module = ssd_mlir.parse(TEXT)
module.verify()
ssd_mlir.run_pipeline(module, "ssd-decompose")
module.verify()
assert "ssd.chunk_scan" in str(module) and "ssd.combined" not in str(module)
try:
    ssd_mlir.parse(TEXT.replace("tensor<2xf32>", "tensor<3xf32>"))
except ssd_mlir.MLIRError as error:
    assert "operand 'A' dimension 0 (h) is 3" in str(error), error
else:
    raise AssertionError("invalid IR was accepted")
print("parse, verify, ssd-decompose: ok")

# A tiny layer through the CPU JIT, against the float64 reference.
start = time.perf_counter()
b, L, h, p, g, n = 1, 37, 2, 4, 1, 8
spec = _layer.LayerSpec(nheads=h, headdim=p, dstate=n, ngroups=g, chunk_size=16)
rng = random.Random(1)


def array(ctype, count, make=lambda: 0.0):
    return (ctype * count)(*[make() for _ in range(count)])


shapes = {"x": (b, L, h, p), "dt": (b, L, h), "A": (h,), "B": (b, L, g, n),
          "C": (b, L, g, n)}
makers = {"dt": lambda: rng.uniform(0.01, 0.1), "A": lambda: -rng.uniform(0.5, 2.0)}
inputs = {}
for name, shape in shapes.items():
    count = 1
    for size in shape:
        count *= size
    inputs[name] = (array(ctypes.c_float, count, makers.get(name, lambda: rng.gauss(0, 1))),
                    shape)


def host(name, buffer, dtype, shape):
    return _layer.HostTensor(name, ctypes.addressof(buffer), dtype, shape)


tensors = [host(name, buffer, "f32", shape) for name, (buffer, shape) in inputs.items()]
y = array(ctypes.c_float, b * L * h * p)
states = array(ctypes.c_float, b * h * p * n)
_layer.CpuKernel(spec).run(tensors + [host("y", y, "f32", (b, L, h, p)),
                                      host("final_states", states, "f32", (b, h, p, n))])
y64 = array(ctypes.c_double, b * L * h * p)
states64 = array(ctypes.c_double, b * h * p * n)
_layer.reference(spec, tensors, ctypes.addressof(y64), ctypes.addressof(states64))
for name, out, expected in (("y", y, y64), ("final_states", states, states64)):
    scale = max(abs(v) for v in expected)
    error = max(abs(o - e) for o, e in zip(out, expected)) / scale
    assert scale > 0 and error < 1e-4, (name, error)
    print(f"CPU layer {name}: relative error {error:.1e} (bound 1e-4)")
print(f"CPU layer: {time.perf_counter() - start:.1f} s")
print("wheel smoke test: ok")
