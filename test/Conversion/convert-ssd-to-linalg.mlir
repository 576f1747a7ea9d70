// RUN: ssd-opt %s --convert-ssd-to-linalg --canonicalize --cse | FileCheck %s

// The indexing maps are printed once at the top of the module.
// CHECK-DAG: #[[$BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$J5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$I5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5, d3)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5, d4)>
// CHECK-DAG: #[[$CB:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$LAST:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 31)>
// CHECK-DAG: #[[$XS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6, d4)>
// CHECK-DAG: #[[$BS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6, d5)>
// CHECK-DAG: #[[$ST:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-DAG: #[[$CS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6, d4)>
// CHECK-DAG: #[[$SS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6, d5)>
// CHECK-DAG: #[[$SEGT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1, d5, d4)>
// CHECK-DAG: #[[$DHP:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>

// dt processing in chunk-major layout: token = c*Q + q, padding past L reads
// token 0 and yields 0; bias, softplus (identity above 20), clamp. Then the
// within-chunk inclusive cumsum as a scan over the chunk positions: one
// elementwise step over (b, h, c) per position, carrying the running sums.

// CHECK-LABEL: func.func @chunk_cumsum
// CHECK-SAME: (%[[DT:.*]]: tensor<2x?x4xf32>, %[[A:.*]]: tensor<4xf32>, %[[BIAS:.*]]: tensor<4xf32>)
// CHECK: %[[L:.*]] = tensor.dim %[[DT]], %{{.*}} : tensor<2x?x4xf32>
// CHECK: %[[NC:.*]] = arith.ceildivui %[[L]], %{{.*}} : index
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[NC]]) : tensor<2x4x?x16xf32>
// CHECK: %[[DTOUT:.*]] = linalg.generic {indexing_maps = [#[[$BIAS]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[BIAS]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<2x4x?x16xf32>)
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %[[L]] : index
// CHECK: %[[X:.*]] = tensor.extract %[[DT]]
// CHECK: %[[B:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK: arith.cmpf ogt, %[[B]]
// CHECK: math.exp
// CHECK: math.log1p
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.select %[[VALID]]
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x?x1xf32>)
// CHECK: %[[SCAN:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[RS:.*]] = %[[ZERO]], %[[ACC:.*]] = %[[EMPTY]])
// CHECK: %[[COL:.*]] = tensor.extract_slice %[[DTOUT]][0, 0, 0, %[[I]]] [2, 4, %[[NC]], 1] [1, 1, 1, 1]
// CHECK: %[[SUMCOL:.*]] = tensor.extract_slice %[[ACC]][0, 0, 0, %[[I]]] [2, 4, %[[NC]], 1] [1, 1, 1, 1]
// CHECK: %[[NEXT:.*]]:2 = linalg.generic {indexing_maps = [#[[$BIAS]], #[[$ID4]], #[[$ID4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[COL]] : tensor<4xf32>, tensor<2x4x?x1xf32>) outs(%[[RS]], %[[SUMCOL]] : tensor<2x4x?x1xf32>, tensor<2x4x?x1xf32>)
// CHECK: %[[T:.*]] = arith.mulf
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[T]]
// CHECK: linalg.yield %[[S]], %[[S]]
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[NEXT]]#1 into %[[ACC]][0, 0, 0, %[[I]]] [2, 4, %[[NC]], 1] [1, 1, 1, 1]
// CHECK: scf.yield %[[NEXT]]#0, %[[INS]]
// CHECK: return %[[DTOUT]], %[[SCAN]]#1
func.func @chunk_cumsum(%dt: tensor<2x?x4xf32>, %A: tensor<4xf32>, %bias: tensor<4xf32>) -> (tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>) {
  %o, %c = ssd.chunk_cumsum dt(%dt : tensor<2x?x4xf32>) A(%A : tensor<4xf32>) dt_bias(%bias : tensor<4xf32>) {dt_softplus, dt_limit = array<f64: 0.001, 0.2>} -> tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>
  return %o, %c : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>
}

// Without dt_limit only the lower clamp at 0 remains (hi = +inf).
// CHECK-LABEL: func.func @chunk_cumsum_plain
// CHECK: arith.maximumf
// CHECK-NOT: arith.minimumf
// CHECK: return
func.func @chunk_cumsum_plain(%dt: tensor<1x64x2xf32>, %A: tensor<2xf32>) -> (tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>) {
  %o, %c = ssd.chunk_cumsum dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) -> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
  return %o, %c : tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>
}

