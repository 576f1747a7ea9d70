// RUN: ssd-opt %s --convert-ssd-to-linalg -split-input-file -verify-diagnostics

// The combined op is decomposed by ssd-decompose, not lowered directly.
func.func @combined(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'ssd.combined' op cannot be lowered to linalg directly: run --ssd-decompose first}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 16 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// A static empty batch: the state-passing rows are inserted at static
// offsets, which an empty batch cannot hold; reported, not an upstream
// verifier error on the generated IR.
func.func @empty_batch(%st: tensor<0x4x2x4x8xf32>, %da: tensor<0x2x4x16xf32>) -> (tensor<0x4x2x4x8xf32>, tensor<0x2x4x8xf32>) {
  // expected-error @+1 {{'ssd.state_passing' op cannot be lowered to linalg: a static batch of 0 in operand 'states' (nothing to compute) is not supported}}
  %o, %f = ssd.state_passing states(%st : tensor<0x4x2x4x8xf32>) dA_cumsum(%da : tensor<0x2x4x16xf32>) -> tensor<0x4x2x4x8xf32>, tensor<0x2x4x8xf32>
  return %o, %f : tensor<0x4x2x4x8xf32>, tensor<0x2x4x8xf32>
}

// Dynamic h, p, g, n or chunk sizes would also be reported by the pass, but
// the op verifiers already reject them before it runs.
