// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --split-input-file | FileCheck %s
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse=p-block=8 --split-input-file | FileCheck %s --check-prefix=PBLOCK
// RUN: ssd-opt %s --ssd-fuse=emit-remarks --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=UNFUSED
// RUN: not ssd-opt %s --ssd-fuse=p-block=3 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADP

// BADP: ssd-fuse: p-block must be a power of two or 0, got 3

// A decomposed layer with every optional input fuses back into one op that
// carries every input and attribute.
// CHECK-LABEL: func.func @all_features
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x100x4x8xbf16>, %[[DT:[^:]*]]: tensor<2x100x4xf32>, %[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<2x100x2x16xbf16>, %[[C:[^:]*]]: tensor<2x100x2x16xbf16>, %[[D:[^:]*]]: tensor<4x8xf32>, %[[Z:[^:]*]]: tensor<2x100x4x8xbf16>, %[[DB:[^:]*]]: tensor<4xf32>, %[[INIT:[^:]*]]: tensor<2x4x8x16xf16>, %[[SI:[^:]*]]: tensor<2x100xi32>)
// CHECK-NEXT: %[[Y:.*]], %[[FS:.*]] = ssd.fused x(%[[X]] : tensor<2x100x4x8xbf16>) dt(%[[DT]] : tensor<2x100x4xf32>) A(%[[A]] : tensor<4xf32>) B(%[[B]] : tensor<2x100x2x16xbf16>) C(%[[C]] : tensor<2x100x2x16xbf16>) D(%[[D]] : tensor<4x8xf32>) z(%[[Z]] : tensor<2x100x4x8xbf16>) dt_bias(%[[DB]] : tensor<4xf32>) initial_states(%[[INIT]] : tensor<2x4x8x16xf16>) seq_idx(%[[SI]] : tensor<2x100xi32>) {chunk_size = 32 : i64, dt_limit = array<f64: 1.000000e-03, 2.000000e-01>, dt_softplus, state_type = f16} -> tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>
// CHECK-NEXT: return %[[Y]], %[[FS]]
// PBLOCK-LABEL: func.func @all_features
// PBLOCK: ssd.fused {{.*}}p_block = 8 : i64
// A p-block larger than the headdim (4) is not recorded.
// PBLOCK-LABEL: func.func @hand_written
// PBLOCK-NOT: p_block
func.func @all_features(%x: tensor<2x100x4x8xbf16>, %dt: tensor<2x100x4xf32>, %A: tensor<4xf32>, %B: tensor<2x100x2x16xbf16>, %C: tensor<2x100x2x16xbf16>, %D: tensor<4x8xf32>, %z: tensor<2x100x4x8xbf16>, %db: tensor<4xf32>, %init: tensor<2x4x8x16xf16>, %si: tensor<2x100xi32>) -> (tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>) {
  %y, %fs = ssd.combined x(%x : tensor<2x100x4x8xbf16>) dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x100x2x16xbf16>) C(%C : tensor<2x100x2x16xbf16>) D(%D : tensor<4x8xf32>) z(%z : tensor<2x100x4x8xbf16>) dt_bias(%db : tensor<4xf32>) initial_states(%init : tensor<2x4x8x16xf16>) seq_idx(%si : tensor<2x100xi32>) {chunk_size = 32 : i64, dt_softplus, dt_limit = array<f64: 0.001, 0.2>, state_type = f16} -> tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>
  return %y, %fs : tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf16>
}

// -----

// Varlen: cu_seqlens and the per-sequence initial states reach the fused op.
// CHECK-LABEL: func.func @varlen
// CHECK: ssd.fused {{.*}} initial_states(%{{.*}} : tensor<3x4x8x16xf32>) cu_seqlens(%{{.*}} : tensor<4xi32>) {chunk_size = 64 : i64} -> tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>
// CHECK-NOT: ssd.chunk
func.func @varlen(%x: tensor<1x150x4x8xf32>, %dt: tensor<1x150x4xf32>, %A: tensor<4xf32>, %B: tensor<1x150x1x16xf32>, %C: tensor<1x150x1x16xf32>, %init: tensor<3x4x8x16xf32>, %cu: tensor<4xi32>) -> (tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x150x4x8xf32>) dt(%dt : tensor<1x150x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x150x1x16xf32>) C(%C : tensor<1x150x1x16xf32>) initial_states(%init : tensor<3x4x8x16xf32>) cu_seqlens(%cu : tensor<4xi32>) {chunk_size = 64 : i64} -> tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>
  return %y, %fs : tensor<1x150x4x8xf32>, tensor<3x4x8x16xf32>
}

