// RUN: ssd-opt %s --ssd-split-sequence=segment-chunks=2 --canonicalize --cse --split-input-file | FileCheck %s
// RUN: ssd-opt %s --ssd-split-sequence="chunk-size=32 segment-chunks=1" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=Q32
// RUN: not ssd-opt %s --ssd-split-sequence=chunk-size=48 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: not ssd-opt %s --ssd-split-sequence=segment-chunks=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADSEG

// BADQ: ssd-split-sequence: chunk-size must be a positive power of two or 0, got 48
// BADSEG: ssd-split-sequence: segment-chunks must be positive, got 0

// 100 tokens in segments of 2 x 16: a loop over three segments of 32 tokens
// from a zero state, each segment's final state the next one's initial
// state, then one op on the last 4 tokens from the loop's state. Every
// token operand is sliced, the others and every attribute forwarded.
// CHECK-LABEL: func.func @tail
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x100x4x8xbf16>, %[[DT:[^:]*]]: tensor<2x100x4xf32>, %[[A:[^:]*]]: tensor<4xf32>, %[[B:[^:]*]]: tensor<2x100x2x16xbf16>, %[[C:[^:]*]]: tensor<2x100x2x16xbf16>, %[[D:[^:]*]]: tensor<4x8xf32>, %[[Z:[^:]*]]: tensor<2x100x4x8xbf16>, %[[DB:[^:]*]]: tensor<4xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2x4x8x16xf32>
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<2x100x4x8xbf16>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[S:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[YACC:.*]] = %[[EMPTY]], %[[ST:.*]] = %[[ZERO]])
// CHECK: %[[OFF:.*]] = arith.muli %[[S]], %[[C32]] : index
// CHECK-DAG: %[[ZS:.*]] = tensor.extract_slice %[[Z]][0, %[[OFF]], 0, 0] [2, 32, 4, 8] [1, 1, 1, 1]
// CHECK-DAG: %[[CS:.*]] = tensor.extract_slice %[[C]][0, %[[OFF]], 0, 0] [2, 32, 2, 16] [1, 1, 1, 1]
// CHECK-DAG: %[[BS:.*]] = tensor.extract_slice %[[B]][0, %[[OFF]], 0, 0] [2, 32, 2, 16] [1, 1, 1, 1]
// CHECK-DAG: %[[DTS:.*]] = tensor.extract_slice %[[DT]][0, %[[OFF]], 0] [2, 32, 4] [1, 1, 1]
// CHECK-DAG: %[[XS:.*]] = tensor.extract_slice %[[X]][0, %[[OFF]], 0, 0] [2, 32, 4, 8] [1, 1, 1, 1]
// CHECK: %[[YS:.*]], %[[FSS:.*]] = ssd.combined x(%[[XS]] : tensor<2x32x4x8xbf16>) dt(%[[DTS]] : tensor<2x32x4xf32>) A(%[[A]] : tensor<4xf32>) B(%[[BS]] : tensor<2x32x2x16xbf16>) C(%[[CS]] : tensor<2x32x2x16xbf16>) D(%[[D]] : tensor<4x8xf32>) z(%[[ZS]] : tensor<2x32x4x8xbf16>) dt_bias(%[[DB]] : tensor<4xf32>) initial_states(%[[ST]] : tensor<2x4x8x16xf32>) {chunk_size = 16 : i64, dt_limit = array<f64: 1.000000e-03, 2.000000e-01>, dt_softplus} -> tensor<2x32x4x8xbf16>, tensor<2x4x8x16xf32>
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[YS]] into %[[YACC]][0, %[[OFF]], 0, 0] [2, 32, 4, 8] [1, 1, 1, 1]
// CHECK: scf.yield %[[INS]], %[[FSS]]
// CHECK: } {ssd.segment_loop}
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][0, 96, 0, 0] [2, 4, 4, 8] [1, 1, 1, 1]
// CHECK: %[[YT:.*]], %[[FST:.*]] = ssd.combined x(%[[XT]] : tensor<2x4x4x8xbf16>) {{.*}} initial_states(%[[LOOP]]#1 : tensor<2x4x8x16xf32>) {chunk_size = 16 : i64, {{.*}}} -> tensor<2x4x4x8xbf16>, tensor<2x4x8x16xf32>
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[YT]] into %[[LOOP]]#0[0, 96, 0, 0] [2, 4, 4, 8] [1, 1, 1, 1]
// CHECK: return %[[Y]], %[[FST]]
// Segments of one 32-token chunk: the segment ops carry the chunk size the
// pass was given.
// Q32-LABEL: func.func @tail
// Q32: scf.for {{.*}} = %c0 to %c3 step %c1
// Q32: ssd.combined {{.*}} {chunk_size = 32 : i64, {{.*}}} -> tensor<2x32x4x8xbf16>
// Q32: ssd.combined {{.*}} {chunk_size = 32 : i64, {{.*}}} -> tensor<2x4x4x8xbf16>
func.func @tail(%x: tensor<2x100x4x8xbf16>, %dt: tensor<2x100x4xf32>, %A: tensor<4xf32>, %B: tensor<2x100x2x16xbf16>, %C: tensor<2x100x2x16xbf16>, %D: tensor<4x8xf32>, %z: tensor<2x100x4x8xbf16>, %db: tensor<4xf32>) -> (tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<2x100x4x8xbf16>) dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x100x2x16xbf16>) C(%C : tensor<2x100x2x16xbf16>) D(%D : tensor<4x8xf32>) z(%z : tensor<2x100x4x8xbf16>) dt_bias(%db : tensor<4xf32>) {chunk_size = 16 : i64, dt_softplus, dt_limit = array<f64: 0.001, 0.2>} -> tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf32>
  return %y, %fs : tensor<2x100x4x8xbf16>, tensor<2x4x8x16xf32>
}

