// RUN: ssd-opt %s -split-input-file --ssd-decompose --convert-ssd-to-gpu -verify-diagnostics
// The GPU kernels tile a chunk in edges of 16 rows: a smaller chunk size is
// refused with its value (the CPU backend takes it), not launched on empty
// grids.
func.func @chunk8(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'ssd.chunk_scan' op cannot be lowered to the GPU: chunk size 8 is below 16}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 8 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// headdim and dstate past what the kernels unroll: refused with the size and
// the limit before any code is generated.
func.func @headdim257(%x: tensor<1x?x2x257xbf16>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xbf16>, %C: tensor<1x?x1x16xbf16>) -> (tensor<1x?x2x257xbf16>, tensor<1x2x257x16xf32>) {
  // expected-error @+1 {{'ssd.chunk_scan' op cannot be lowered to the GPU: headdim 257 is above 256}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x257xbf16>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xbf16>) C(%C : tensor<1x?x1x16xbf16>) {chunk_size = 64 : i64} -> tensor<1x?x2x257xbf16>, tensor<1x2x257x16xf32>
  return %y, %fs : tensor<1x?x2x257xbf16>, tensor<1x2x257x16xf32>
}

// -----

func.func @dstate512(%x: tensor<1x?x2x64xbf16>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x512xbf16>, %C: tensor<1x?x1x512xbf16>) -> (tensor<1x?x2x64xbf16>, tensor<1x2x64x512xf32>) {
  // expected-error @+1 {{'ssd.chunk_scan' op cannot be lowered to the GPU: dstate 512 is above 256}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x64xbf16>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x512xbf16>) C(%C : tensor<1x?x1x512xbf16>) {chunk_size = 64 : i64} -> tensor<1x?x2x64xbf16>, tensor<1x2x64x512xf32>
  return %y, %fs : tensor<1x?x2x64xbf16>, tensor<1x2x64x512xf32>
}

// -----

// More heads than a grid dimension holds.
func.func @heads65536(%x: tensor<1x?x65536x16xbf16>, %dt: tensor<1x?x65536xf32>, %A: tensor<65536xf32>, %B: tensor<1x?x1x16xbf16>, %C: tensor<1x?x1x16xbf16>) -> (tensor<1x?x65536x16xbf16>, tensor<1x65536x16x16xf32>) {
  // expected-error @+1 {{'ssd.chunk_scan' op cannot be lowered to the GPU: nheads 65536 is above 65535}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x65536x16xbf16>) dt(%dt : tensor<1x?x65536xf32>) A(%A : tensor<65536xf32>) B(%B : tensor<1x?x1x16xbf16>) C(%C : tensor<1x?x1x16xbf16>) {chunk_size = 64 : i64} -> tensor<1x?x65536x16xbf16>, tensor<1x65536x16x16xf32>
  return %y, %fs : tensor<1x?x65536x16xbf16>, tensor<1x65536x16x16xf32>
}