// -----

// Step ops written by hand, in another order, fuse too.
// CHECK-LABEL: func.func @hand_written
// CHECK-NEXT: ssd.fused {{.*}} seq_idx(%{{.*}} : tensor<1x64xi32>) {chunk_size = 32 : i64}
// CHECK-NEXT: return
// UNFUSED-LABEL: func.func @hand_written
// UNFUSED-NOT: ssd.chunk_scan
func.func @hand_written(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// Chains that are not one layer's computation stay as they are, and say why.
// UNFUSED-LABEL: func.func @cb_escapes
// UNFUSED: ssd.chunk_scan
// UNFUSED-NOT: ssd.fused
func.func @cb_escapes(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>, tensor<1x2x1x32x32xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: the CB intermediate has a user outside the chain}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs, %cb : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>, tensor<1x2x1x32x32xf32>
}

// -----

func.func @states_escape(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>, tensor<1x2x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: the passed states intermediate has a user outside the chain}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs, %out : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>, tensor<1x2x2x4x8xf32>
}

// -----

func.func @da_from_argument(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>, %dA2: tensor<1x2x2x32xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: chunk_scan's dA_cumsum is not produced by ssd.chunk_cumsum}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA2 : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @other_c(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>, %C2: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C2 : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: bmm and chunk_scan read different C}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @other_x(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>, %x2: tensor<1x64x2x4xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x2 : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: chunk_state and chunk_scan read different x}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @other_seq_idx(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>, %si2: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si2 : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: the steps do not share one seq_idx}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @missing_seq_idx(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: the steps do not share one seq_idx}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @f16_chunk_states(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf16>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf16>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: chunk_state accumulates in f16; the fused kernel accumulates chunk states in f32}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @segsum_of_other_cumsum(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %dt2, %dA2 = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) {dt_softplus} -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA2 : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: segsum reads another dA_cumsum than chunk_scan}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

func.func @final_states_used_early(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>, %si: tensor<1x64xi32>, %z0: tensor<1x64x2x4xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %dt_out, %dA = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  %st = ssd.chunk_state x(%x : tensor<1x64x2x4xf32>) B(%B : tensor<1x64x1x8xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>
  %out, %fs = ssd.state_passing states(%st : tensor<1x2x2x4x8xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>
  %cb = ssd.bmm C(%C : tensor<1x64x1x8xf32>) B(%B : tensor<1x64x1x8xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x2x1x32x32xf32>
  %seg = ssd.segsum dA_cumsum(%dA : tensor<1x2x2x32xf32>) -> tensor<1x2x2x32x32xf32>
  %early = tensor.extract %fs[%c0, %c0, %c0, %c0] : tensor<1x2x4x8xf32>
  %zs = tensor.insert %early into %z0[%c0, %c0, %c0, %c0] : tensor<1x64x2x4xf32>
  // expected-remark @+1 {{ssd-fuse: not fused: final_states is used before every input of the layer is defined}}
  %y = ssd.chunk_scan x(%x : tensor<1x64x2x4xf32>) dt(%dt_out : tensor<1x2x2x32xf32>) dA_cumsum(%dA : tensor<1x2x2x32xf32>) segsum(%seg : tensor<1x2x2x32x32xf32>) C(%C : tensor<1x64x1x8xf32>) CB(%cb : tensor<1x2x1x32x32xf32>) states(%out : tensor<1x2x2x4x8xf32>) z(%zs : tensor<1x64x2x4xf32>) seq_idx(%si : tensor<1x64xi32>) -> tensor<1x64x2x4xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
