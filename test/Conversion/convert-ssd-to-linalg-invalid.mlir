// RUN: ssd-opt %s --convert-ssd-to-linalg -split-input-file -verify-diagnostics

// The combined op is decomposed by ssd-decompose, not lowered directly.
func.func @combined(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'ssd.combined' op cannot be lowered to linalg directly: run --ssd-decompose first}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 16 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// Dynamic h, p, g, n or chunk sizes would also be reported by the pass, but
// the op verifiers already reject them before it runs.