// CHECK-LABEL: func.func @segsum
// CHECK-SAME: (%[[DA:.*]]: tensor<2x4x3x16xf32>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#[[$I5]], #[[$J5]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[DA]], %[[DA]] : tensor<2x4x3x16xf32>, tensor<2x4x3x16xf32>)
// CHECK: %[[I:.*]] = linalg.index 3
// CHECK: %[[J:.*]] = linalg.index 4
// CHECK: %[[CAUSAL:.*]] = arith.cmpi uge, %[[I]], %[[J]]
// CHECK: %[[D:.*]] = arith.subf
// CHECK: arith.select %[[CAUSAL]], %[[D]], %[[NEGINF]]
func.func @segsum(%da: tensor<2x4x3x16xf32>) -> tensor<2x4x3x16x16xf32> {
  %s = ssd.segsum dA_cumsum(%da : tensor<2x4x3x16xf32>) -> tensor<2x4x3x16x16xf32>
  return %s : tensor<2x4x3x16x16xf32>
}

// C and B gathered (widened to f32, zero padded) as (b,nc,g,n,Q) tiles, CB as
// a contraction over n, then the seq_idx mask.
// CHECK-LABEL: func.func @bmm
// CHECK-SAME: (%[[C:.*]]: tensor<2x40x1x8xbf16>, %[[B:.*]]: tensor<2x40x1x8xbf16>, %[[SI:.*]]: tensor<2x40xi32>)
// CHECK: %[[CTILES:.*]] = linalg.generic
// CHECK: tensor.extract %[[C]]
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: } -> tensor<2x3x1x8x16xf32>
// CHECK: %[[BTILES:.*]] = linalg.generic
// CHECK: tensor.extract %[[B]]
// CHECK: } -> tensor<2x3x1x8x16xf32>
// CHECK: %[[CB:.*]] = linalg.generic {indexing_maps = [#[[$CT]], #[[$BT]], #[[$CB]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[CTILES]], %[[BTILES]] : tensor<2x3x1x8x16xf32>, tensor<2x3x1x8x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[IDS:.*]] = linalg.generic
// CHECK: tensor.extract %[[SI]]
// CHECK: } -> tensor<2x3x16xi32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[IDS]], %[[IDS]] : tensor<2x3x16xi32>, tensor<2x3x16xi32>) outs(%[[CB]] : tensor<2x3x1x16x16xf32>)
// CHECK: arith.cmpi eq
func.func @bmm(%C: tensor<2x40x1x8xbf16>, %B: tensor<2x40x1x8xbf16>, %si: tensor<2x40xi32>) -> tensor<2x3x1x16x16xf32> {
  %cb = ssd.bmm C(%C : tensor<2x40x1x8xbf16>) B(%B : tensor<2x40x1x8xbf16>) seq_idx(%si : tensor<2x40xi32>) -> tensor<2x3x1x16x16xf32>
  return %cb : tensor<2x3x1x16x16xf32>
}