// -----

// A whole number of segments starts from the op's initial states and needs
// no tail op.
// CHECK-LABEL: func.func @initial_states
// CHECK-SAME: %[[INIT:[^:]*]]: tensor<1x2x4x8xf32>)
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}, %[[ST:.*]] = %[[INIT]])
// CHECK: ssd.combined {{.*}} initial_states(%[[ST]] : tensor<1x2x4x8xf32>) {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
// CHECK: } {ssd.segment_loop}
// CHECK-NOT: ssd.combined
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
func.func @initial_states(%x: tensor<1x128x2x4xf32>, %dt: tensor<1x128x2xf32>, %A: tensor<2xf32>, %B: tensor<1x128x1x8xf32>, %C: tensor<1x128x1x8xf32>, %init: tensor<1x2x4x8xf32>) -> (tensor<1x128x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x128x2x4xf32>) dt(%dt : tensor<1x128x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x128x1x8xf32>) C(%C : tensor<1x128x1x8xf32>) initial_states(%init : tensor<1x2x4x8xf32>) {chunk_size = 32 : i64} -> tensor<1x128x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x128x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// A dynamic batch and length: a loop over the batch rows (each then a
// layer of one static row), and in each row L / 64 whole segments of two
// 32-token chunks, then one op on the L mod 64 tokens after them (none when
// L is a multiple of 64: an op over no tokens keeps its initial state). Each
// row starts from a zero state of one row; its final state is inserted as
// its row.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x2x4xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1x2x4x8xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[L:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK-DAG: %[[FINALS:.*]] = tensor.empty(%[[B]]) : tensor<?x2x4x8xf32>
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty(%[[B]], %[[L]]) : tensor<?x?x2x4xf32>
// CHECK: %[[ROWS:.*]]:2 = scf.for %[[R:.*]] = %[[C0]] to %[[B]] step %[[C1]] iter_args(%[[YACC:.*]] = %[[EMPTY]], %[[FACC:.*]] = %[[FINALS]])
// CHECK-DAG: %[[WHOLE:.*]] = arith.divui %[[L]], %[[C64]]
// CHECK-DAG: %[[START:.*]] = arith.muli %[[WHOLE]], %[[C64]]
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[S:.*]] = %[[C0]] to %[[WHOLE]] step %[[C1]] iter_args(%{{.*}} = %[[YACC]], %[[ST:.*]] = %[[ZERO]])
// CHECK: %[[OFF:.*]] = arith.muli %[[S]], %[[C64]]
// CHECK: tensor.extract_slice %[[X]][%[[R]], %[[OFF]], 0, 0] [1, 64, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x4xf32> to tensor<1x64x2x4xf32>
// CHECK: ssd.combined x(%{{.*}} : tensor<1x64x2x4xf32>) {{.*}} initial_states(%[[ST]] : tensor<1x2x4x8xf32>) {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[R]], %[[OFF]], 0, 0] [1, 64, 2, 4]
// CHECK: } {ssd.segment_loop}
// CHECK: %[[REST:.*]] = arith.subi %[[L]], %[[START]]
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[R]], %[[START]], 0, 0] [1, %[[REST]], 2, 4] [1, 1, 1, 1]
// CHECK: %[[YT:.*]], %[[FST:.*]] = ssd.combined x(%[[XT]] : tensor<1x?x2x4xf32>) {{.*}} initial_states(%[[LOOP]]#1 : tensor<1x2x4x8xf32>)
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[YT]] into %[[LOOP]]#0[%[[R]], %[[START]], 0, 0]
// CHECK: %[[F:.*]] = tensor.insert_slice %[[FST]] into %[[FACC]][%[[R]], 0, 0, 0] [1, 2, 4, 8]
// CHECK: scf.yield %[[Y]], %[[F]]
// CHECK: } {ssd.sequence_loop}
// CHECK: return %[[ROWS]]#0, %[[ROWS]]#1
func.func @dynamic(%x: tensor<?x?x2x4xf32>, %dt: tensor<?x?x2xf32>, %A: tensor<2xf32>, %B: tensor<?x?x1x8xf32>, %C: tensor<?x?x1x8xf32>) -> (tensor<?x?x2x4xf32>, tensor<?x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x2x4xf32>) dt(%dt : tensor<?x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<?x?x1x8xf32>) C(%C : tensor<?x?x1x8xf32>) {chunk_size = 32 : i64} -> tensor<?x?x2x4xf32>, tensor<?x2x4x8xf32>
  return %y, %fs : tensor<?x?x2x4xf32>, tensor<?x2x4x8xf32>
}

