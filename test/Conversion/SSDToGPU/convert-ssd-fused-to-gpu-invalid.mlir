// RUN: ssd-opt %s -split-input-file -verify-diagnostics --convert-ssd-fused-to-gpu
// RUN: not ssd-opt %s -split-input-file --convert-ssd-fused-to-gpu="state-chain=tree" 2>&1 | FileCheck %s --check-prefix=CHAIN
// RUN: not ssd-opt %s -split-input-file --convert-ssd-fused-to-gpu="mma=hmma" 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not ssd-opt %s -split-input-file --convert-ssd-fused-to-gpu="mma=wgmma chip=sm_80" 2>&1 | FileCheck %s --check-prefix=MMA-CHIP
// RUN: not ssd-opt %s -split-input-file --convert-ssd-fused-to-gpu="copy=bulk" 2>&1 | FileCheck %s --check-prefix=COPY
// RUN: not ssd-opt %s -split-input-file --convert-ssd-fused-to-gpu="copy=tma chip=sm_80" 2>&1 | FileCheck %s --check-prefix=COPY-CHIP
// RUN: not ssd-opt %s -split-input-file --convert-ssd-fused-to-gpu="p-block=3" 2>&1 | FileCheck %s --check-prefix=PBLOCK

// MMA: error: convert-ssd-fused-to-gpu: mma must be 'mma.sync' or 'wgmma', got 'hmma'
// MMA-CHIP: error: convert-ssd-fused-to-gpu: mma=wgmma needs chip sm_90a, got 'sm_80'

// COPY: error: convert-ssd-fused-to-gpu: copy must be 'auto', 'cp.async' or 'tma', got 'bulk'
// COPY-CHIP: error: convert-ssd-fused-to-gpu: copy=tma needs chip sm_90a, got 'sm_80'

// PBLOCK: error: convert-ssd-fused-to-gpu: p-block must be a positive power of two, got 3{{$}}

// CHAIN: error: convert-ssd-fused-to-gpu: state-chain must be 'chunk', 'segment', 'lookback' or 'auto', got 'tree'

// The combined op has not been decomposed and fused.
func.func @combined(%x: tensor<1x?x2x16xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>) {
  // expected-error @+1 {{'ssd.combined' op must be fused first: run --ssd-decompose --ssd-fuse before convert-ssd-fused-to-gpu}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  return %y, %fs : tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
}

// -----

// A step op left outside any ssd.fused.
func.func @unfused(%dt: tensor<1x?x2xf32>, %A: tensor<2xf32>) -> tensor<1x2x?x16xf32> {
  // expected-error @+1 {{'ssd.chunk_cumsum' op is not part of an ssd.fused; convert-ssd-fused-to-gpu lowers only fused layers}}
  %o, %cs = ssd.chunk_cumsum dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>
  return %cs : tensor<1x2x?x16xf32>
}

// -----

// An input computed inside the function instead of bound by the runtime.
func.func @computed_input(%x: tensor<1x?x2x16xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>) {
  %a2 = arith.negf %A : tensor<2xf32>
  // expected-error @+1 {{'ssd.fused' op operand 'A' must be an argument of the function for convert-ssd-fused-to-gpu (the runtime binds it)}}
  %y, %fs = ssd.fused x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%a2 : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  return %y, %fs : tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
}

// -----

// Two layers would be two kernels.
func.func @two_layers(%x: tensor<1x?x2x16xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>) {
  %y, %fs = ssd.fused x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  // expected-error @+1 {{'ssd.fused' op convert-ssd-fused-to-gpu expects one ssd.fused per function (one persistent kernel)}}
  %y2, %fs2 = ssd.fused x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  return %y, %y2 : tensor<1x?x2x16xf32>, tensor<1x?x2x16xf32>
}

// -----

// expected-error @+1 {{convert-ssd-fused-to-gpu: no ssd.fused in the function; run --ssd-decompose --ssd-fuse first}}
func.func @empty() {
  return
}

// -----

// expected-error @+1 {{convert-ssd-fused-to-gpu expects exactly one func.func in the module, found 2}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}

// -----

// Other work in the function would be lost with it.
func.func @other_work(%x: tensor<1x?x2x16xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>) {
  // expected-error @+1 {{'arith.negf' op is not supported by convert-ssd-fused-to-gpu (the function may hold only ssd.fused)}}
  %a2 = arith.negf %A : tensor<2xf32>
  %y, %fs = ssd.fused x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  return %y, %fs : tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
}
