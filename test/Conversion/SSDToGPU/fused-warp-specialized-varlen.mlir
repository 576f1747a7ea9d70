// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always" | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=NEVER
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always chip=sm_80" 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// Packed sequences (cu_seqlens, batch 1) with per-sequence initial
// states: auto, like always, builds the warp-specialised kernels alone, a
// block per (piece, sequence, head, p-block); never, the persistent kernel.
// AUTO-NOT: gpu.func @ssd_fused(
// NEVER: gpu.func @ssd_fused(
// NEVER-NOT: gpu.func @ssd_warp_specialized
// BAD-CHIP: warp-specialized=always, but the warp-specialised kernel cannot take the layer: it needs chip sm_90a

// The chains are sequences x heads; the pieces' model takes the sequences'
// mean length, ceil(L / s); the pieces' workspaces are per sequence, as
// the states are; every kernel takes cu_seqlens. The wide piece-states
// kernel walks the 8 heads' two fours (s x 2 blocks a piece).
// CHECK: derived = {ws_chains = "s * 8", ws_choice = "min(min(min(min(min(min(min(min(min(min(min(min(min(min(min((((840 * ceildiv(ws_chains * 1, num_sms) + 420 * ceildiv(ws_chains * 0, 2 * num_sms)) / 1 + 187320 / max(ceildiv(L, max(s, 1)), 1)) * 2 + 0) * 128 + 1, (((840 * ceildiv(ws_chains * 1, num_sms) + 672 * ceildiv(s * 2 * 0, num_sms)) / 1 + 187320 / max(ceildiv(L, max(s, 1)), 1)) * 2 + 1) * 128 + 1),
// CHECK-SAME: ws_pieces = "ws_choice % 128", ws_wide = "ws_choice / 128 % 2"}
// CHECK-SAME: grid = ["s * 8 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "tensor", name = "cu_seqlens"},
// CHECK-SAME: grid = ["s * 2 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states_heads4", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "tensor", name = "cu_seqlens"},
// CHECK-SAME: grid = ["s * 8 * ws_pieces"], name = "ssd_warp_specialized", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "D"}, {abi = "memref", kind = "tensor", name = "initial_states"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "tensor", name = "final_states"}, {abi = "memref", kind = "tensor", name = "cu_seqlens"},
// CHECK-SAME: workspaces = [{dtype = "f32", name = "piece_states", shape = ["s", 8, "ws_pieces - 1", 64, 128]}, {dtype = "f32", name = "piece_decays", shape = ["s", 8, "ws_pieces"]}]

