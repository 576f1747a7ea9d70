// RUN: ssd-opt %s | ssd-opt | FileCheck %s
// RUN: ssd-opt %s --mlir-print-op-generic | ssd-opt | FileCheck %s

// Round trip of every step op, with and without its optional operands.
// ssd.combined in every optional-input combination: combined-roundtrip.py.

// CHECK-LABEL: func.func @combined_mamba2_layer
// CHECK-SAME: (%[[X:.*]]: tensor<1x?x80x64xbf16>, %[[DT:.*]]: tensor<1x?x80xf32>, %[[A:.*]]: tensor<80xf32>, %[[B:.*]]: tensor<1x?x1x128xbf16>, %[[C:.*]]: tensor<1x?x1x128xbf16>, %[[D:.*]]: tensor<80xf32>, %[[DB:.*]]: tensor<80xf32>)
// CHECK: ssd.combined x(%[[X]] : tensor<1x?x80x64xbf16>) dt(%[[DT]] : tensor<1x?x80xf32>) A(%[[A]] : tensor<80xf32>) B(%[[B]] : tensor<1x?x1x128xbf16>) C(%[[C]] : tensor<1x?x1x128xbf16>) D(%[[D]] : tensor<80xf32>) dt_bias(%[[DB]] : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
func.func @combined_mamba2_layer(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}

// CHECK-LABEL: func.func @chunk_cumsum
// CHECK: ssd.chunk_cumsum dt(%{{.*}} : tensor<2x100x4xf32>) A(%{{.*}} : tensor<4xf32>) -> tensor<2x4x2x64xf32>, tensor<2x4x2x64xf32>
// CHECK: ssd.chunk_cumsum dt(%{{.*}} : tensor<2x100x4xf32>) A(%{{.*}} : tensor<4xf32>) dt_bias(%{{.*}} : tensor<4xf32>) {dt_limit = array<f64: 1.000000e-03, 2.000000e-01>, dt_softplus} -> tensor<2x4x4x32xf32>, tensor<2x4x4x32xf32>
// CHECK: ssd.chunk_cumsum dt(%{{.*}} : tensor<1x150x4xf32>) A(%{{.*}} : tensor<4xf32>) cu_seqlens(%{{.*}} : tensor<4xi32>) -> tensor<1x4x5x64xf32>, tensor<1x4x5x64xf32>
// CHECK: ssd.chunk_cumsum dt(%{{.*}} : tensor<?x?x4xf32>) A(%{{.*}} : tensor<4xf32>) -> tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>
func.func @chunk_cumsum(%dt: tensor<2x100x4xf32>, %A: tensor<4xf32>, %db: tensor<4xf32>, %dtv: tensor<1x150x4xf32>, %cu: tensor<4xi32>, %dtd: tensor<?x?x4xf32>) {
  %0:2 = ssd.chunk_cumsum dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) -> tensor<2x4x2x64xf32>, tensor<2x4x2x64xf32>
  %1:2 = ssd.chunk_cumsum dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) dt_bias(%db : tensor<4xf32>) {dt_softplus, dt_limit = array<f64: 0.001, 0.2>} -> tensor<2x4x4x32xf32>, tensor<2x4x4x32xf32>
  %2:2 = ssd.chunk_cumsum dt(%dtv : tensor<1x150x4xf32>) A(%A : tensor<4xf32>) cu_seqlens(%cu : tensor<4xi32>) -> tensor<1x4x5x64xf32>, tensor<1x4x5x64xf32>
  %3:2 = ssd.chunk_cumsum dt(%dtd : tensor<?x?x4xf32>) A(%A : tensor<4xf32>) -> tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>
  return
}

// CHECK-LABEL: func.func @segsum
// CHECK: ssd.segsum dA_cumsum(%{{.*}} : tensor<2x4x2x64xf32>) -> tensor<2x4x2x64x64xf32>
func.func @segsum(%dA: tensor<2x4x2x64xf32>) -> tensor<2x4x2x64x64xf32> {
  %0 = ssd.segsum dA_cumsum(%dA : tensor<2x4x2x64xf32>) -> tensor<2x4x2x64x64xf32>
  return %0 : tensor<2x4x2x64x64xf32>
}

