"""IR shared by the tests."""

import pytest


def _import_triton_first():
    # Known crash (see test_numpy.py::test_triton_imported_after_a_cpu_kernel):
    # libSSDCAPI's CPU JIT loads MLIR's c_runner_utils with RTLD_GLOBAL,
    # which puts the system libLLVM's symbols in the global scope; Triton's
    # libtriton.so, with its own LLVM linked in, then binds its static
    # initialisers to them and segfaults when imported. torch imports
    # Triton lazily (torch._dynamo, on the op's first call), so a test file
    # that runs a CPU kernel before one that calls the torch op would crash
    # the whole run: import Triton first where it is installed.
    try:
        import triton  # noqa: F401
    except Exception:
        pass


_import_triton_first()

# The combined op with every optional input a non-varlen call takes.
COMBINED = """
func.func @ssd(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,
               %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>,
               %C: tensor<1x64x1x8xf32>, %D: tensor<2xf32>,
               %z: tensor<1x64x2x4xf32>, %db: tensor<2xf32>,
               %init: tensor<1x2x4x8xf32>)
    -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)
      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>)
      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)
      D(%D : tensor<2xf32>) z(%z : tensor<1x64x2x4xf32>)
      dt_bias(%db : tensor<2xf32>) initial_states(%init : tensor<1x2x4x8xf32>)
      {chunk_size = 16 : i64, dt_softplus}
      -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
"""

# Well-formed text, invalid IR: `A` has 3 heads where `x` has 2.
WRONG_HEADS = """
func.func @bad(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,
               %A: tensor<3xf32>, %B: tensor<1x64x1x8xf32>,
               %C: tensor<1x64x1x8xf32>) -> tensor<1x64x2x4xf32> {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)
      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<3xf32>)
      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)
      {chunk_size = 16 : i64}
      -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y : tensor<1x64x2x4xf32>
}
"""

WRONG_HEADS_ERROR = (
    "-:5:13: error: 'ssd.combined' op operand 'A' dimension 0 (h) is 3, "
    "expected 2 as in operand 'x'"
)


@pytest.fixture
def combined_text():
    return COMBINED


@pytest.fixture
def wrong_heads_text():
    return WRONG_HEADS
