// RUN: ssd-opt %s -split-input-file --convert-ssd-to-gpu -verify-diagnostics

// Nothing to lower: the pass wants the ssd-decompose data flow.
// expected-error @+1 {{convert-ssd-to-gpu: no ssd.chunk_cumsum in the function; run --ssd-decompose first}}
func.func @empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// One function per module: the runtime launches exactly one SSD.
// expected-error @+1 {{convert-ssd-to-gpu expects exactly one func.func in the module, found 2}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}

// -----

// The kernels read every user tensor from a runtime-bound argument; the
// function holds nothing but the step ops.
func.func @computed_input(%arg0: tensor<1x64x2x4xf32>, %arg1: tensor<1x64x2xf32>, %arg2: tensor<2xf32>, %arg3: tensor<1x64x1x8xf32>, %arg4: tensor<1x64x1x8xf32>, %arg5: tensor<2xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'arith.constant' op is not supported by convert-ssd-to-gpu (the function may hold only the ssd step ops)}}
  %bias = arith.constant dense<1.0> : tensor<2xf32>
  %dt_out, %dA_cumsum = ssd.chunk_cumsum dt(%arg1 : tensor<1x64x2xf32>) A(%arg2 : tensor<2xf32>) dt_bias(%bias : tensor<2xf32>) -> tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>
  %0 = ssd.chunk_state x(%arg0 : tensor<1x64x2x4xf32>) B(%arg3 : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x4x16xf32>) dA_cumsum(%dA_cumsum : tensor<1x2x4x16xf32>) -> tensor<1x4x2x4x8xf32>
  %out, %final_states = ssd.state_passing states(%0 : tensor<1x4x2x4x8xf32>) dA_cumsum(%dA_cumsum : tensor<1x2x4x16xf32>) -> tensor<1x4x2x4x8xf32>, tensor<1x2x4x8xf32>
  %1 = ssd.bmm C(%arg4 : tensor<1x64x1x8xf32>) B(%arg3 : tensor<1x64x1x8xf32>) -> tensor<1x4x1x16x16xf32>
  %2 = ssd.segsum dA_cumsum(%dA_cumsum : tensor<1x2x4x16xf32>) -> tensor<1x2x4x16x16xf32>
  %3 = ssd.chunk_scan x(%arg0 : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x4x16xf32>) dA_cumsum(%dA_cumsum : tensor<1x2x4x16xf32>) segsum(%2 : tensor<1x2x4x16x16xf32>) C(%arg4 : tensor<1x64x1x8xf32>) CB(%1 : tensor<1x4x1x16x16xf32>) states(%out : tensor<1x4x2x4x8xf32>) -> tensor<1x64x2x4xf32>
  return %3, %final_states : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// The combined op must be decomposed first.
func.func @combined(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'ssd.combined' op must be decomposed first (--ssd-decompose) before convert-ssd-to-gpu}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 16 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
