// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s --check-prefix=GATED
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=NEVER
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always" 2>&1 | FileCheck %s --check-prefixes=ALWAYS,BAD-Z
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=NEVER
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=NEVER
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="profile=true" | FileCheck %s --check-prefix=NEVER
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always chip=sm_80" 2>&1 | FileCheck %s --check-prefix=BAD-CHIP
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-pieces=3" | FileCheck %s --check-prefix=PIECES3
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-pieces=65" 2>&1 | FileCheck %s --check-prefix=BAD-PIECES
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-stages=3 warp-specialized-published-buffers=2 warp-specialized-y=tiles" | FileCheck %s --check-prefix=THREE
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-stages=3" | FileCheck %s --check-prefix=THREE-STAGE
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-panel-maps=true" | FileCheck %s --check-prefix=PANELS
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-y=tiles" 2>&1 | FileCheck %s --check-prefix=BAD-FOUR
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-published-buffers=2" 2>&1 | FileCheck %s --check-prefix=BAD-FOUR-PUBLISHED
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-y=somewhere" 2>&1 | FileCheck %s --check-prefix=BAD-Y
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-stages=5 warp-specialized=never" 2>&1 | FileCheck %s --check-prefix=BAD-STAGES
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-published-buffers=3" 2>&1 | FileCheck %s --check-prefix=BAD-PUBLISHED
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-piece-heads=4" | FileCheck %s --check-prefix=HEADS4
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-piece-heads=2" | FileCheck %s --check-prefix=HEADS2
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-piece-heads=1" | FileCheck %s --check-prefix=HEADS1
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized-piece-heads=3 warp-specialized=never" 2>&1 | FileCheck %s --check-prefix=BAD-HEADS

// The Mamba-2 2.7B layer (80 heads, headdim 64, dstate 128, bf16, D,
// dt_bias, softplus) with a dynamic batch: by default (auto) the module
// holds the warp-specialised kernels alone. The pieces a sequence is cut
// into, and which of two piece-states kernels runs, are chosen at launch:
// ws_chains blocks a piece, the count of 1 to 8 and the kernel (0: a head
// a block, 420/840ths of an SSD wave; 1: four heads a block, b x 20 blocks
// a piece, 672/840ths) the wave model scores least ((score x 2 + kernel) x
// 128 + count in ws_choice), each piece costing 223 tokens' walk (840 x
// 223 / L 840ths); ws_pieces and ws_wide unpack it, after it by name.
// CHECK: derived = {ws_chains = "b * 80", ws_choice = "min(min(min(min(min(min(min(min(min(min(min(min(min(min(min((((840 * ceildiv(ws_chains * 1, num_sms) + 420 * ceildiv(ws_chains * 0, 2 * num_sms)) / 1 + 187320 / max(L, 1)) * 2 + 0) * 128 + 1, (((840 * ceildiv(ws_chains * 1, num_sms) + 672 * ceildiv(b * 20 * 0, num_sms)) / 1 + 187320 / max(L, 1)) * 2 + 1) * 128 + 1),
// CHECK-SAME: (((840 * ceildiv(ws_chains * 8, num_sms) + 420 * ceildiv(ws_chains * 7, 2 * num_sms)) / 8 + 1498560 / max(L, 1)) * 2 + 0) * 128 + 8), (((840 * ceildiv(ws_chains * 8, num_sms) + 672 * ceildiv(b * 20 * 7, num_sms)) / 8 + 1498560 / max(L, 1)) * 2 + 1) * 128 + 8)",
// CHECK-SAME: ws_pieces = "ws_choice % 128", ws_wide = "ws_choice / 128 % 2"}
// The piece states first, where there are two pieces or more and the
// model picks a head a block: a state warpgroup and a producer warp (160
// threads) per (piece but the last, row, head), with B, x and dt by TMA (4
// stages, 103472 bytes).
// CHECK-SAME: kernels = [{block = [160], grid = ["b * 80 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "dt_bias"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "workspace", name = "piece_states"}, {abi = "memref", kind = "workspace", name = "piece_decays"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}, {box = [1, 64, 4], kind = "tma", swizzle = "none", tensor = "dt"}], shared_memory = 103472 : i64, when = "min(1, ws_pieces - 1) * (1 - ws_wide)"},
// Or, where it picks four heads a block: four state warpgroups and a
// producer warp (544 threads) per (piece but the last, row, four heads of
// a group), four x boxes a stage (4 stages, 201776 bytes).
// CHECK-SAME: {block = [544], grid = ["b * 20 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states_heads4", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "dt_bias"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "workspace", name = "piece_states"}, {abi = "memref", kind = "workspace", name = "piece_decays"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}, {box = [1, 64, 4], kind = "tma", swizzle = "none", tensor = "dt"}], shared_memory = 201776 : i64, when = "min(1, ws_pieces - 1) * ws_wide"},
// Then one block of 512 threads (producer, state, two output warpgroups)
// per (piece, row, head): A, dt_bias, D, y, the final states and the
// pieces' workspaces as memrefs, then the TMA maps of C, B, x (a chunk of
// 64 rows by a 64-column panel, 128-byte swizzle) and dt (64 tokens by 4
// heads, unswizzled), in 227456 bytes of dynamic shared memory (4
// stages with the prep warps' scaled x and decays, y staged in a stage's
// first C panel, one published state with two stages of barriers); every
// launch.
// CHECK-SAME: {block = [512], grid = ["b * 80 * ws_pieces"], name = "ssd_warp_specialized", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "dt_bias"}, {abi = "memref", kind = "tensor", name = "D"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "tensor", name = "final_states"}, {abi = "memref", kind = "workspace", name = "piece_states"}, {abi = "memref", kind = "workspace", name = "piece_decays"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "C"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}, {box = [1, 64, 4], kind = "tma", swizzle = "none", tensor = "dt"}], shared_memory = 227456 : i64}]
// No persistent kernel's workspaces: a state per piece but the last, a
// decay per piece.
// CHECK-SAME: workspaces = [{dtype = "f32", name = "piece_states", shape = ["b", 80, "ws_pieces - 1", 64, 128]}, {dtype = "f32", name = "piece_decays", shape = ["b", 80, "ws_pieces"]}]
// CHECK-NOT: gpu.func @ssd_fused

