// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="batch=2 heads=8 seqlen=128 stages=3" | FileCheck %s
// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="seqlen=256 output-groups=2" | FileCheck %s --check-prefix=TWO
// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="heads=8 headdim=128 groups=2 seqlen=128" | FileCheck %s --check-prefix=WIDE
// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="seqlen=100" | FileCheck %s --check-prefix=RAGGED
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="headdim=96" 2>&1 | FileCheck %s --check-prefix=BAD-HEADDIM
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="heads=8 groups=3" 2>&1 | FileCheck %s --check-prefix=BAD-GROUPS-DIVIDE
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="output-groups=3" 2>&1 | FileCheck %s --check-prefix=BAD-GROUPS
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="batch=0" 2>&1 | FileCheck %s --check-prefix=BAD-BATCH
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="heads=0" 2>&1 | FileCheck %s --check-prefix=BAD-HEADS
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="heads=6" 2>&1 | FileCheck %s --check-prefix=BAD-HEADS-6
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="seqlen=0" 2>&1 | FileCheck %s --check-prefix=BAD-SEQLEN
// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="seqlen=256 stages=4 output-groups=2 published-buffers=1 y-in-stage=true" | FileCheck %s --check-prefix=FOUR
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="stages=5" 2>&1 | FileCheck %s --check-prefix=BAD-STAGES
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="stages=4 output-groups=2" 2>&1 | FileCheck %s --check-prefix=BAD-STAGES-ROOM
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="published-buffers=3" 2>&1 | FileCheck %s --check-prefix=BAD-PUBLISHED
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="published-buffers=0" 2>&1 | FileCheck %s --check-prefix=BAD-PUBLISHED-LOW
// RUN: not ssd-opt %s --ssd-test-warp-specialized-ssd="stages=1" 2>&1 | FileCheck %s --check-prefix=BAD-STAGES-LOW
// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="panel-maps=true" | FileCheck %s --check-prefix=PANELS

// Three stages of C, B (two swizzled panels each), x and dt (41984 bytes
// of copies), the scaled x and the prepared decays (52224 bytes a stage,
// 1024-aligned), the published state's two buffers, two y tiles, and
// sixteen mbarriers.
// CHECK: module attributes {gpu.container_module, ssd.shared_memory = 208976 : i64}
// CHECK: gpu.func @warp_specialized_ssd(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[A:.*]]: memref<8xf32>, %[[BIAS:.*]]: memref<8xf32>, %[[D:.*]]: memref<8xf32>, %[[INITIAL:.*]]: memref<2x8x64x128xf32>, %[[Y:.*]]: memref<2x128x8x64xbf16>, %[[STATES:.*]]: memref<2x8x64x128xf32>) kernel
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// The input ring: one TMA arrival fills a stage, both consumer roles (256
// threads) release it. The prepared ring: the 64 prep threads publish a
// stage (its empty barriers go unused). The published state: the state
// role's 128 threads publish a buffer, the output role's 128 release it.
// CHECK-COUNT-3: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c64_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[ROW:.*]] = arith.divui %{{.*}}, %c8{{.*}} : index
// CHECK: %[[HEAD:.*]] = arith.remui %{{.*}}, %c8{{.*}} : index
// The chunks: ceil(L / 64) (the last may be partial).
// CHECK: %[[END:.*]] = arith.addi %c128{{.*}}, %c63 : index
// CHECK-NEXT: %[[CHUNKS:.*]] = arith.divui %[[END]], %c64{{.*}} : index
// CHECK: memref.load %[[A]][%[[HEAD]]]
// CHECK: memref.load %[[BIAS]][%[[HEAD]]]
// CHECK: memref.load %[[D]][%[[HEAD]]]