// Token weights exp(dA[Q-1] - dA[l]) * dt (masked to the chunk's last
// sequence), x tiles (b,nc,g,h/g,Q,p) scaled by them, then the contraction
// over chunk positions with B tiles (b,nc,g,Q,n); heads merged back.
// CHECK-LABEL: func.func @chunk_state
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4x8xf16>, %[[B:.*]]: tensor<?x?x2x16xf16>, %[[DT:.*]]: tensor<?x4x?x32xf32>, %[[DA:.*]]: tensor<?x4x?x32xf32>, %[[SI:.*]]: tensor<?x?xi32>)
// CHECK: %[[W:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]], #[[$LAST]], #[[$ID4]]]
// CHECK-SAME: ins(%[[DT]], %[[DA]], %[[DA]] :
// The decay is exp of the cumsum difference itself, not clamped at 0 (the
// semantics compute A dt > 0 as growth).
// CHECK: arith.subf
// CHECK-NOT: arith.minimumf
// CHECK: math.exp
// CHECK: tensor.extract %[[SI]]
// CHECK: tensor.extract %[[SI]]
// CHECK: arith.cmpi eq
// CHECK: %[[WE:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2], [3], [4]]
// CHECK: %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3], [4]]
// CHECK: %[[XT:.*]] = linalg.generic
// CHECK: tensor.extract %[[XE]]
// CHECK: } -> tensor<?x?x2x2x32x8xf32>
// x w goes into a tile of its own (the gathered x tiles stay unscaled for
// whoever else reads them).
// CHECK: %[[XW:.*]] = linalg.generic
// CHECK-SAME: ins(%[[WE]], %[[XT]] : tensor<?x2x2x?x32xf32>, tensor<?x?x2x2x32x8xf32>) outs(%{{.*}} : tensor<?x?x2x2x32x8xf32>)
// CHECK: %[[BT:.*]] = linalg.generic
// CHECK: tensor.extract %[[B]]
// CHECK: } -> tensor<?x?x2x32x16xf32>
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$XS]], #[[$BS]], #[[$ST]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[XW]], %[[BT]] : tensor<?x?x2x2x32x8xf32>, tensor<?x?x2x32x16xf32>)
// CHECK: tensor.collapse_shape %[[S]] {{\[\[}}0], [1], [2, 3], [4], [5]] : tensor<?x?x2x2x8x16xf32> into tensor<?x?x4x8x16xf32>
func.func @chunk_state(%x: tensor<?x?x4x8xf16>, %B: tensor<?x?x2x16xf16>, %dt: tensor<?x4x?x32xf32>, %da: tensor<?x4x?x32xf32>, %si: tensor<?x?xi32>) -> tensor<?x?x4x8x16xf32> {
  %s = ssd.chunk_state x(%x : tensor<?x?x4x8xf16>) B(%B : tensor<?x?x2x16xf16>) dt(%dt : tensor<?x4x?x32xf32>) dA_cumsum(%da : tensor<?x4x?x32xf32>) seq_idx(%si : tensor<?x?xi32>) -> tensor<?x?x4x8x16xf32>
  return %s : tensor<?x?x4x8x16xf32>
}

// Sequential over chunks: store the f16 state at the chunk start, then
// s = carry * s + states[c] with carry 0 on a seq_idx change. The reset
// flags are bytes (i8), never i1 tensors: a vector<Nxi1> store packs bits
// while a memref of i1 is read a byte an element (a one-token sequence's
// folded flags read back garbage past the first batch row).
// CHECK-LABEL: func.func @state_passing
// CHECK-SAME: (%[[ST:.*]]: tensor<?x?x4x8x16xf32>, %[[DA:.*]]: tensor<?x4x?x32xf32>, %[[INIT:.*]]: tensor<?x4x8x16xf16>, %[[SI:.*]]: tensor<?x?xi32>)
// CHECK: %[[NC:.*]] = tensor.dim %[[ST]], %c1 : tensor<?x?x4x8x16xf32>
// CHECK: %[[OUT0:.*]] = linalg.fill
// CHECK: %[[S0:.*]] = linalg.generic
// CHECK-SAME: ins(%[[INIT]] : tensor<?x4x8x16xf16>)
// CHECK: arith.extf
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[C:.*]] = %{{.*}} to %[[NC]] step %{{.*}} iter_args(%[[S:.*]] = %[[S0]], %[[OUT:.*]] = %[[OUT0]])
// CHECK: arith.truncf
// CHECK: tensor.insert_slice %{{.*}} into %[[OUT]][0, %[[C]], 0, 0, 0]
// CHECK: %[[RESET:.*]] = linalg.generic
// CHECK: %[[CHANGED:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[BYTE:.*]] = arith.extui %[[CHANGED]] : i1 to i8
// CHECK-NEXT: linalg.yield %[[BYTE]] : i8
// CHECK-NEXT: } -> tensor<?xi8>
// CHECK: %[[END:.*]] = tensor.extract_slice %[[DA]][0, 0, %[[C]], 31] [%{{.*}}, 4, 1, 1]
// CHECK: %[[CARRY:.*]] = linalg.generic
// CHECK-SAME: ins(%[[END]], %[[RESET]] : tensor<?x4x1x1xf32>, tensor<?xi8>)
// CHECK: math.exp
// CHECK: arith.cmpi ne, %{{.*}}, %c0_i8 : i8
// CHECK: tensor.extract_slice %[[ST]][0, %[[C]], 0, 0, 0]
// CHECK: %[[NEXT:.*]] = linalg.generic
// CHECK-SAME: outs(%[[S]] : tensor<?x4x8x16xf32>)
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[FINAL:.*]] = linalg.generic
// CHECK-SAME: ins(%[[LOOP]]#0 : tensor<?x4x8x16xf32>)
// CHECK: arith.truncf
// CHECK: return %[[LOOP]]#1, %[[FINAL]]
func.func @state_passing(%st: tensor<?x?x4x8x16xf32>, %da: tensor<?x4x?x32xf32>, %init: tensor<?x4x8x16xf16>, %si: tensor<?x?xi32>) -> (tensor<?x?x4x8x16xf16>, tensor<?x4x8x16xf16>) {
  %o, %f = ssd.state_passing states(%st : tensor<?x?x4x8x16xf32>) dA_cumsum(%da : tensor<?x4x?x32xf32>) initial_states(%init : tensor<?x4x8x16xf16>) seq_idx(%si : tensor<?x?xi32>) -> tensor<?x?x4x8x16xf16>, tensor<?x4x8x16xf16>
  return %o, %f : tensor<?x?x4x8x16xf16>, tensor<?x4x8x16xf16>
}