// The piece states' kernel: two blocks a SM.
// CHECK: gpu.func @ssd_warp_specialized_piece_states(%{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %[[PY:.*]]: memref<?x?x80x64xbf16>, %[[PSTATES:.*]]: memref<?x80x?x64x128xf32>, %[[PDECAYS:.*]]: memref<?x80x?xf32>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// CHECK-SAME: known_block_size = array<i32: 160, 1, 1>, nvvm.minctasm = 2 : i32
// Its block's piece: block / (b x 80); the pieces from piece_decays.
// CHECK: %[[PB:.*]] = memref.dim %[[PY]], %c0
// CHECK: %[[PCHAINS:.*]] = arith.muli %[[PB]], %c80
// CHECK: %[[PPIECE:.*]] = arith.divui %block_id_x, %[[PCHAINS]]
// CHECK: %[[PPIECES:.*]] = memref.dim %[[PDECAYS]], %c2
// Its walk over the piece's chunks, last first, carrying the sum and the
// decay after the chunk: per k16 step, x^T by ldmatrix.trans from the
// stage, each token's weight from its lane by shuffles, scaled in f32 and
// rounded to bf16 once; then (w x)^T B with A from those registers and B
// N-major in shared memory (tnspB), one group left in flight. Nothing
// stores, fences for the async proxy or meets at a barrier in between.
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1{{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[R:.*]] = %cst{{.*}}) -> (!llvm.struct<{{.*}}>, f32)
// CHECK-NOT: nvvm.fence.proxy
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: vector.store
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<1x64x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-COUNT-4: gpu.shuffle  idx
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK-COUNT-3: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-NOT: nvvm.fence.proxy
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: vector.store
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {$128, $129, $130, $131}, $132, 1, 1, 1, 1;"
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: arith.addf %[[R]], %{{.*}} : f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The piece's state and decay.
// CHECK: vector.store %{{.*}}, %[[PSTATES]][%{{.*}}, %{{.*}}, %[[PPIECE]], %{{.*}}, %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[PDECAYS]][%{{.*}}, %{{.*}}, %[[PPIECE]]] : memref<?x80x?xf32>