// -----

// cu_seqlens: a loop over the sequences, each on its tokens [cu[i],
// cu[i + 1]) (clamped into [0, L], non-decreasing) from its row of the
// initial states, walked in segments of 2 x 16 tokens and one op on the rest
// (possibly none), its final state inserted as row i. The ops take no
// cu_seqlens.
// CHECK-LABEL: func.func @packed
// CHECK-SAME: %[[INIT:[^:]*]]: tensor<3x2x4x8xf32>, %[[CU:[^:]*]]: tensor<4xi32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C100:.*]] = arith.constant 100 : index
// CHECK-DAG: %[[FINALS:.*]] = tensor.empty() : tensor<3x2x4x8xf32>
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<1x100x2x4xf32>
// CHECK: %[[SEQS:.*]]:2 = scf.for %[[I:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[YACC:.*]] = %[[EMPTY]], %[[FACC:.*]] = %[[FINALS]])
// CHECK: %[[E0:.*]] = tensor.extract %[[CU]][%[[I]]] : tensor<4xi32>
// CHECK: %[[S0:.*]] = arith.index_cast %[[E0]] : i32 to index
// CHECK: %[[M0:.*]] = arith.maxsi %[[S0]], %[[C0]]
// CHECK: %[[FIRST:.*]] = arith.minsi %[[M0]], %[[C100]]
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]], %[[C1]]
// CHECK: %[[E1:.*]] = tensor.extract %[[CU]][%[[NEXT]]] : tensor<4xi32>
// CHECK: %[[S1:.*]] = arith.index_cast %[[E1]] : i32 to index
// CHECK: %[[M1:.*]] = arith.maxsi %[[S1]], %[[FIRST]]
// CHECK: %[[END:.*]] = arith.minsi %[[M1]], %[[C100]]
// CHECK: %[[LEN:.*]] = arith.subi %[[END]], %[[FIRST]]
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[INIT]][%[[I]], 0, 0, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<3x2x4x8xf32> to tensor<1x2x4x8xf32>
// CHECK: %[[WHOLE:.*]] = arith.divui %[[LEN]], %[[C32]]
// CHECK: %[[WT:.*]] = arith.muli %[[WHOLE]], %[[C32]]
// CHECK: %[[SEGS:.*]]:2 = scf.for %[[S:.*]] = %[[C0]] to %[[WHOLE]] step %[[C1]] iter_args(%[[Y2:.*]] = %[[YACC]], %[[ST:.*]] = %[[ROW]])
// CHECK: %[[SO:.*]] = arith.muli %[[S]], %[[C32]]
// CHECK: %[[OFF:.*]] = arith.addi %[[FIRST]], %[[SO]]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[OFF]], 0, 0] [1, 32, 2, 4]
// CHECK: %[[YS:.*]], %[[FS:.*]] = ssd.combined {{.*}} initial_states(%[[ST]] : tensor<1x2x4x8xf32>) {chunk_size = 16 : i64} -> tensor<1x32x2x4xf32>, tensor<1x2x4x8xf32>
// CHECK: %[[YI:.*]] = tensor.insert_slice %[[YS]] into %[[Y2]][0, %[[OFF]], 0, 0] [1, 32, 2, 4]
// CHECK: scf.yield %[[YI]], %[[FS]]
// CHECK: } {ssd.segment_loop}
// CHECK: %[[RS:.*]] = arith.addi %[[FIRST]], %[[WT]]
// CHECK: %[[REST:.*]] = arith.subi %[[LEN]], %[[WT]]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[RS]], 0, 0] [1, %[[REST]], 2, 4]
// CHECK: %[[YT:.*]], %[[FT:.*]] = ssd.combined {{.*}} initial_states(%[[SEGS]]#1 : tensor<1x2x4x8xf32>) {chunk_size = 16 : i64} -> tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>
// CHECK: %[[YR:.*]] = tensor.insert_slice %[[YT]] into %[[SEGS]]#0[0, %[[RS]], 0, 0]
// CHECK: %[[FR:.*]] = tensor.insert_slice %[[FT]] into %[[FACC]][%[[I]], 0, 0, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x4x8xf32> into tensor<3x2x4x8xf32>
// CHECK: scf.yield %[[YR]], %[[FR]]
// CHECK: } {ssd.sequence_loop}
// CHECK-NOT: cu_seqlens
// CHECK: return %[[SEQS]]#0, %[[SEQS]]#1
func.func @packed(%x: tensor<1x100x2x4xf32>, %dt: tensor<1x100x2xf32>, %A: tensor<2xf32>, %B: tensor<1x100x1x8xf32>, %C: tensor<1x100x1x8xf32>, %init: tensor<3x2x4x8xf32>, %cu: tensor<4xi32>) -> (tensor<1x100x2x4xf32>, tensor<3x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x100x2x4xf32>) dt(%dt : tensor<1x100x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x100x1x8xf32>) C(%C : tensor<1x100x1x8xf32>) initial_states(%init : tensor<3x2x4x8xf32>) cu_seqlens(%cu : tensor<4xi32>) {chunk_size = 16 : i64} -> tensor<1x100x2x4xf32>, tensor<3x2x4x8xf32>
  return %y, %fs : tensor<1x100x2x4xf32>, tensor<3x2x4x8xf32>
}