// The piece states' producer lands a partial last chunk the same way (an
// empty last piece leaves that chunk to a piece this kernel walks): its
// rows zeroed before the stage's full barrier is arrived on.
// CHECK: gpu.func @ssd_warp_specialized_piece_states(
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c25600_i32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c512 step
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-NEXT: } else {

// The SSD kernel's block: its sequence of cu_seqlens' s = dim - 1, the
// sequence's first token and its end read from cu_seqlens and clamped to
// y's row and to each other, so that its length is never negative.
// CHECK: gpu.func @ssd_warp_specialized(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %[[IS:.*]]: memref<?x8x64x128xf32>, %[[Y:.*]]: memref<1x?x8x64xbf16>, %[[FS:.*]]: memref<?x8x64x128xf32>, %[[CU:.*]]: memref<?xi32>, %{{.*}}: memref<?x8x?x64x128xf32>, %{{.*}}: memref<?x8x?xf32>,
// CHECK: %[[CUN:.*]] = memref.dim %[[CU]], %c0
// CHECK: %[[SEQS:.*]] = arith.subi %[[CUN]], %c1
// CHECK: %[[CHAINS:.*]] = arith.muli %[[SEQS]], %c8
// CHECK: %[[PIECE:.*]] = arith.divui %block_id_x, %[[CHAINS]]
// CHECK: %[[SEQ:.*]] = arith.divui %{{.*}}, %c8
// CHECK: %[[HEAD:.*]] = arith.remui %{{.*}}, %c8
// CHECK: %[[ROWLEN:.*]] = memref.dim %[[Y]], %c1
// CHECK: %[[START32:.*]] = memref.load %[[CU]][%[[SEQ]]] : memref<?xi32>
// CHECK-NEXT: %[[START0:.*]] = arith.index_cast %[[START32]] : i32 to index
// CHECK-NEXT: %[[START1:.*]] = arith.maxsi %[[START0]], %c0
// CHECK-NEXT: %[[START:.*]] = arith.minsi %[[START1]], %[[ROWLEN]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[SEQ]], %c1
// CHECK-NEXT: %[[END32:.*]] = memref.load %[[CU]][%[[NEXT]]] : memref<?xi32>
// CHECK-NEXT: %[[END0:.*]] = arith.index_cast %[[END32]] : i32 to index
// CHECK-NEXT: %[[END1:.*]] = arith.maxsi %[[END0]], %[[START]] : index
// CHECK-NEXT: %[[END:.*]] = arith.minsi %[[END1]], %[[ROWLEN]] : index
// CHECK-NEXT: %[[LEN:.*]] = arith.subi %[[END]], %[[START]] : index
// Its chunks: ceil(length / 64), cut into pieces.
// CHECK: %[[LEN63:.*]] = arith.addi %[[LEN]], %c63
// CHECK-NEXT: arith.divui %[[LEN63]], %c64
// The producer: a chunk whose rows in the sequence (length - 64 c) are
// fewer than 64, the sequence's partial last chunk, lands on the
// producer's own barrier (the landing ring's, memref<2xi64>), not the
// stage's (the inputs ring's: 4 stages, memref<8xi64>).
// CHECK: %[[CHUNKAT:.*]] = arith.muli %{{.*}}, %c64
// CHECK-NEXT: %[[ROWS:.*]] = arith.subi %[[LEN]], %[[CHUNKAT]] : index
// CHECK: %[[PARTIAL:.*]] = arith.cmpi slt, %[[ROWS]], %c64
// CHECK-NEXT: scf.if %[[PARTIAL]] {
// CHECK: memref.extract_strided_metadata %[[LANDING:view[_0-9]*]] : memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c41984_i32
// Its boxes start at the sequence's first token (x's box: column, head,
// token, row 0).
// CHECK: %[[TOKEN:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[TOKEN32:.*]] = arith.index_cast %[[TOKEN]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %[[TOKEN32]], %{{.*}}]
// Once they land, x's and B's rows from the sequence's end on are zeroed
// (whole 128-byte rows of the swizzle: 8 16-byte pieces a row, from rows x
// 8 to 512), fenced for the async proxy, and only then is the stage's
// full barrier arrived on: a NaN or infinity of the next sequence never
// meets a zero weight in this one's products.
// CHECK: memref.extract_strided_metadata %[[LANDING]]
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c0_i32
// CHECK: %[[FROM:.*]] = arith.muli %[[ROWS]], %c8
// CHECK-NEXT: scf.for %{{.*}} = %[[FROM]] to %c512 step
// CHECK: vector.store %{{.*}} : memref<1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}} : memref<2x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: memref.extract_strided_metadata %{{.*}} : memref<8xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-NEXT: } else {
// Whole chunks land on the stage's full barrier.
// CHECK: memref.extract_strided_metadata %{{.*}} : memref<8xi64, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c41984_i32
// The state role enters from the sequence's initial state.
// CHECK: vector.load %[[IS]][%[[SEQ]], %[[HEAD]],
// The state role's final state, the sequence's (its last piece's block).
// CHECK: vector.store %{{.*}}, %[[FS]][%[[SEQ]], %[[HEAD]],
// y's rows at the sequence's first token on, in the one row.
// CHECK: %[[YTOKEN:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: vector.store %{{.*}}, %[[Y]][%c0{{.*}}, %[[YTOKEN]], %{{.*}}, %{{.*}}] {{.*}} : memref<1x?x8x64xbf16>, vector<8xbf16>
func.func @packed(%x: tensor<1x?x8x64xbf16>, %dt: tensor<1x?x8xf32>, %A: tensor<8xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<8xf32>, %is: tensor<?x8x64x128xf32>, %cu: tensor<?xi32>) -> (tensor<1x?x8x64xbf16>, tensor<?x8x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x8x64xbf16>) dt(%dt : tensor<1x?x8xf32>) A(%A : tensor<8xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<8xf32>) initial_states(%is : tensor<?x8x64x128xf32>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 128 : i64} -> tensor<1x?x8x64xbf16>, tensor<?x8x64x128xf32>
  return %y, %fs : tensor<1x?x8x64xbf16>, tensor<?x8x64x128xf32>
}

// -----

// Without initial states the sequences are cu_seqlens' s1 - 1.
// NEVER: gpu.func @ssd_fused(
// CHECK: derived = {ws_chains = "(s1 - 1) * 8", ws_choice = "min(min(min(min(min(min(min(min(min(min(min(min(min(min(min((((840 * ceildiv(ws_chains * 1, num_sms) + 420 * ceildiv(ws_chains * 0, 2 * num_sms)) / 1 + 187320 / max(ceildiv(L, max((s1 - 1), 1)), 1)) * 2 + 0) * 128 + 1, (((840 * ceildiv(ws_chains * 1, num_sms) + 672 * ceildiv((s1 - 1) * 2 * 0, num_sms)) / 1 + 187320 / max(ceildiv(L, max((s1 - 1), 1)), 1)) * 2 + 1) * 128 + 1),
// CHECK-SAME: grid = ["(s1 - 1) * 2 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states_heads4"
// CHECK-SAME: grid = ["(s1 - 1) * 8 * ws_pieces"], name = "ssd_warp_specialized"
// CHECK-SAME: {dtype = "f32", name = "piece_decays", shape = ["s1 - 1", 8, "ws_pieces"]}
func.func @packed_from_zero(%x: tensor<1x?x8x64xbf16>, %dt: tensor<1x?x8xf32>, %A: tensor<8xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %cu: tensor<?xi32>) -> (tensor<1x?x8x64xbf16>, tensor<?x8x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x8x64xbf16>) dt(%dt : tensor<1x?x8xf32>) A(%A : tensor<8xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 128 : i64} -> tensor<1x?x8x64xbf16>, tensor<?x8x64x128xf32>
  return %y, %fs : tensor<1x?x8x64xbf16>, tensor<?x8x64x128xf32>
}
