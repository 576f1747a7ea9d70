"""IR shared by the tests."""

import pytest


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