// -----

// cu_seqlens with an f16 state, a dynamic sequence count and no initial
// states: one op per sequence (segments would round the state at their
// boundaries), from zero, final states sized by the count.
// CHECK-LABEL: func.func @packed_f16
// CHECK-SAME: %[[CU:[^:]*]]: tensor<?xi32>)
// CHECK: %[[N:.*]] = tensor.dim %[[CU]], %c0 : tensor<?xi32>
// CHECK: %[[COUNT:.*]] = arith.subi %[[N]], %c1
// CHECK: %[[FINALS:.*]] = tensor.empty(%[[COUNT]]) : tensor<?x2x4x8xf16>
// CHECK: scf.for %[[I:.*]] = %c0 to %[[COUNT]] step %c1 iter_args({{.*}} = %{{.*}}, %[[FACC:.*]] = %[[FINALS]])
// CHECK-NOT: scf.for
// CHECK-NOT: initial_states
// CHECK: ssd.combined {{.*}} {chunk_size = 16 : i64, state_type = f16} -> tensor<1x?x2x4xf32>, tensor<1x2x4x8xf16>
// CHECK: tensor.insert_slice %{{.*}} into %[[FACC]][%[[I]], 0, 0, 0] [1, 2, 4, 8]
// CHECK: } {ssd.sequence_loop}
func.func @packed_f16(%x: tensor<1x100x2x4xf32>, %dt: tensor<1x100x2xf32>, %A: tensor<2xf32>, %B: tensor<1x100x1x8xf32>, %C: tensor<1x100x1x8xf32>, %cu: tensor<?xi32>) -> (tensor<1x100x2x4xf32>, tensor<?x2x4x8xf16>) {
  %y, %fs = ssd.combined x(%x : tensor<1x100x2x4xf32>) dt(%dt : tensor<1x100x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x100x1x8xf32>) C(%C : tensor<1x100x1x8xf32>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 16 : i64, state_type = f16} -> tensor<1x100x2x4xf32>, tensor<?x2x4x8xf16>
  return %y, %fs : tensor<1x100x2x4xf32>, tensor<?x2x4x8xf16>
}