// CHECK-LABEL: func.func @bmm
// CHECK: ssd.bmm C(%[[C:.*]] : tensor<2x96x2x16xf16>) B(%[[B:.*]] : tensor<2x96x2x16xf16>) -> tensor<2x3x2x32x32xf32>
// CHECK: ssd.bmm C(%[[C]] : tensor<2x96x2x16xf16>) B(%[[B]] : tensor<2x96x2x16xf16>) seq_idx(%{{.*}} : tensor<2x96xi32>) -> tensor<2x3x2x32x32xf32>
// CHECK: ssd.bmm C(%{{.*}} : tensor<1x150x1x16xf32>) B(%{{.*}} : tensor<1x150x1x16xf32>) cu_seqlens(%{{.*}} : tensor<4xi32>) -> tensor<1x5x1x64x64xf32>
func.func @bmm(%C: tensor<2x96x2x16xf16>, %B: tensor<2x96x2x16xf16>, %si: tensor<2x96xi32>, %Cv: tensor<1x150x1x16xf32>, %Bv: tensor<1x150x1x16xf32>, %cu: tensor<4xi32>) {
  %0 = ssd.bmm C(%C : tensor<2x96x2x16xf16>) B(%B : tensor<2x96x2x16xf16>) -> tensor<2x3x2x32x32xf32>
  %1 = ssd.bmm C(%C : tensor<2x96x2x16xf16>) B(%B : tensor<2x96x2x16xf16>) seq_idx(%si : tensor<2x96xi32>) -> tensor<2x3x2x32x32xf32>
  %2 = ssd.bmm C(%Cv : tensor<1x150x1x16xf32>) B(%Bv : tensor<1x150x1x16xf32>) cu_seqlens(%cu : tensor<4xi32>) -> tensor<1x5x1x64x64xf32>
  return
}

// CHECK-LABEL: func.func @chunk_state
// CHECK: ssd.chunk_state x(%{{.*}} : tensor<2x96x4x8xbf16>) B(%{{.*}} : tensor<2x96x2x16xbf16>) dt(%{{.*}} : tensor<2x4x3x32xf32>) dA_cumsum(%{{.*}} : tensor<2x4x3x32xf32>) -> tensor<2x3x4x8x16xf32>
// CHECK: ssd.chunk_state {{.*}} seq_idx(%{{.*}} : tensor<2x96xi32>) -> tensor<2x3x4x8x16xf16>
func.func @chunk_state(%x: tensor<2x96x4x8xbf16>, %B: tensor<2x96x2x16xbf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %si: tensor<2x96xi32>) {
  %0 = ssd.chunk_state x(%x : tensor<2x96x4x8xbf16>) B(%B : tensor<2x96x2x16xbf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) -> tensor<2x3x4x8x16xf32>
  %1 = ssd.chunk_state x(%x : tensor<2x96x4x8xbf16>) B(%B : tensor<2x96x2x16xbf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) seq_idx(%si : tensor<2x96xi32>) -> tensor<2x3x4x8x16xf16>
  return
}

// CHECK-LABEL: func.func @state_passing
// CHECK: ssd.state_passing states(%{{.*}} : tensor<2x3x4x8x16xf32>) dA_cumsum(%{{.*}} : tensor<2x4x3x32xf32>) -> tensor<2x3x4x8x16xf32>, tensor<2x4x8x16xf32>
// CHECK: ssd.state_passing states(%{{.*}} : tensor<2x3x4x8x16xf32>) dA_cumsum(%{{.*}} : tensor<2x4x3x32xf32>) initial_states(%{{.*}} : tensor<2x4x8x16xf16>) seq_idx(%{{.*}} : tensor<2x96xi32>) -> tensor<2x3x4x8x16xf16>, tensor<2x4x8x16xf16>
// CHECK: ssd.state_passing states(%{{.*}} : tensor<1x5x4x8x16xf32>) dA_cumsum(%{{.*}} : tensor<1x4x5x64xf32>) initial_states(%{{.*}} : tensor<3x4x8x16xf32>) cu_seqlens(%{{.*}} : tensor<4xi32>) -> tensor<1x5x4x8x16xf32>, tensor<3x4x8x16xf32>
func.func @state_passing(%s: tensor<2x3x4x8x16xf32>, %dA: tensor<2x4x3x32xf32>, %init: tensor<2x4x8x16xf16>, %si: tensor<2x96xi32>, %sv: tensor<1x5x4x8x16xf32>, %dAv: tensor<1x4x5x64xf32>, %initv: tensor<3x4x8x16xf32>, %cu: tensor<4xi32>) {
  %0:2 = ssd.state_passing states(%s : tensor<2x3x4x8x16xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) -> tensor<2x3x4x8x16xf32>, tensor<2x4x8x16xf32>
  %1:2 = ssd.state_passing states(%s : tensor<2x3x4x8x16xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) initial_states(%init : tensor<2x4x8x16xf16>) seq_idx(%si : tensor<2x96xi32>) -> tensor<2x3x4x8x16xf16>, tensor<2x4x8x16xf16>
  %2:2 = ssd.state_passing states(%sv : tensor<1x5x4x8x16xf32>) dA_cumsum(%dAv : tensor<1x4x5x64xf32>) initial_states(%initv : tensor<3x4x8x16xf32>) cu_seqlens(%cu : tensor<4xi32>) -> tensor<1x5x4x8x16xf32>, tensor<3x4x8x16xf32>
  return
}