// CHECK: gpu.func @ssd_warp_specialized(%{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %[[Y:.*]]: memref<?x?x80x64xbf16>, %{{.*}}: memref<?x80x64x128xf32>, %[[STATES:.*]]: memref<?x80x?x64x128xf32>, %[[DECAYS:.*]]: memref<?x80x?xf32>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// The descriptors' positions among the lowered arguments, for
// ssd-tma-descriptors-by-value; one resident block a SM (setmaxnreg).
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>, nvvm.minctasm = 1 : i32, ssd.lowered_arg_count = 63 : i64, ssd.tma_descriptors = array<i64: 59, 60, 61, 62>
// The block's piece, and the sequence's length from y, its chunks of 64
// tokens rounded up, ceil(chunks / pieces) a piece.
// CHECK: %[[B:.*]] = memref.dim %[[Y]], %c0
// CHECK: %[[CHAINS:.*]] = arith.muli %[[B]], %c80
// CHECK: %[[PIECE:.*]] = arith.divui %block_id_x, %[[CHAINS]]
// CHECK: %[[L:.*]] = memref.dim %[[Y]], %c1
// CHECK: %[[END:.*]] = arith.addi %[[L]], %c63 : index
// CHECK-NEXT: %[[CHUNKS:.*]] = arith.divui %[[END]], %c64{{.*}} : index
// CHECK: %[[PIECES:.*]] = memref.dim %[[DECAYS]], %c2
// CHECK: arith.divui %{{.*}}, %[[PIECES]] : index
// CHECK: nvvm.setmaxregister decrease 48
// CHECK: nvvm.setmaxregister increase 176
// The state role enters with the state carried over the pieces before
// its own: S = exp(decay_j) S + S_j.
// CHECK: scf.for %[[J:.*]] = %c0{{.*}} to %[[PIECE]] step %c1
// CHECK: %[[DECAY:.*]] = memref.load %[[DECAYS]][%{{.*}}, %{{.*}}, %[[J]]]
// CHECK-NEXT: math.exp %[[DECAY]]
// CHECK: vector.load %[[STATES]][%{{.*}}, %{{.*}}, %[[J]], %{{.*}}, %{{.*}}]
// CHECK: math.fma
// Each chunk's entering state published in bf16 by eight stmatrix.x4 a
// warp.
// CHECK-COUNT-8: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// The final state from the last piece alone.
// CHECK: %[[LAST:.*]] = arith.subi %[[PIECES]], %c1
// CHECK: arith.cmpi eq, %[[PIECE]], %[[LAST]]

// warp-specialized-pieces: a fixed count; the model still picks the
// piece-states kernel, scoring the two at that count alone.
// PIECES3: derived = {ws_chains = "b * 80", ws_choice = "min((((840 * ceildiv(ws_chains * 3, num_sms) + 420 * ceildiv(ws_chains * 2, 2 * num_sms)) / 3 + 561960 / max(L, 1)) * 2 + 0) * 128 + 3, (((840 * ceildiv(ws_chains * 3, num_sms) + 672 * ceildiv(b * 20 * 2, num_sms)) / 3 + 561960 / max(L, 1)) * 2 + 1) * 128 + 3)", ws_pieces = "3", ws_wide = "ws_choice / 128 % 2"}
// PIECES3: name = "ssd_warp_specialized_piece_states"
// PIECES3: name = "ssd_warp_specialized_piece_states_heads4"
// PIECES3: grid = ["b * 80 * ws_pieces"], name = "ssd_warp_specialized"
// BAD-PIECES: convert-ssd-fused-to-gpu: warp-specialized-pieces must be 0 (chosen at launch) to 64, got 65