// -----

// Left alone: one segment or less, an f16 state (which the split would
// round at every boundary) and an empty batch (nothing to compute; the
// lowering reports it).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.for
// CHECK-COUNT-4: ssd.combined
// CHECK-NOT: scf.for
// CHECK: return
func.func @left_alone(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>,
                      %xs: tensor<1x48x2x4xf32>, %dts: tensor<1x48x2xf32>, %Bs: tensor<1x48x1x8xf32>, %Cs: tensor<1x48x1x8xf32>,
                      %xl: tensor<1x256x2x4xf32>, %dtl: tensor<1x256x2xf32>, %Bl: tensor<1x256x1x8xf32>, %Cl: tensor<1x256x1x8xf32>,
                      %init16: tensor<1x2x4x8xf16>,
                      %x0: tensor<0x256x2x4xf32>, %dt0: tensor<0x256x2xf32>, %B0: tensor<0x256x1x8xf32>, %C0: tensor<0x256x1x8xf32>)
    -> (tensor<1x64x2x4xf32>, tensor<1x48x2x4xf32>, tensor<1x256x2x4xf32>, tensor<0x256x2x4xf32>) {
  %y0, %fs0 = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  %y1, %fs1 = ssd.combined x(%xs : tensor<1x48x2x4xf32>) dt(%dts : tensor<1x48x2xf32>) A(%A : tensor<2xf32>) B(%Bs : tensor<1x48x1x8xf32>) C(%Cs : tensor<1x48x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x48x2x4xf32>, tensor<1x2x4x8xf32>
  %y5, %fs5 = ssd.combined x(%xl : tensor<1x256x2x4xf32>) dt(%dtl : tensor<1x256x2xf32>) A(%A : tensor<2xf32>) B(%Bl : tensor<1x256x1x8xf32>) C(%Cl : tensor<1x256x1x8xf32>) initial_states(%init16 : tensor<1x2x4x8xf16>) {chunk_size = 32 : i64, state_type = f16} -> tensor<1x256x2x4xf32>, tensor<1x2x4x8xf16>
  %y6, %fs6 = ssd.combined x(%x0 : tensor<0x256x2x4xf32>) dt(%dt0 : tensor<0x256x2xf32>) A(%A : tensor<2xf32>) B(%B0 : tensor<0x256x1x8xf32>) C(%C0 : tensor<0x256x1x8xf32>) {chunk_size = 32 : i64} -> tensor<0x256x2x4xf32>, tensor<0x2x4x8xf32>
  return %y0, %y1, %y5, %y6 : tensor<1x64x2x4xf32>, tensor<1x48x2x4xf32>, tensor<1x256x2x4xf32>, tensor<0x256x2x4xf32>
}

// -----

// seq_idx: each segment takes its slice of seq_idx (a strided window of
// the (b, L) operand: the CPU backend's gathers from it are indexed by its
// strides, ssd-cpu-strided-gathers), and starts from the previous segment's final state where the token before its
// first is of the same sequence, else from zero (the reset the segment's op
// cannot see; the first segment compares token 0 with itself).
// CHECK-LABEL: func.func @seq_idx
// CHECK-SAME: %[[SI:[a-z0-9]+]]: tensor<2x200xi32>
// CHECK: scf.for %[[S:.*]] = %c0 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}, %[[STATE:.*]] = %{{.*}})
// CHECK: %[[OFF:.*]] = arith.muli %[[S]], %c64 : index
// CHECK: %[[PREV:.*]] = arith.subi %[[OFF]], %c1 : index
// CHECK: %[[BEFORE:.*]] = arith.maxsi %[[PREV]], %c0 : index
// CHECK: %[[IDB:.*]] = tensor.extract_slice %[[SI]][0, %[[BEFORE]]] [2, 1] [1, 1]
// CHECK: %[[IDA:.*]] = tensor.extract_slice %[[SI]][0, %[[OFF]]] [2, 1] [1, 1]
// CHECK: %[[FROM:.*]] = linalg.generic {{.*}} ins(%[[IDB]], %[[IDA]], %[[STATE]] : tensor<2x1xi32>, tensor<2x1xi32>, tensor<2x2x4x8xf32>)
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: arith.select %[[SAME]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[WINDOW:.*]] = tensor.extract_slice %[[SI]][0, %[[OFF]]] [2, 64] [1, 1] : tensor<2x200xi32> to tensor<2x64xi32>
// CHECK-NOT: linalg.copy
// CHECK: ssd.combined {{.*}} initial_states(%[[FROM]] : tensor<2x2x4x8xf32>) seq_idx(%[[WINDOW]] : tensor<2x64xi32>)
// CHECK: } {ssd.segment_loop}
// The tokens after the whole segments: 192..199, compared with token 191.
// CHECK: tensor.extract_slice %[[SI]][0, 191] [2, 1] [1, 1]
// CHECK: tensor.extract_slice %[[SI]][0, 192] [2, 1] [1, 1]
// CHECK: tensor.extract_slice %[[SI]][0, 192] [2, 8] [1, 1]
// CHECK: ssd.combined {{.*}} seq_idx(%{{.*}} : tensor<2x8xi32>)
func.func @seq_idx(%xl: tensor<2x200x2x4xf32>, %dtl: tensor<2x200x2xf32>, %A: tensor<2xf32>, %Bl: tensor<2x200x1x8xf32>, %Cl: tensor<2x200x1x8xf32>, %si: tensor<2x200xi32>) -> (tensor<2x200x2x4xf32>, tensor<2x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%xl : tensor<2x200x2x4xf32>) dt(%dtl : tensor<2x200x2xf32>) A(%A : tensor<2xf32>) B(%Bl : tensor<2x200x1x8xf32>) C(%Cl : tensor<2x200x1x8xf32>) seq_idx(%si : tensor<2x200xi32>) {chunk_size = 32 : i64} -> tensor<2x200x2x4xf32>, tensor<2x2x4x8xf32>
  return %y, %fs : tensor<2x200x2x4xf32>, tensor<2x2x4x8xf32>
}