// CHECK-LABEL: func.func @chunk_scan
// CHECK: ssd.chunk_scan x(%{{.*}} : tensor<2x96x4x8xf16>) dt(%{{.*}} : tensor<2x4x3x32xf32>) dA_cumsum(%{{.*}} : tensor<2x4x3x32xf32>) segsum(%{{.*}} : tensor<2x4x3x32x32xf32>) C(%{{.*}} : tensor<2x96x2x16xf16>) CB(%{{.*}} : tensor<2x3x2x32x32xf32>) states(%{{.*}} : tensor<2x3x4x8x16xf32>) -> tensor<2x96x4x8xf16>
// CHECK: ssd.chunk_scan {{.*}} D(%{{.*}} : tensor<4x8xf32>) z(%{{.*}} : tensor<2x96x4x8xf16>) seq_idx(%{{.*}} : tensor<2x96xi32>) -> tensor<2x96x4x8xf16>
// CHECK: ssd.chunk_scan {{.*}} D(%{{.*}} : tensor<4xf32>) -> tensor<2x96x4x8xf16>
func.func @chunk_scan(%x: tensor<2x96x4x8xf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %seg: tensor<2x4x3x32x32xf32>, %C: tensor<2x96x2x16xf16>, %CB: tensor<2x3x2x32x32xf32>, %s: tensor<2x3x4x8x16xf32>, %Dhp: tensor<4x8xf32>, %Dh: tensor<4xf32>, %z: tensor<2x96x4x8xf16>, %si: tensor<2x96xi32>) {
  %0 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) -> tensor<2x96x4x8xf16>
  %1 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) D(%Dhp : tensor<4x8xf32>) z(%z : tensor<2x96x4x8xf16>) seq_idx(%si : tensor<2x96xi32>) -> tensor<2x96x4x8xf16>
  %2 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) D(%Dh : tensor<4xf32>) -> tensor<2x96x4x8xf16>
  return
}

// CHECK-LABEL: func.func @fused
// CHECK: ssd.fused x(%{{.*}} : tensor<1x?x80x64xbf16>) dt(%{{.*}} : tensor<1x?x80xf32>) A(%{{.*}} : tensor<80xf32>) B(%{{.*}} : tensor<1x?x1x128xbf16>) C(%{{.*}} : tensor<1x?x1x128xbf16>) D(%{{.*}} : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus, p_block = 32 : i64} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
// CHECK: ssd.fused {{.*}} cu_seqlens(%{{.*}} : tensor<3xi32>) {chunk_size = 64 : i64, state_type = f16} -> tensor<1x?x80x64xbf16>, tensor<2x80x64x128xf16>
func.func @fused(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %init: tensor<2x80x64x128xf16>, %cu: tensor<3xi32>) {
  %y, %fs = ssd.fused x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus, p_block = 32 : i64} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  %y2, %fs2 = ssd.fused x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) initial_states(%init : tensor<2x80x64x128xf16>) cu_seqlens(%cu : tensor<3xi32>) {chunk_size = 64 : i64, state_type = f16} -> tensor<1x?x80x64xbf16>, tensor<2x80x64x128xf16>
  return
}