// The producer: registers down, then per chunk (two of them) one stage's
// 41984 bytes: C and B in two 64-column boxes each, x's, dt's box of the
// four heads from head - head % 4; coordinates innermost first (column,
// head or group, token 64 c, row).
// CHECK: nvvm.setmaxregister decrease 48
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %[[CHUNKS]] step %c1
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c41984_i32
// CHECK: %[[TOKEN:.*]] = arith.muli %[[C]], %c64{{.*}} : index
// CHECK: %[[TOKEN32:.*]] = arith.index_cast %[[TOKEN]] : index to i32
// CHECK-NEXT: %[[ROW32:.*]] = arith.index_cast %[[ROW]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}, %[[TOKEN32]], %[[ROW32]]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg2, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: %[[INBOX:.*]] = arith.remui %[[HEAD]], %c4{{.*}} : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.subi %[[HEAD]], %[[INBOX]] : index
// CHECK: %[[FIRST32:.*]] = arith.index_cast %[[FIRST]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %{{.*}}, box[%[[FIRST32]], %{{.*}}, %{{.*}}]

// The prep warps (threads 32 to 95, a token each): per chunk, once its
// copies have landed, dt = softplus(dt + bias) (0 from the sequence's end
// on: L - 64 c tokens of the chunk are in it) scanned over the warp; the
// chunk is factored where g_last > -64; then the token's e, f, g and dt
// and the chunk's g_last and exp(g_last) into the stage, x's row scaled
// by exp(g_last - g) dt (eight 16-byte pieces), fenced for the async
// proxy, and the prepared stage published.
// CHECK: %[[PREP_HI:.*]] = arith.cmpi slt, %{{.*}}, %c96{{.*}} : index
// CHECK: %[[PREP_LO:.*]] = arith.cmpi sle, %c32{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[PREP:.*]] = arith.andi %[[PREP_LO]], %[[PREP_HI]] : i1
// CHECK-NEXT: scf.if %[[PREP]]
// CHECK: scf.for %[[PC:.*]] = %c0{{.*}} to %[[CHUNKS]] step %c1
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[DONE:.*]] = arith.muli %[[PC]], %c64{{.*}} : index
// CHECK-NEXT: %[[VALID:.*]] = arith.subi %c128{{.*}}, %[[DONE]] : index
// softplus on the special-function unit: 2^(x log2 e), then log(1 + t)
// with the rounding of 1 + t cancelled (t / ((1 + t) - 1)).
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// CHECK: llvm.inline_asm "lg2.approx.ftz.f32 $0, $1;"
// CHECK: llvm.inline_asm "rcp.approx.ftz.f32 $0, $1;"
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[VALID]] : index
// CHECK-NEXT: arith.select %[[IN]], %{{.*}}, %cst{{.*}} : f32
// CHECK: gpu.shuffle up
// CHECK: %[[LAST_LANE:.*]] = arith.index_cast %c31 : index to i32
// CHECK-NEXT: %[[GLAST:.*]], %{{.*}} = gpu.shuffle idx %{{.*}}, %[[LAST_LANE]]
// CHECK: %[[SPAN:.*]] = arith.constant -6.400000e+01 : f32
// CHECK-NEXT: %[[FACTORED:.*]] = arith.cmpf ogt, %[[GLAST]], %[[SPAN]] : f32
// CHECK: math.exp
// CHECK: memref.store %{{.*}} : memref<258xf32, #gpu.address_space<workgroup>>
// CHECK: ex2.approx.ftz.f32
// CHECK: arith.select %[[FACTORED]]
// CHECK-COUNT-3: memref.store %{{.*}} : memref<258xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %[[GLAST]], %{{.*}}[%c256]
// CHECK: math.exp %[[GLAST]]
// CHECK: ex2.approx.ftz.f32
// CHECK: %c41984 = arith.constant 41984 : index
// CHECK-COUNT-8: vector.store %{{.*}} : memref<1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.mbarrier.arrive

