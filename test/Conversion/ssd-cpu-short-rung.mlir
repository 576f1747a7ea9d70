// RUN: ssd-opt %s --pass-pipeline="builtin.module(ssd-fit-chunk-size, ssd-decompose, convert-ssd-to-linalg, func.func(ssd-cpu-tile-vectorize{parallel=true}))" | FileCheck %s

// The fit's rung of at most 32 tokens runs on the calling thread: its chunk
// loops are scf.for and none of its ops is spread over an scf.forall. The
// 64-token rung and the op at 128 take threads as any layer does.
// CHECK-LABEL: func.func @short_rung
// CHECK: scf.if
// CHECK-NOT: scf.forall
// CHECK: } else {
// CHECK: scf.if
// CHECK: scf.forall
// CHECK: } else {
// CHECK: scf.forall
// CHECK: } {ssd.fit_rung = 64 : i64}
// CHECK: } {ssd.fit_rung = 32 : i64}
func.func @short_rung(%x: tensor<1x?x8x16xf32>, %dt: tensor<1x?x8xf32>, %A: tensor<8xf32>, %B: tensor<1x?x1x32xf32>) -> (tensor<1x?x8x16xf32>, tensor<1x8x16x32xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x8x16xf32>) dt(%dt : tensor<1x?x8xf32>) A(%A : tensor<8xf32>) B(%B : tensor<1x?x1x32xf32>) C(%B : tensor<1x?x1x32xf32>) {chunk_size = 128 : i64} -> tensor<1x?x8x16xf32>, tensor<1x8x16x32xf32>
  return %y, %fs : tensor<1x?x8x16xf32>, tensor<1x8x16x32xf32>
}