// Varlen: chunk tables built by scf loops over sequences, then one chain per
// sequence from its own initial state; final states start as the initial
// ones so empty sequences keep theirs.
// CHECK-LABEL: func.func @state_passing_varlen
// CHECK-SAME: (%[[ST:.*]]: tensor<1x6x2x4x8xf32>, %[[DA:.*]]: tensor<1x2x6x16xf32>, %[[INIT:.*]]: tensor<3x2x4x8xf32>, %[[CU:.*]]: tensor<4xi32>)
// CHECK: scf.for
// CHECK: tensor.extract %[[CU]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[SEQ:.*]]:2 = scf.for %[[I:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[FIN:.*]] = %[[INIT]])
// CHECK: tensor.extract_slice %[[INIT]][%[[I]], 0, 0, 0] [1, 2, 4, 8]
// CHECK: scf.for
// CHECK: tensor.insert_slice %{{.*}} into %[[FIN]][%[[I]], 0, 0, 0] [1, 2, 4, 8]
// CHECK: return %[[SEQ]]#0, %[[SEQ]]#1
func.func @state_passing_varlen(%st: tensor<1x6x2x4x8xf32>, %da: tensor<1x2x6x16xf32>, %init: tensor<3x2x4x8xf32>, %cu: tensor<4xi32>) -> (tensor<1x6x2x4x8xf32>, tensor<3x2x4x8xf32>) {
  %o, %f = ssd.state_passing states(%st : tensor<1x6x2x4x8xf32>) dA_cumsum(%da : tensor<1x2x6x16xf32>) initial_states(%init : tensor<3x2x4x8xf32>) cu_seqlens(%cu : tensor<4xi32>) -> tensor<1x6x2x4x8xf32>, tensor<3x2x4x8xf32>
  return %o, %f : tensor<1x6x2x4x8xf32>, tensor<3x2x4x8xf32>
}

