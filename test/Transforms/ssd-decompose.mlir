// RUN: ssd-opt %s --ssd-decompose --split-input-file | FileCheck %s
// RUN: ssd-opt %s --ssd-decompose=chunk-size=16 --split-input-file | FileCheck %s --check-prefix=Q16
// RUN: not ssd-opt %s --ssd-decompose=chunk-size=48 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADQ

// BADQ: ssd-decompose: chunk-size must be a positive power of two or 0, got 48

// No optional inputs: the five-kernel data flow, f32 state.
// CHECK-LABEL: func.func @minimal
// CHECK-SAME: (%[[X:.*]]: tensor<1x64x2x4xf32>, %[[DT:.*]]: tensor<1x64x2xf32>, %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<1x64x1x8xf32>, %[[C:.*]]: tensor<1x64x1x8xf32>)
// CHECK: %[[DTO:.*]], %[[DA:.*]] = ssd.chunk_cumsum dt(%[[DT]] : tensor<1x64x2xf32>) A(%[[A]] : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
// CHECK: %[[ST:.*]] = ssd.chunk_state x(%[[X]] : tensor<1x64x2x4xf32>) B(%[[B]] : tensor<1x64x1x8xf32>) dt(%[[DTO]] : tensor<1x2x2x32xf32>) dA_cumsum(%[[DA]] : tensor<1x2x2x32xf32>) -> tensor<1x2x2x4x8xf32>
// CHECK: %[[OUT:.*]], %[[FS:.*]] = ssd.state_passing states(%[[ST]] : tensor<1x2x2x4x8xf32>) dA_cumsum(%[[DA]] : tensor<1x2x2x32xf32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
// CHECK: %[[CB:.*]] = ssd.bmm C(%[[C]] : tensor<1x64x1x8xf32>) B(%[[B]] : tensor<1x64x1x8xf32>) -> tensor<1x2x1x32x32xf32>
// CHECK: %[[SEG:.*]] = ssd.segsum dA_cumsum(%[[DA]] : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
// CHECK: %[[Y:.*]] = ssd.chunk_scan x(%[[X]] : tensor<1x64x2x4xf32>) dt(%[[DTO]] : tensor<1x2x2x32xf32>) dA_cumsum(%[[DA]] : tensor<1x2x2x32xf32>) segsum(%[[SEG]] : tensor<1x2x2x32x32xf32>) C(%[[C]] : tensor<1x64x1x8xf32>) CB(%[[CB]] : tensor<1x2x1x32x32xf32>) states(%[[OUT]] : tensor<1x2x2x4x8xf32>) -> tensor<1x64x2x4xf32>
// CHECK-NOT: ssd.combined
// CHECK: return %[[Y]], %[[FS]]
// Q16-LABEL: func.func @minimal
// Q16: ssd.chunk_cumsum {{.*}} -> tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>
// Q16: ssd.bmm {{.*}} -> tensor<1x4x1x16x16xf32>
// Q16: ssd.chunk_scan {{.*}} -> tensor<1x64x2x4xf32>
func.func @minimal(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// Every optional input with seq_idx and f16 state: dt_bias, softplus and
// dt_limit go to chunk_cumsum, initial_states and seq_idx to state_passing,
// D, z and seq_idx to chunk_scan; chunk_state stays f32.
// CHECK-LABEL: func.func @all_features
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x100x4x8xbf16>, %[[DT:[^:]*]]: tensor<2x100x4xf32>, %[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<2x100x2x16xbf16>, %[[C:[^:]*]]: tensor<2x100x2x16xbf16>, %[[D:[^:]*]]: tensor<4x8xf32>, %[[Z:[^:]*]]: tensor<2x100x4x8xbf16>, %[[DB:[^:]*]]: tensor<4xf32>, %[[INIT:[^:]*]]: tensor<2x4x8x16xf16>, %[[SI:[^:]*]]: tensor<2x100xi32>)
// CHECK: %[[DTO:.*]], %[[DA:.*]] = ssd.chunk_cumsum dt(%[[DT]] : tensor<2x100x4xf32>) A(%[[A]] : tensor<4xf32>) dt_bias(%[[DB]] : tensor<4xf32>) {dt_limit = array<f64: 1.000000e-03, 2.000000e-01>, dt_softplus} -> tensor<2x4x4x32xf32>, tensor<2x4x4x32xf32>
// CHECK: %[[ST:.*]] = ssd.chunk_state x(%[[X]] : tensor<2x100x4x8xbf16>) B(%[[B]] : tensor<2x100x2x16xbf16>) dt(%[[DTO]] : {{.*}}) dA_cumsum(%[[DA]] : {{.*}}) seq_idx(%[[SI]] : tensor<2x100xi32>) -> tensor<2x4x4x8x16xf32>
// CHECK: %[[OUT:.*]], %[[FS:.*]] = ssd.state_passing states(%[[ST]] : tensor<2x4x4x8x16xf32>) dA_cumsum(%[[DA]] : {{.*}}) initial_states(%[[INIT]] : tensor<2x4x8x16xf16>) seq_idx(%[[SI]] : tensor<2x100xi32>) -> tensor<2x4x4x8x16xf16>, tensor<2x4x8x16xf16>
// CHECK: %[[CB:.*]] = ssd.bmm C(%[[C]] : {{.*}}) B(%[[B]] : {{.*}}) seq_idx(%[[SI]] : tensor<2x100xi32>) -> tensor<2x4x2x32x32xf32>
// CHECK: %[[SEG:.*]] = ssd.segsum dA_cumsum(%[[DA]] : {{.*}}) -> tensor<2x4x4x32x32xf32>
// CHECK: %[[Y:.*]] = ssd.chunk_scan x(%[[X]] : {{.*}}) dt(%[[DTO]] : {{.*}}) dA_cumsum(%[[DA]] : {{.*}}) segsum(%[[SEG]] : {{.*}}) C(%[[C]] : {{.*}}) CB(%[[CB]] : {{.*}}) states(%[[OUT]] : tensor<2x4x4x8x16xf16>) D(%[[D]] : tensor<4x8xf32>) z(%[[Z]] : tensor<2x100x4x8xbf16>) seq_idx(%[[SI]] : tensor<2x100xi32>) -> tensor<2x100x4x8xbf16>
// CHECK: return %[[Y]], %[[FS]]
func.func @all_features(%x: tensor<2x100x4x8xbf16>, %dt: tensor<2x100x4xf32>, %A: tensor<4xf32>, %B: tensor<2x100x2x16xbf16>, %C: tensor<2x100x2x16xbf16>, %D: tensor<4x8xf32>, %z: tensor<2x100x4x8xbf16>, %db: tensor<4xf32>, %init: tensor<2x4x8x16xf16>, %si: tensor<2x100xi32>) -> (tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>) {
  %y, %fs = ssd.combined x(%x : tensor<2x100x4x8xbf16>) dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x100x2x16xbf16>) C(%C : tensor<2x100x2x16xbf16>) D(%D : tensor<4x8xf32>) z(%z : tensor<2x100x4x8xbf16>) dt_bias(%db : tensor<4xf32>) initial_states(%init : tensor<2x4x8x16xf16>) seq_idx(%si : tensor<2x100xi32>) {chunk_size = 32 : i64, dt_softplus, dt_limit = array<f64: 0.001, 0.2>, state_type = f16} -> tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>
  return %y, %fs : tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>
}

