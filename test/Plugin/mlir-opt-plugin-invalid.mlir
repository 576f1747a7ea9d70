// The ssd verifiers run inside Debian's mlir-opt through libSSDPlugin.so.
// REQUIRES: ssd-plugin
// RUN: mlir-opt %s --load-dialect-plugin=%ssd_plugin -split-input-file -verify-diagnostics

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<3x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'B' dimension 0 (b) is 3, expected 2 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<3x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'x' must be a rank-4 tensor (b,L,h,p), got 'tensor<2x64x4xf32>'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}