// The layout options. The default's four stages beside one published
// state with y in the stages take 227456 bytes (4 x 52224 + 16384 +
// alignment + 10 mbarrier pairs: the published buffer's two stages of
// barriers, one an output warpgroup). Three stages, two published states
// and y in tiles of its own (the default until the H100 rounds of
// bench/NOTES-fused-gpu.md) take 225360; three stages alone keep the
// default's one published state and y in the stages. The piece states'
// kernel keeps its own.
// THREE: shared_memory = 103472 : i64, when = "min(1, ws_pieces - 1) * (1 - ws_wide)"
// THREE: name = "ssd_warp_specialized"
// THREE-SAME: shared_memory = 225360 : i64
// THREE-STAGE: name = "ssd_warp_specialized"
// THREE-STAGE-SAME: shared_memory = 175200 : i64
// Panel maps: C and B as [row][panel][token][group][64] views, a box
// bringing both panels (panel_dim 1), in both kernels; x and dt as before.
// PANELS: name = "ssd_warp_specialized_piece_states"
// PANELS-SAME: {box = [1, 64, 1, 64], kind = "tma", panel_dim = 1 : i64, swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}
// PANELS: name = "ssd_warp_specialized"
// PANELS-SAME: {box = [1, 64, 1, 64], kind = "tma", panel_dim = 1 : i64, swizzle = "128B", tensor = "C"}, {box = [1, 64, 1, 64], kind = "tma", panel_dim = 1 : i64, swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}
// PANELS-SAME: shared_memory = 227456 : i64
// A layout that cannot be built is an error whatever the layer and
// warp-specialized say.
// BAD-FOUR: convert-ssd-fused-to-gpu: 4 stages, 1 published state buffer and y in tiles of its own need 261280 bytes of shared memory, over the 232448 a block may hold
// BAD-FOUR-PUBLISHED: convert-ssd-fused-to-gpu: 4 stages, 2 published state buffers and y in the stages need 243872 bytes of shared memory, over the 232448 a block may hold
// BAD-Y: convert-ssd-fused-to-gpu: warp-specialized-y must be 'auto', 'stage' or 'tiles', got 'somewhere'
// BAD-STAGES: convert-ssd-fused-to-gpu: warp-specialized-stages must be 2 to 4, got 5
// BAD-PUBLISHED: convert-ssd-fused-to-gpu: warp-specialized-published-buffers must be 1 or 2, got 3

// warp-specialized-piece-heads: the piece states' blocks walk that many
// heads of a group, a state warpgroup each, over one copy of B a chunk.
// Four: 544 threads (four state warpgroups and the producer warp) per
// (piece but the last, row, four heads), one block a SM with 4 stages of
// 50176 bytes (B, x a panel a head, dt); the pieces' model counts its
// waves at 672/840ths of an SSD wave. Two: 288 threads, two blocks a SM of
// 3 stages of 34816 bytes.
// HEADS4: ceildiv(ws_chains * 1, num_sms) + 672 * ceildiv(b * 20 * 0, num_sms)) / 1
// HEADS4-SAME: ceildiv(ws_chains * 8, num_sms) + 672 * ceildiv(b * 20 * 7, num_sms)) / 8
// HEADS4: kernels = [{block = [544], grid = ["b * 20 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states_heads4"
// HEADS4-SAME: shared_memory = 201776 : i64, when = "min(1, ws_pieces - 1)"}
// HEADS4-NOT: ws_wide
// The kernel: one block a SM; its input ring's stages go back once all
// four warpgroups (512 threads) release them.
// HEADS4-NOT: gpu.func @ssd_warp_specialized_piece_states(
// HEADS4: gpu.func @ssd_warp_specialized_piece_states_heads4(%{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %[[PY:.*]]: memref<?x?x80x64xbf16>, %[[PSTATES:.*]]: memref<?x80x?x64x128xf32>, %[[PDECAYS:.*]]: memref<?x80x?xf32>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// HEADS4-SAME: known_block_size = array<i32: 544, 1, 1>, nvvm.minctasm = 1 : i32
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c512_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c512_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c512_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// HEADS4: nvvm.mbarrier.init %{{.*}}, %c512_i32{{.*}}
// HEADS4-NOT: nvvm.mbarrier.init
// HEADS4: gpu.barrier
// The block's piece: block / (b x 20); its first head 4 (block % 20).
// HEADS4: %[[PB:.*]] = memref.dim %[[PY]], %c0
// HEADS4: %[[PCHAINS:.*]] = arith.muli %[[PB]], %c20
// HEADS4: %[[PPIECE:.*]] = arith.divui %block_id_x, %[[PCHAINS]]
// HEADS4: arith.muli %{{.*}}, %c4
// Warpgroup w walks head 4 (block % 20) + w behind barrier 1 + w, each
// storing its own head's state and decay.
// HEADS4: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c128_i32{{.*}}
// HEADS4: vector.store %{{.*}}, %[[PSTATES]][%{{.*}}, %{{.*}}, %[[PPIECE]], %{{.*}}, %{{.*}}]
// HEADS4: memref.store %{{.*}}, %[[PDECAYS]][%{{.*}}, %{{.*}}, %[[PPIECE]]] : memref<?x80x?xf32>
// HEADS4: nvvm.barrier id = %c2_i32{{.*}} number_of_threads = %c128_i32{{.*}}
// HEADS4: nvvm.barrier id = %c3_i32{{.*}} number_of_threads = %c128_i32{{.*}}
// HEADS4: nvvm.barrier id = %c4_i32{{.*}} number_of_threads = %c128_i32{{.*}}
// HEADS4: memref.store %{{.*}}, %[[PDECAYS]][%{{.*}}, %{{.*}}, %[[PPIECE]]] : memref<?x80x?xf32>
// The producer (thread 512): per chunk the stage's 50176 bytes announced,
// B's two boxes, x's of the four heads, then dt's box.
// HEADS4: arith.cmpi eq, %{{.*}}, %c512
// HEADS4: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c50176_i32
// HEADS4-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg5,
// HEADS4-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg6,
// HEADS4-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg6,
// HEADS4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg7,
// HEADS4: gpu.func @ssd_warp_specialized(
// One: the one-head kernel alone, the model over its waves (no ws_choice
// or ws_wide).
// HEADS1: derived = {ws_chains = "b * 80", ws_pieces = "min(
// HEADS1-SAME: ((840 * ceildiv(ws_chains * 8, num_sms) + 420 * ceildiv(ws_chains * 7, 2 * num_sms)) / 8 + 1498560 / max(L, 1)) * 16 + 8) % 16"}
// HEADS1-SAME: kernels = [{block = [160], grid = ["b * 80 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states"
// HEADS1-SAME: when = "min(1, ws_pieces - 1)"}, {block = [512], grid = ["b * 80 * ws_pieces"], name = "ssd_warp_specialized"
// HEADS1-NOT: heads4
// HEADS2: ceildiv(ws_chains * 7, num_sms) + 672 * ceildiv(b * 40 * 6, 2 * num_sms)) / 7
// HEADS2: block = [288], grid = ["b * 40 * (ws_pieces - 1)"], name = "ssd_warp_specialized_piece_states_heads2"
// HEADS2-SAME: shared_memory = 102432 : i64, when = "min(1, ws_pieces - 1)"}
// HEADS2: gpu.func @ssd_warp_specialized_piece_states_heads2(
// HEADS2-SAME: known_block_size = array<i32: 288, 1, 1>, nvvm.minctasm = 2 : i32
// BAD-HEADS: convert-ssd-fused-to-gpu: warp-specialized-piece-heads must be 1, 2 or 4, got 3