// -----

// seq_idx with a dynamic L: the tokens after the whole segments may be none,
// and then their op keeps its start state and nothing reads seq_idx past
// the end: the start state is selected only where they hold a token.
// CHECK-LABEL: func.func @seq_idx_dynamic
// CHECK-SAME: %[[SI:[a-z0-9]+]]: tensor<2x?xi32>
// CHECK: %[[LOOP:.*]]:2 = scf.for
// CHECK: } {ssd.segment_loop}
// CHECK: %[[REST:.*]] = arith.subi %{{.*}}, %[[START:.*]] : index
// CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[REST]], %c0 : index
// CHECK-NEXT: %[[FROM:.*]] = scf.if %[[ANY]] -> (tensor<2x2x4x8xf32>) {
// CHECK: tensor.extract_slice %[[SI]][0, %[[START]]] [2, 1] [1, 1]
// CHECK: linalg.generic
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[LOOP]]#1 : tensor<2x2x4x8xf32>
// CHECK: ssd.combined {{.*}} initial_states(%[[FROM]] : tensor<2x2x4x8xf32>)
func.func @seq_idx_dynamic(%xl: tensor<2x?x2x4xf32>, %dtl: tensor<2x?x2xf32>, %A: tensor<2xf32>, %Bl: tensor<2x?x1x8xf32>, %Cl: tensor<2x?x1x8xf32>, %si: tensor<2x?xi32>) -> (tensor<2x?x2x4xf32>, tensor<2x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%xl : tensor<2x?x2x4xf32>) dt(%dtl : tensor<2x?x2xf32>) A(%A : tensor<2xf32>) B(%Bl : tensor<2x?x1x8xf32>) C(%Cl : tensor<2x?x1x8xf32>) seq_idx(%si : tensor<2x?xi32>) {chunk_size = 32 : i64} -> tensor<2x?x2x4xf32>, tensor<2x2x4x8xf32>
  return %y, %fs : tensor<2x?x2x4xf32>, tensor<2x2x4x8xf32>
}