// -----

// Varlen: cu_seqlens reaches every step that maps tokens to chunks, and the
// chunk dimension has room for one partial chunk per sequence boundary
// (ceil(150/64) + 3 - 1 = 5).
// CHECK-LABEL: func.func @varlen
// CHECK-SAME: %[[INIT:[^:]*]]: tensor<3x4x8x16xf32>, %[[CU:[^:]*]]: tensor<4xi32>)
// CHECK: ssd.chunk_cumsum {{.*}} cu_seqlens(%[[CU]] : tensor<4xi32>) -> tensor<1x4x5x64xf32>, tensor<1x4x5x64xf32>
// CHECK: ssd.chunk_state {{.*}} cu_seqlens(%[[CU]] : tensor<4xi32>) -> tensor<1x5x4x8x16xf32>
// CHECK: ssd.state_passing {{.*}} initial_states(%[[INIT]] : tensor<3x4x8x16xf32>) cu_seqlens(%[[CU]] : tensor<4xi32>) -> tensor<1x5x4x8x16xf32>, tensor<3x4x8x16xf32>
// CHECK: ssd.bmm {{.*}} cu_seqlens(%[[CU]] : tensor<4xi32>) -> tensor<1x5x1x64x64xf32>
// CHECK: ssd.segsum {{.*}} -> tensor<1x4x5x64x64xf32>
// CHECK: ssd.chunk_scan {{.*}} cu_seqlens(%[[CU]] : tensor<4xi32>) -> tensor<1x150x4x8xf32>
func.func @varlen(%x: tensor<1x150x4x8xf32>, %dt: tensor<1x150x4xf32>, %A: tensor<4xf32>, %B: tensor<1x150x1x16xf32>, %C: tensor<1x150x1x16xf32>, %init: tensor<3x4x8x16xf32>, %cu: tensor<4xi32>) -> (tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x150x4x8xf32>) dt(%dt : tensor<1x150x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x150x1x16xf32>) C(%C : tensor<1x150x1x16xf32>) initial_states(%init : tensor<3x4x8x16xf32>) cu_seqlens(%cu : tensor<4xi32>) {chunk_size = 64 : i64} -> tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>
  return %y, %fs : tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>
}

// -----

// Dynamic batch and seqlen give a dynamic chunk count.
// CHECK-LABEL: func.func @dynamic
// CHECK: ssd.chunk_cumsum {{.*}} -> tensor<?x80x?x128xf32>, tensor<?x80x?x128xf32>
// CHECK: ssd.chunk_state {{.*}} -> tensor<?x?x80x64x128xf32>
// CHECK: ssd.bmm {{.*}} -> tensor<?x?x1x128x128xf32>
// CHECK: ssd.chunk_scan {{.*}} -> tensor<?x?x80x64xf16>
func.func @dynamic(%x: tensor<?x?x80x64xf16>, %dt: tensor<?x?x80xf32>, %A: tensor<80xf32>, %B: tensor<?x?x1x128xf16>, %C: tensor<?x?x1x128xf16>) -> (tensor<?x?x80x64xf16>, tensor<?x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x80x64xf16>) dt(%dt : tensor<?x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<?x?x1x128xf16>) C(%C : tensor<?x?x1x128xf16>) {chunk_size = 128 : i64} -> tensor<?x?x80x64xf16>, tensor<?x80x64x128xf32>
  return %y, %fs : tensor<?x?x80x64xf16>, tensor<?x80x64x128xf32>
}
