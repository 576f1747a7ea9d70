// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu -verify-diagnostics
// As for the unfused kernels: a chunk size below 16 is refused with its value.
func.func @chunk8(%x: tensor<1x?x2x16xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>) {
  // expected-error @+1 {{'ssd.fused' op cannot be lowered by convert-ssd-fused-to-gpu: chunk size 8 is below 16}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x16xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 8 : i64} -> tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
  return %y, %fs : tensor<1x?x2x16xf32>, tensor<1x2x16x16xf32>
}
