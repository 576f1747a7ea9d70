// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu -verify-diagnostics
// As for the unfused kernels: a chunk size below 16 is refused with its value.
func.func @chunk8(%x: tensor<1x?x2x16xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>) {
  // expected-error @+1 {{'ssd.fused' op cannot be lowered by convert-ssd-fused-to-gpu: chunk size 8 is below 16}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 8 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  return %y, %fs : tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
}

// -----

// headdim and dstate past what the kernels unroll: refused with the size and
// the limit before any code is generated.
func.func @headdim257(%x: tensor<1x?x2x257xbf16>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xbf16>, %C: tensor<1x?x1x16xbf16>) -> (tensor<1x?x2x257xbf16>, tensor<1x2x257x16xf32>) {
  // expected-error @+1 {{'ssd.fused' op cannot be lowered by convert-ssd-fused-to-gpu: headdim 257 is above 256}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x257xbf16>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xbf16>) C(%C : tensor<1x?x1x16xbf16>) {chunk_size = 64 : i64} -> tensor<1x?x2x257xbf16>, tensor<1x2x257x16xf32>
  return %y, %fs : tensor<1x?x2x257xbf16>, tensor<1x2x257x16xf32>
}

// -----

func.func @dstate512(%x: tensor<1x?x2x64xbf16>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x512xbf16>, %C: tensor<1x?x1x512xbf16>) -> (tensor<1x?x2x64xbf16>, tensor<1x2x64x512xf32>) {
  // expected-error @+1 {{'ssd.fused' op cannot be lowered by convert-ssd-fused-to-gpu: dstate 512 is above 256}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x64xbf16>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x512xbf16>) C(%C : tensor<1x?x1x512xbf16>) {chunk_size = 64 : i64} -> tensor<1x?x2x64xbf16>, tensor<1x2x64x512xf32>
  return %y, %fs : tensor<1x?x2x64xbf16>, tensor<1x2x64x512xf32>
}

// -----

// More heads than a grid dimension holds; 2^62 heads overflowed the
// workspace sizes.
func.func @heads65536(%x: tensor<1x?x65536x16xbf16>, %dt: tensor<1x?x65536xf32>, %A: tensor<65536xf32>, %B: tensor<1x?x1x16xbf16>, %C: tensor<1x?x1x16xbf16>) -> (tensor<1x?x65536x16xbf16>, tensor<1x65536x16x16xf32>) {
  // expected-error @+1 {{'ssd.fused' op cannot be lowered by convert-ssd-fused-to-gpu: nheads 65536 is above 65535}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x65536x16xbf16>) dt(%dt : tensor<1x?x65536xf32>) A(%A : tensor<65536xf32>) B(%B : tensor<1x?x1x16xbf16>) C(%C : tensor<1x?x1x16xbf16>) {chunk_size = 64 : i64} -> tensor<1x?x65536x16xbf16>, tensor<1x65536x16x16xf32>
  return %y, %fs : tensor<1x?x65536x16xbf16>, tensor<1x65536x16x16xf32>
}

// -----

func.func @heads2pow62(%x: tensor<1x?x4611686018427387904x96xf16>, %dt: tensor<1x?x4611686018427387904xf32>, %A: tensor<4611686018427387904xf32>, %B: tensor<1x?x2x128xf16>, %C: tensor<1x?x2x128xf16>, %cu: tensor<?xi32>) -> (tensor<1x?x4611686018427387904x96xf16>, tensor<?x4611686018427387904x96x128xf32>) {
  // expected-error @+1 {{'ssd.fused' op cannot be lowered by convert-ssd-fused-to-gpu: nheads 4611686018427387904 is above 65535}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x4611686018427387904x96xf16>) dt(%dt : tensor<1x?x4611686018427387904xf32>) A(%A : tensor<4611686018427387904xf32>) B(%B : tensor<1x?x2x128xf16>) C(%C : tensor<1x?x2x128xf16>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 64 : i64} -> tensor<1x?x4611686018427387904x96xf16>, tensor<?x4611686018427387904x96x128xf32>
  return %y, %fs : tensor<1x?x4611686018427387904x96xf16>, tensor<?x4611686018427387904x96x128xf32>
}