// -----

// A dynamic batch with seq_idx, initial states and an f16 state: a loop
// over the rows, each one op (segments would round the state at their
// boundaries) on its row, from its row of the initial states, with its row
// of seq_idx.
// CHECK-LABEL: func.func @rows_seq_idx_f16
// CHECK-SAME: %[[INIT:[a-z0-9]+]]: tensor<?x2x4x8xf16>, %[[SI:[a-z0-9]+]]: tensor<?x?xi32>
// CHECK: scf.for %[[R:.*]] = %c0 to %{{.*}} step %c1
// CHECK-NOT: scf.for
// CHECK-DAG: %[[ROW:.*]] = tensor.extract_slice %[[INIT]][%[[R]], 0, 0, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<?x2x4x8xf16> to tensor<1x2x4x8xf16>
// CHECK-DAG: %[[IDS:.*]] = tensor.extract_slice %[[SI]][%[[R]], 0] [1, %{{.*}}] [1, 1] : tensor<?x?xi32> to tensor<1x?xi32>
// CHECK: ssd.combined {{.*}} initial_states(%[[ROW]] : tensor<1x2x4x8xf16>) seq_idx(%[[IDS]] : tensor<1x?xi32>) {chunk_size = 32 : i64, state_type = f16} -> tensor<1x?x2x4xf32>, tensor<1x2x4x8xf16>
// CHECK: } {ssd.sequence_loop}
func.func @rows_seq_idx_f16(%xl: tensor<?x?x2x4xf32>, %dtl: tensor<?x?x2xf32>, %A: tensor<2xf32>, %Bl: tensor<?x?x1x8xf32>, %Cl: tensor<?x?x1x8xf32>, %init: tensor<?x2x4x8xf16>, %si: tensor<?x?xi32>) -> (tensor<?x?x2x4xf32>, tensor<?x2x4x8xf16>) {
  %y, %fs = ssd.combined x(%xl : tensor<?x?x2x4xf32>) dt(%dtl : tensor<?x?x2xf32>) A(%A : tensor<2xf32>) B(%Bl : tensor<?x?x1x8xf32>) C(%Cl : tensor<?x?x1x8xf32>) initial_states(%init : tensor<?x2x4x8xf16>) seq_idx(%si : tensor<?x?xi32>) {chunk_size = 32 : i64, state_type = f16} -> tensor<?x?x2x4xf32>, tensor<?x2x4x8xf16>
  return %y, %fs : tensor<?x?x2x4xf32>, tensor<?x2x4x8xf16>
}