// ALWAYS-NOT: gpu.func @ssd_fused
// ALWAYS: name = "ssd_warp_specialized"

// With never, on chips other than sm_90a and with profile (which
// records the persistent kernel's items), the persistent kernel alone.
// NEVER-NOT: warp_specialized
// NEVER-NOT: ws_pieces

// BAD: convert-ssd-fused-to-gpu: warp-specialized must be 'auto', 'always' or 'never', got 'sometimes'
// BAD-CHIP: convert-ssd-fused-to-gpu: warp-specialized=always, but the warp-specialised kernel cannot take the layer: it needs chip sm_90a (TMA, wgmma, setmaxnreg), got 'sm_80'

func.func @mamba2(%x: tensor<?x?x80x64xbf16>, %dt: tensor<?x?x80xf32>, %A: tensor<80xf32>, %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x80x64xbf16>) dt(%dt : tensor<?x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<?x?x1x128xbf16>) C(%C : tensor<?x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
  return %y, %fs : tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
}

// -----

// With z, the warp-specialised kernel does not take the layer: auto keeps
// the persistent kernel alone, always says why.
// GATED: gpu.func @ssd_warp_specialized(
// GATED: gpu.container_module
// GATED-NOT: ws_pieces
// GATED: gpu.func @ssd_fused(
// GATED-NOT: gpu.func @ssd_warp_specialized
// BAD-Z: warp-specialized=always, but the warp-specialised kernel cannot take the layer: the layer has z
func.func @gated(%x: tensor<?x?x80x64xbf16>, %dt: tensor<?x?x80xf32>, %A: tensor<80xf32>, %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>, %z: tensor<?x?x80x64xbf16>) -> (tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x80x64xbf16>) dt(%dt : tensor<?x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<?x?x1x128xbf16>) C(%C : tensor<?x?x1x128xbf16>) z(%z : tensor<?x?x80x64xbf16>) {chunk_size = 128 : i64} -> tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
  return %y, %fs : tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
}