// The output: C tiles times transposed states, scaled by exp(min(dA, 0)),
// plus the causal W = CB * exp(min(segsum, 0)) * dt (stored as (j, i), from
// CB transposed once so that each head's rows read it contiguously) times
// x tiles, scattered back to tokens with D (per channel) and z gating.
// CHECK-LABEL: func.func @chunk_scan
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x64x4x8xbf16>, %[[DT:[^:]*]]: tensor<1x4x2x32xf32>, %[[DA:[^:]*]]: tensor<1x4x2x32xf32>, %[[SEG:[^:]*]]: tensor<1x4x2x32x32xf32>, %[[C:[^:]*]]: tensor<1x64x2x16xbf16>, %[[CB:[^:]*]]: tensor<1x2x2x32x32xf32>, %[[ST:[^:]*]]: tensor<1x2x4x8x16xf32>, %[[D:[^:]*]]: tensor<4x8xf32>, %[[Z:[^:]*]]: tensor<1x64x4x8xbf16>)
// CHECK: %[[CT:.*]] = linalg.generic
// CHECK: tensor.extract %[[C]]
// CHECK: } -> tensor<1x2x2x16x32xf32>
// CHECK: %[[SE:.*]] = tensor.expand_shape %[[ST]]
// CHECK: %[[STT:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SE]] : tensor<1x2x2x2x8x16xf32>)
// CHECK: } -> tensor<1x2x2x2x16x8xf32>
// CHECK: %[[Y0:.*]] = linalg.generic {indexing_maps = [#[[$CS]], #[[$SS]], #[[$ST]]]
// CHECK-SAME: ins(%[[CT]], %[[STT]] :
// CHECK: %[[SCALE:.*]] = linalg.generic
// CHECK-SAME: ins(%[[DA]] : tensor<1x4x2x32xf32>)
// CHECK: %[[SCALEE:.*]] = tensor.expand_shape %[[SCALE]]
// CHECK: %[[Y1:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SCALEE]] : tensor<1x2x2x2x32xf32>) outs(%[[Y0]] : tensor<1x2x2x2x32x8xf32>)
// CHECK: %[[DTE:.*]] = tensor.expand_shape %[[DT]]
// CHECK: %[[CBT:.*]] = linalg.transpose ins(%[[CB]] : tensor<1x2x2x32x32xf32>) outs(%{{.*}} : tensor<1x2x2x32x32xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK: %[[SEGE:.*]] = tensor.expand_shape %[[SEG]]
// CHECK: %[[W:.*]] = linalg.generic {indexing_maps = [#[[$CBT:.*]], #{{.*}}, #[[$SEGT]], #{{.*}}]
// CHECK-SAME: ins(%[[CBT]], %[[DTE]], %[[SEGE]] :
// CHECK: arith.cmpi ule
// CHECK: %[[XT:.*]] = linalg.generic
// CHECK: } -> tensor<1x2x2x2x32x8xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$XS]], #[[$SS]], #[[$ST]]]
// CHECK-SAME: ins(%[[W]], %[[XT]] : tensor<1x2x2x2x32x32xf32>, tensor<1x2x2x2x32x8xf32>) outs(%[[Y1]] : tensor<1x2x2x2x32x8xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$DHP]], #[[$ID4]], #[[$ID4]]]
// CHECK-SAME: ins(%[[X]], %[[D]], %[[Z]] : tensor<1x64x4x8xbf16>, tensor<4x8xf32>, tensor<1x64x4x8xbf16>)
// CHECK: tensor.extract %[[Y]]
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[OUT]]
func.func @chunk_scan(%x: tensor<1x64x4x8xbf16>, %dt: tensor<1x4x2x32xf32>, %da: tensor<1x4x2x32xf32>, %seg: tensor<1x4x2x32x32xf32>, %C: tensor<1x64x2x16xbf16>, %cb: tensor<1x2x2x32x32xf32>, %st: tensor<1x2x4x8x16xf32>, %D: tensor<4x8xf32>, %z: tensor<1x64x4x8xbf16>) -> tensor<1x64x4x8xbf16> {
  %y = ssd.chunk_scan x(%x : tensor<1x64x4x8xbf16>) dt(%dt : tensor<1x4x2x32xf32>) dA_cumsum(%da : tensor<1x4x2x32xf32>) segsum(%seg : tensor<1x4x2x32x32xf32>) C(%C : tensor<1x64x2x16xbf16>) CB(%cb : tensor<1x2x2x32x32xf32>) states(%st : tensor<1x2x4x8x16xf32>) D(%D : tensor<4x8xf32>) z(%z : tensor<1x64x4x8xbf16>) -> tensor<1x64x4x8xbf16>
  return %y : tensor<1x64x4x8xbf16>
}

// When segsum is ssd.segsum of the same dA_cumsum, chunk_scan takes the
// differences itself and the (b,h,nc,Q,Q) segsum tensor is never built.
// CHECK-LABEL: func.func @chunk_scan_fused_segsum
// CHECK-SAME: %[[DA:[^:]*]]: tensor<1x2x2x16xf32>
// CHECK-NOT: 0xFF800000
// CHECK: %[[DAE:.*]] = tensor.expand_shape %[[DA]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %[[DAW:[^,]*]], %[[DAW]] :
// CHECK: arith.subf
// CHECK-NOT: 0xFF800000
// CHECK: return
func.func @chunk_scan_fused_segsum(%x: tensor<1x32x2x4xf32>, %dt: tensor<1x2x2x16xf32>, %da: tensor<1x2x2x16xf32>, %C: tensor<1x32x1x8xf32>, %cb: tensor<1x2x1x16x16xf32>, %st: tensor<1x2x2x4x8xf32>) -> tensor<1x32x2x4xf32> {
  %seg = ssd.segsum dA_cumsum(%da : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16x16xf32>
  %y = ssd.chunk_scan x(%x : tensor<1x32x2x4xf32>) dt(%dt : tensor<1x2x2x16xf32>) dA_cumsum(%da : tensor<1x2x2x16xf32>) segsum(%seg : tensor<1x2x2x16x16xf32>) C(%C : tensor<1x32x1x8xf32>) CB(%cb : tensor<1x2x1x16x16xf32>) states(%st : tensor<1x2x2x4x8xf32>) -> tensor<1x32x2x4xf32>
  return %y : tensor<1x32x2x4xf32>
}
