// RUN: not ssd-opt %s --ssd-cpu-pipeline 2>&1 | FileCheck %s

// A static batch of 0 has nothing to compute. The sequence split leaves it
// alone (slicing its tokens would be out of bounds), so the error is the
// lowering's, naming the operand and the size.
// CHECK: error: 'ssd.state_passing' op cannot be lowered to linalg: a static batch of 0 in operand 'states' (nothing to compute) is not supported
// CHECK-NOT: out-of-bounds
func.func @empty_batch(%x: tensor<0x128x2x4xf32>, %dt: tensor<0x128x2xf32>, %A: tensor<2xf32>, %B: tensor<0x128x1x8xf32>, %C: tensor<0x128x1x8xf32>) -> (tensor<0x128x2x4xf32>, tensor<0x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<0x128x2x4xf32>) dt(%dt : tensor<0x128x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<0x128x1x8xf32>) C(%C : tensor<0x128x1x8xf32>) {chunk_size = 32 : i64} -> tensor<0x128x2x4xf32>, tensor<0x2x4x8xf32>
  return %y, %fs : tensor<0x128x2x4xf32>, tensor<0x2x4x8xf32>
}
