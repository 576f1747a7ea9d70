// A p-block that does not divide headdim is not recorded on ssd.fused; with
// emit-remarks the pass says so, naming both sizes.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse="p-block=16 emit-remarks" --verify-diagnostics | FileCheck %s

// CHECK: ssd.fused
// CHECK-NOT: p_block
// CHECK: return
func.func @headdim8(%x: tensor<1x?x2x8xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>) -> (tensor<1x?x2x8xf32>, tensor<1x2x8x16xf32>) {
  // expected-remark @+1 {{ssd-fuse: p-block 16 does not divide headdim 8; not recorded}}
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x8xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x8xf32>, tensor<1x2x8x16xf32>
  return %y, %fs : tensor<1x?x2x8xf32>, tensor<1x2x8x16xf32>
}