// The state role: the state in 64 f32 registers a thread, carried by the
// chunk loop; each chunk waits for its stage and its prepared decays,
// writes the state in bf16 (8 stmatrix.x4 a warp, once the output role
// has released the buffer), scales it by exp(g_last) from the stage,
// issues (w x)^T B as four wgmma m64n128k16 with both operands in shared
// memory (A M-major), and only then fences and publishes the state.
// The state starts as the initial state (32 pairs a thread).
// CHECK: nvvm.setmaxregister increase 232
// CHECK-COUNT-32: vector.load %[[INITIAL]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[CHUNKS]] step %c1{{.*}} iter_args(%{{.*}}) -> (!llvm.struct<(f32, f32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.if
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: }
// CHECK-COUNT-8: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK: memref.load %{{.*}}[%c257] : memref<258xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.mbarrier.arrive
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// The last state, 32 pairs a thread.
// CHECK-COUNT-32: vector.store %{{.*}}, %[[STATES]]

// The output role: C B^T (eight k16 steps over the state size) as one
// group; then, once the state is published, C S^T as a second group; the
// weights while that runs (C B^T's group done): e_t f_s from the prepared
// decays where the chunk is factored (eight f pairs, no exponential),
// else exp(g_t - g_s) dt_s (16 g and dt pairs, 32 exponentials); C S^T
// done, the published buffer released; C S^T's rows scaled by e_t, x's
// fragments for D x by ldmatrix, then P x as four register-A wgmma
// m64n64k16; the stage released, y in bf16 by stmatrix into the group's
// tile, a 128-thread barrier, and whole rows stored: four 16-byte pieces a
// thread, each where its token is before the sequence's end.
// CHECK: nvvm.setmaxregister increase 224
// The stage's copies alone are waited for before the products; the
// published state before C S^T; the prepared decays only once both are
// issued.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[OUT_FACTORED:.*]] = arith.cmpf ogt, %{{.*}}, %cst{{.*}} : f32
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.if %[[OUT_FACTORED]] -> (vector<2xbf16>
// CHECK-COUNT-8: vector.load %{{.*}} : memref<258xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: ex2.approx
// CHECK: } else {
// CHECK-COUNT-16: vector.load %{{.*}} : memref<258xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-32: ex2.approx.ftz.f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-4: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, 1, 1, 1, 1;
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-4: nvvm.stmatrix
// CHECK: nvvm.barrier id = %c2_i32 number_of_threads = %c128_i32
// CHECK-NOT: vector.store
// CHECK: %[[T0:.*]] = arith.cmpi slt, %{{.*}}, %c128{{.*}} : index
// CHECK-NEXT: scf.if %[[T0]]
// CHECK: vector.load %{{.*}} : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[Y]]{{.*}} : memref<2x128x8x64xbf16>, vector<8xbf16>
// CHECK: %[[T1:.*]] = arith.cmpi slt, %{{.*}}, %c128{{.*}} : index
// CHECK-NEXT: scf.if %[[T1]]
// CHECK: vector.load %{{.*}} : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[Y]]{{.*}} : memref<2x128x8x64xbf16>, vector<8xbf16>
// CHECK: %[[T2:.*]] = arith.cmpi slt, %{{.*}}, %c128{{.*}} : index
// CHECK-NEXT: scf.if %[[T2]]
// CHECK: vector.load %{{.*}} : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[Y]]{{.*}} : memref<2x128x8x64xbf16>, vector<8xbf16>
// CHECK: %[[T3:.*]] = arith.cmpi slt, %{{.*}}, %c128{{.*}} : index
// CHECK-NEXT: scf.if %[[T3]]
// CHECK: vector.load %{{.*}} : memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[Y]]{{.*}} : memref<2x128x8x64xbf16>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: gpu.return

// Two output warpgroups (512 threads, 128 registers each at launch): the
// producer's warpgroup gives back 80, the state takes 48 more and each
// output warpgroup 16; they take the chunks by turns (0, 2 and 1, 3 of
// the four), each with its own y tiles and barrier.
// Four stages (4 x 52224 bytes), one published buffer and y staged in the
// stages: no y tiles of their own. The published ring has one buffer and
// two stages of 128-arrival barriers, one a output warpgroup: each waits
// by parity on phases of its own chunks alone, which a single barrier
// pair, passed by the other warpgroup's chunk between, would let it
// through early. Each output warpgroup writes its chunk's y by
// stmatrix into the stage's first C panel (a [1][1][64][64] view of the
// ring), meets at its barrier, stores the rows, and only then fences the
// stage for the async proxy and releases it.
// FOUR: ssd.shared_memory = 227456
// FOUR: %[[RING:.*]] = memref.view %{{.*}} to memref<208896xi8, #gpu.address_space<workgroup>>
// FOUR-COUNT-8: nvvm.mbarrier.init %{{.*}}, %c{{(1|256)}}_i32
// FOUR-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c{{(64|1)}}_i32
// FOUR-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c128_i32
// FOUR-NOT: nvvm.mbarrier.init
// FOUR: nvvm.setmaxregister increase 144
// FOUR: %[[TILE:.*]] = memref.view %[[RING]][%{{.*}}][] : memref<208896xi8, #gpu.address_space<workgroup>> to memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// FOUR-COUNT-4: nvvm.stmatrix
// FOUR: nvvm.barrier id = %c2_i32 number_of_threads = %c128_i32
// FOUR-COUNT-4: vector.load %[[TILE]]
// FOUR: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// FOUR: nvvm.mbarrier.arrive
// FOUR: nvvm.setmaxregister increase 144
// FOUR: nvvm.barrier id = %c3_i32 number_of_threads = %c128_i32
// FOUR: nvvm.fence.proxy
// FOUR: nvvm.mbarrier.arrive
// FOUR-NEXT: }
// FOUR-NEXT: }
// FOUR-NEXT: gpu.return

// TWO: known_block_size = array<i32: 512, 1, 1>
// TWO: nvvm.setmaxregister decrease 48
// TWO: nvvm.setmaxregister increase 176
// TWO: nvvm.setmaxregister increase 144
// TWO: scf.for %{{.*}} = %c0{{.*}} to %[[CHUNKS:.*]] step %c2
// TWO: nvvm.barrier id = %c2_i32 number_of_threads = %c128_i32
// TWO: nvvm.setmaxregister increase 144
// TWO: scf.for %{{.*}} = %c1{{.*}} to %[[CHUNKS]] step %c2
// TWO: nvvm.barrier id = %c3_i32 number_of_threads = %c128_i32

// 100 tokens: two chunks, the second of 36; y's rows stored below 100.
// RAGGED: %[[END:.*]] = arith.addi %c100{{.*}}, %c63 : index
// RAGGED-NEXT: arith.divui %[[END]], %c64{{.*}} : index
// RAGGED: %[[T0:.*]] = arith.cmpi slt, %{{.*}}, %c100{{.*}} : index
// RAGGED-NEXT: scf.if %[[T0]]
// RAGGED: vector.store %{{.*}} : memref<1x100x4x64xbf16>, vector<8xbf16>

// Head dimension 128: two blocks a head (block = (row heads + head) 2 +
// p-block), the p-block's 64 columns at 64 p-block; two groups of four
// heads: B's and C's boxes at (64 panel, head / 4); x's at (64 p-block,
// head).
// WIDE: gpu.func @warp_specialized_ssd({{.*}}, %[[INITIAL:.*]]: memref<1x8x128x128xf32>, %[[Y:.*]]: memref<1x128x8x128xbf16>, %[[STATES:.*]]: memref<1x8x128x128xf32>)
// WIDE: %[[BLOCK:.*]] = gpu.block_id x
// WIDE: %[[SEQ:.*]] = arith.divui %[[BLOCK]], %c2{{.*}} : index
// WIDE: %[[PB:.*]] = arith.remui %[[BLOCK]], %c2{{.*}} : index
// WIDE: %[[P0:.*]] = arith.muli %[[PB]], %c64{{.*}} : index
// WIDE: %[[HEAD:.*]] = arith.remui %[[SEQ]], %c8{{.*}} : index
// WIDE: %[[GROUP:.*]] = arith.divui %[[HEAD]], %c4{{.*}} : index
// WIDE: %[[GROUP32:.*]] = arith.index_cast %[[GROUP]] : index to i32
// WIDE: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %[[GROUP32]], %{{.*}}, %{{.*}}]
// WIDE: %[[P032:.*]] = arith.index_cast %[[P0]] : index to i32
// WIDE-NEXT: %[[HEAD32:.*]] = arith.index_cast %[[HEAD]] : index to i32
// WIDE: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg2, %{{.*}}, box[%[[P032]], %[[HEAD32]], %{{.*}}, %{{.*}}]

// Panel maps: C and B in one box each (the same 41984 bytes a stage), at
// (0 column, group, token, 0 panel, row), B's after C's two panels; then
// x's and dt's boxes as before.
// PANELS: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c41984_i32
// PANELS: %[[TOKEN:.*]] = arith.muli %{{.*}}, %c64{{.*}} : index
// PANELS-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// PANELS: %[[CZ:.*]] = arith.index_cast %[[ZERO]] : index to i32
// PANELS-NEXT: %[[CG:.*]] = arith.index_cast %{{.*}} : index to i32
// PANELS-NEXT: %[[CT:.*]] = arith.index_cast %[[TOKEN]] : index to i32
// PANELS-NEXT: %[[CP:.*]] = arith.index_cast %[[ZERO]] : index to i32
// PANELS-NEXT: %[[CR:.*]] = arith.index_cast %{{.*}} : index to i32
// PANELS: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%[[CZ]], %[[CG]], %[[CT]], %[[CP]], %[[CR]]]
// PANELS-NEXT: arith.constant 16384 : index
// PANELS: %[[BZ:.*]] = arith.index_cast %[[ZERO]] : index to i32
// PANELS-NEXT: %[[BG:.*]] = arith.index_cast %{{.*}} : index to i32
// PANELS-NEXT: %[[BT:.*]] = arith.index_cast %[[TOKEN]] : index to i32
// PANELS-NEXT: %[[BP:.*]] = arith.index_cast %[[ZERO]] : index to i32
// PANELS-NEXT: %[[BR:.*]] = arith.index_cast %{{.*}} : index to i32
// PANELS: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%[[BZ]], %[[BG]], %[[BT]], %[[BP]], %[[BR]]]
// PANELS-NOT: %arg0, %{{.*}}, box
// PANELS-NOT: %arg1, %{{.*}}, box
// PANELS: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg2, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// PANELS: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}]

// BAD-HEADDIM: error: ssd-test-warp-specialized-ssd: headdim must be 64, 128, 192 or 256 (whole 64-column p-blocks, one a block), got 96
// BAD-GROUPS-DIVIDE: error: ssd-test-warp-specialized-ssd: groups must divide heads (8), got 3
// BAD-GROUPS: error: ssd-test-warp-specialized-ssd: output warpgroups must be 1 or 2, got 3
// BAD-BATCH: error: ssd-test-warp-specialized-ssd: batch must be positive, got 0
// BAD-HEADS: error: ssd-test-warp-specialized-ssd: heads must be a positive multiple of 4 (dt's TMA box spans 4 heads: 16 bytes), got 0
// BAD-HEADS-6: error: ssd-test-warp-specialized-ssd: heads must be a positive multiple of 4 (dt's TMA box spans 4 heads: 16 bytes), got 6
// BAD-SEQLEN: error: ssd-test-warp-specialized-ssd: seqlen must be positive, got 0
// BAD-STAGES: error: ssd-test-warp-specialized-ssd: stages must be 2 to 4, got 5
// BAD-STAGES-LOW: error: ssd-test-warp-specialized-ssd: stages must be 2 to 4, got 1
// Four stages fit only with one published buffer and y in the stages.
// BAD-STAGES-ROOM: error: ssd-test-warp-specialized-ssd: 4 stages need 277664 bytes of shared memory, over the 232448 a block may hold
// BAD-PUBLISHED: error: ssd-test-warp-specialized-ssd: published state buffers must be 1 or 2, got 3
// BAD-PUBLISHED-LOW: error: ssd-test-warp-specialized-ssd: published state buffers must be 1 or 2, got 0
module {
}
