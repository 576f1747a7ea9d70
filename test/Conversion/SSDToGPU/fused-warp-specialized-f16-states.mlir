// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always chip=sm_80" 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// f16 states: the warp-specialised kernels take the layer. The walk keeps
// the state in f32 accumulators: the initial state's pairs widen on the
// way in and the final state's narrow on the way out (storeVector
// truncates to the memref's type); the piece states stay f32.
// CHECK: name = "ssd_warp_specialized_piece_states"
// CHECK: name = "ssd_warp_specialized"
// CHECK: workspaces = [{dtype = "f32", name = "piece_states"
// CHECK-LABEL: gpu.func @ssd_warp_specialized(
// CHECK-SAME: %[[INIT:[a-z0-9_]+]]: memref<?x8x64x128xf16>
// CHECK-SAME: %[[FINAL:[a-z0-9_]+]]: memref<?x8x64x128xf16>
// CHECK-SAME: memref<?x8x?x64x128xf32>
// CHECK: %[[PAIR:.*]] = vector.load %[[INIT]]{{.*}} : memref<?x8x64x128xf16>, vector<2xf16>
// CHECK-NEXT: arith.extf %[[PAIR]] : vector<2xf16> to vector<2xf32>
// CHECK: %[[NARROW:.*]] = arith.truncf %{{.*}} : vector<2xf32> to vector<2xf16>
// CHECK-NEXT: vector.store %[[NARROW]], %[[FINAL]]
// BAD-CHIP: warp-specialized=always, but the warp-specialised kernel cannot take the layer: it needs chip sm_90a

func.func @f16_states(%x: tensor<?x?x8x64xbf16>, %dt: tensor<?x?x8xf32>, %A: tensor<8xf32>, %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>, %D: tensor<8xf32>, %s0: tensor<?x8x64x128xf16>) -> (tensor<?x?x8x64xbf16>, tensor<?x8x64x128xf16>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x8x64xbf16>) dt(%dt : tensor<?x?x8xf32>) A(%A : tensor<8xf32>) B(%B : tensor<?x?x1x128xbf16>) C(%C : tensor<?x?x1x128xbf16>) D(%D : tensor<8xf32>) initial_states(%s0 : tensor<?x8x64x128xf16>) {chunk_size = 128 : i64, state_type = f16} -> tensor<?x?x8x64xbf16>, tensor<?x8x64x128xf16>
  return %y, %fs : tensor<?x?x8x64xbf16>, tensor<?x8x64x128xf16>
}
