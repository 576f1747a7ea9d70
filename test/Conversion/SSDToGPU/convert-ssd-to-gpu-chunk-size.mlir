// RUN: ssd-opt %s --ssd-decompose --convert-ssd-to-gpu -verify-diagnostics
// The GPU kernels tile a chunk in edges of 16 rows: a smaller chunk size is
// refused with its value (the CPU backend takes it), not launched on empty
// grids.
func.func @chunk8(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'ssd.chunk_scan' op cannot be lowered to the GPU: chunk size 8 is below 16}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 8 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
