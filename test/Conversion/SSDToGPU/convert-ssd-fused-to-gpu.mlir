// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=cp.async" | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=DEFAULT
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never tensor-cores=false" | FileCheck %s --check-prefix=SIMT
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=segment" | FileCheck %s --check-prefix=SEGMENT
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never mma=wgmma copy=cp.async" | FileCheck %s --check-prefix=WGMMA
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never mma=wgmma" | FileCheck %s --check-prefix=INPLACE

// Mamba-2 2.7B layer shape (h=80, p=64, n=128, g=1), bf16, dynamic L: ONE
// persistent kernel on num_sms * 2 blocks, the counters in zero-initialised
// workspaces, the passed states in a ring of two slots per (row, head):
// only the next chain step's fold reads a slot, the scan reads the state
// from shared memory. Shared memory is one
// dynamic arena (the item kinds reuse its bytes), over the 48 KB static
// limit: 107568 bytes is the per-chunk chain item's (the chunk's x rows,
// 18 KB, and B then C rows, 34 KB, copied by cp.async; 34 KB of x w
// stages and the chunk state's output tile, which the fold reads; the
// 17 KB resident state operand; the scan's y runs from the fragments); with
// state-chain=segment 113808
// bytes, the segment item's (the same and the 32 KB f32 running state), so
// that two blocks per SM still fit in the H200's 228 KB. The segment size
// is chosen at run time from the grid size. By default (copy=auto on
// sm_90a) the rows come by TMA instead: three descriptor parameters, and
// 103984 bytes (dense swizzled rows, no padding, no shared row scales).
// DEFAULT-LABEL: module attributes
// DEFAULT-SAME: name = "state_turn"}, {box = [1, 128, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}
// DEFAULT-SAME: shared_memory = 103984 : i64
// DEFAULT: gpu.func @ssd_fused(
// DEFAULT-SAME: operands = "tma"

// CHECK-LABEL: module attributes {gpu.container_module, ssd.launch = {
// CHECK-SAME: constants = {chunk_size = 128 : i64, dstate = 128 : i64, dtype = "bf16", features = ["D", "dt_bias", "softplus"], headdim = 64 : i64, ngroups = 1 : i64, nheads = 80 : i64, p_block = 64 : i64, state_dtype = "f32"}
// CHECK-SAME: kernels = [{block = [256], grid = ["num_sms * 2"], name = "ssd_fused", params = [{abi = "memref", kind = "tensor", name = "x"}, {abi = "memref", kind = "tensor", name = "dt"}, {abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "B"}, {abi = "memref", kind = "tensor", name = "C"}, {abi = "memref", kind = "tensor", name = "D"}, {abi = "memref", kind = "tensor", name = "dt_bias"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "tensor", name = "final_states"}, {abi = "memref", kind = "workspace", name = "CB"}, {abi = "memref", kind = "workspace", name = "passed_states"}, {abi = "memref", kind = "workspace", name = "ticket"}, {abi = "memref", kind = "workspace", name = "cb_ready"}, {abi = "memref", kind = "workspace", name = "state_turn"}], shared_memory = 107568 : i64}]
// CHECK-SAME: tensors = [{dtype = "bf16", layout = "inner_contiguous", name = "x", shape = [1, "L", 80, 64]}
// CHECK-SAME: {dtype = "f32", name = "final_states", output = true, shape = [1, 80, 64, 128]}]
// No dt_out, dA_cumsum or cumsum_ready: the chain items compute their
// chunk's cumsum themselves.
// CHECK-SAME: workspaces = [{dtype = "f32", name = "CB", shape = [1, "nc", 1, 128, 128]}, {dtype = "f32", name = "passed_states", shape = [1, 2, 80, 64, 128]}, {dtype = "i32", name = "ticket", shape = [1], zero_init = true}, {dtype = "i32", name = "cb_ready", shape = ["nc"], zero_init = true}, {dtype = "i32", name = "state_turn", shape = [80], zero_init = true}]
// CHECK-NOT: func.func
// CHECK: gpu.module @ssd_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32, ssd.kernel_config = {block = 256 : i64, blocks_per_sm = 2 : i64, cluster = 1 : i64, cumsum = "chain_item", fold_loads_ahead = 4 : i64, fold_pieces, mma = "mma.sync", operands = "cp.async", p_block = 64 : i64, shared_memory = 107568 : i64, state_chain = "chunk", state_mma = "mma.sync", state_ring = 2 : i64}, ssd.mma = "mma.sync", ssd.state_chain = "chunk"}
// CHECK-NEXT: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[XROWS:.*]] = memref.view %{{.*}} : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x128x72xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[BCROWS:.*]] = memref.view %{{.*}} : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x128x136xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[STATE:.*]] = memref.view %{{.*}} : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x64x136xbf16, #gpu.address_space<workgroup>>
// The chain items of grid / (2 heads x p-blocks) batch rows, at least 1
// and at most b (here 1), interleave step by step.
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: %[[ROWS:.*]] = arith.divui %[[GRID]], %c160
// CHECK: arith.minsi %[[ROWS]], %c1
// No cumsum items: the chain items compute their own (below), so no
// first-wave split of them either.
// CHECK-NOT: arith.select %{{.*}}, %c5, %c1
// The ticket: a relaxed add by thread 0, broadcast through shared memory.
// CHECK: scf.while
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic
// Publishes: a barrier, then thread 0's device fence and a relaxed store (a release, after the fence)
// (cumulative: they publish every thread's writes ordered by the barrier).
// CHECK: gpu.barrier
// CHECK: %[[T0:.*]] = arith.cmpi eq
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK-NEXT: memref.extract_strided_metadata
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic
// The chain item copies the chunk's x and B rows with cp.async (16 bytes,
// zero-filled past the chunk) first.
// CHECK: memref.extract_aligned_pointer_as_index %[[XROWS]]
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}}
// CHECK: memref.extract_aligned_pointer_as_index %[[BCROWS]]
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// Thread 32 reads the chunk's CB counter once (acquire, no spin) and
// leaves whether it counts all 3 tiles in a shared flag.
// CHECK: %[[T32:.*]] = arith.cmpi eq, %{{.*}}, %c32 : index
// CHECK-NEXT: scf.if %[[T32]] {
// CHECK: %[[CBNOW:.*]] = llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK-NEXT: %[[CBSEEN:.*]] = arith.index_cast %[[CBNOW]]
// CHECK-NEXT: %c3{{.*}} = arith.constant 3 : index
// CHECK-NEXT: %[[CBDONE:.*]] = arith.cmpi sle, %c3{{.*}}, %[[CBSEEN]]
// CHECK: %[[CBFLAG:.*]] = arith.extui %[[CBDONE]] : i1 to i32
// CHECK-NEXT: memref.store %[[CBFLAG]], %[[FLAG:.*]][%{{.*}}] : memref<1xi32, #gpu.address_space<workgroup>>
// The block computes the chunk's dt (softplus of dt + dt_bias) and its
// dA_cumsum, a token a thread: warp scans, the warps' totals through
// shared memory, one barrier; then it stages them and the weights.
// CHECK-NOT: scf.while
// softplus on the special-function unit: 2^(x log2 e), then log(1 + t)
// with the rounding of 1 + t cancelled (t / ((1 + t) - 1)).
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// CHECK: llvm.inline_asm "lg2.approx.ftz.f32 $0, $1;"
// CHECK: llvm.inline_asm "rcp.approx.ftz.f32 $0, $1;"
// CHECK-COUNT-5: gpu.shuffle up
// CHECK: memref.store %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.load %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NEXT: %c0_i32{{.*}} = arith.constant 0 : i32
// CHECK-NEXT: %c0{{.*}} = arith.constant 0 : index
// CHECK-NEXT: %[[FLAGNOW:.*]] = memref.load %[[FLAG]]
// CHECK-NEXT: %[[CBREADY:.*]] = arith.cmpi ne, %[[FLAGNOW]], %c0_i32
// The carry exp(dA[Q - 1]), then slot(c) and slot(c + 1)
// at their places in the ring.
// CHECK: memref.load %{{.*}}[%c127{{.*}}] : memref<128xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: math.exp
// CHECK-NEXT: %c2{{.*}} = arith.constant 2 : index
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[C:.*]], %c2{{.*}} : index
// CHECK-NEXT: %c1{{.*}} = arith.constant 1 : index
// CHECK-NEXT: %[[CNEXT:.*]] = arith.addi %[[C]], %c1
// CHECK-NEXT: %c2{{.*}} = arith.constant 2 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.remui %[[CNEXT]], %c2
// The chunk-state product reads B's rows in place (ldmatrix.trans).
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[BCROWS]]{{.*}}transpose = true
// CHECK: nvvm.mma.sync
// C's rows replace B's while the turn is awaited.
// CHECK: nvvm.cp.async.commit.group
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire
// The fold reads the chunk state's output tile in 16-byte pieces (4
// columns): slot(c) in, slot(c + 1) out, and slot(c) left in shared memory,
// where the chunk scan reads it.
// CHECK: gpu.barrier
// CHECK: vector.load %{{.*}}[%{{.*}}, %[[SLOT]], {{.*}} : memref<1x2x80x64x128xf32>, vector<4xf32>
// CHECK: math.fma {{.*}} : vector<4xf32>
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %[[NEXT]], {{.*}} : memref<1x2x80x64x128xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[STATE]][{{.*}}] {{.*}} vector<4xbf16>
// Where thread 32's first read found CB short, thread 32 waits for it
// before the scan, and the block behind it.
// CHECK: %[[CBSHORT:.*]] = arith.cmpi eq, %[[CBREADY]], %false
// CHECK-NEXT: scf.if %[[CBSHORT]] {
// CHECK: arith.cmpi eq, %{{.*}}, %c32
// CHECK: scf.while
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK: arith.cmpi slt, %{{.*}}, %c3
// CHECK: gpu.barrier
// CHECK-NEXT: }
// The scan reads C's rows and the state in place, x's rows transposed.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvgpu.ldmatrix %[[BCROWS]]{{.*}}transpose = false
// CHECK: nvgpu.ldmatrix %[[STATE]]
// CHECK: nvgpu.ldmatrix %[[XROWS]]{{.*}}transpose = true
// y straight from the fragments too: bf16 pairs, no barrier after the
// products.
// CHECK: nvvm.mma.sync
// CHECK-NOT: gpu.barrier
// CHECK: vector.store {{.*}} : memref<1x?x80x64xbf16>, vector<2xbf16>
// CHECK-NOT: gpu.func
// SEGMENT-LABEL: module attributes {gpu.container_module, ssd.launch = {
// SEGMENT-SAME: shared_memory = 113808 : i64}]
// SEGMENT: gpu.func @ssd_fused(
// SEGMENT-SAME: ssd.kernel_config = {{{.*}}operands = "registers"{{.*}}shared_memory = 113808 : i64, state_chain = "segment", state_mma = "mma.sync", state_ring = 2 : i64}
// SEGMENT-SAME: ssd.state_chain = "segment"
// SEGMENT-DAG: %[[STATE:.*]] = memref.view %{{.*}} to memref<1x64x136xbf16, #gpu.address_space<workgroup>>
// SEGMENT-DAG: %[[LIVE:.*]] = memref.view %{{.*}} to memref<64x128xf32, #gpu.address_space<workgroup>>
// Chunks per segment from the grid size.
// SEGMENT: gpu.grid_dim x
// The segment's chain step leaves slot(k) on chip, in f32 as the running
// state and in bf16 where the chunk scan reads it; each chunk's chunk state
// is folded into the running state in shared memory.
// SEGMENT: vector.store %{{.*}}, %[[LIVE]][{{.*}}] {{.*}} vector<8xf32>
// SEGMENT: vector.store %{{.*}}, %[[STATE]][{{.*}}] {{.*}} vector<8xbf16>
// SEGMENT: nvgpu.ldmatrix %[[STATE]]
// SEGMENT: vector.load %[[LIVE]]
// With mma=wgmma and TMA rows the chunk scan takes wgmma in place (128-row
// tiles, a warpgroup per 64 rows): C's swizzled rows and the state's core
// matrices by descriptor, then the weights from registers against x's
// swizzled rows (inline PTX: NVVM's op takes descriptors only). The
// chunk-state product takes wgmma too (state-mma=auto with TMA rows): x w
// staged as MN-major core matrices, B's swizzled rows as N-major panels.
// INPLACE: gpu.func @ssd_fused(
// INPLACE-SAME: ssd.kernel_config = {{{.*}}mma = "wgmma", operands = "tma", {{.*}}state_mma = "wgmma", state_ring = 2 : i64}
// INPLACE: %[[STATE:.*]] = memref.view %{{.*}} to memref<1x8x16x8x8xbf16, #gpu.address_space<workgroup>>
// INPLACE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// INPLACE: vector.store %{{.*}}, %[[STATE]][{{.*}}] {{.*}} vector<4xbf16>
// INPLACE: nvvm.fence.proxy
// INPLACE: nvvm.wgmma.fence.aligned
// INPLACE-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// INPLACE: nvvm.wgmma.commit.group.sync.aligned
// INPLACE: nvvm.wgmma.wait.group.sync.aligned 0
// INPLACE-COUNT-8: llvm.inline_asm has_side_effects {{.*}}"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, 1, 1, 1, 1;"
// INPLACE: nvvm.wgmma.wait.group.sync.aligned 0
// INPLACE-NOT: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
// With mma=wgmma and cp.async rows the products stage core matrices (67376 bytes of shared
// memory) and the resident state is kept as core matrices too, written by
// the fold and read in place by wgmma.
// WGMMA-LABEL: module attributes {gpu.container_module, ssd.launch = {
// WGMMA-SAME: shared_memory = 67376 : i64}]
// WGMMA: gpu.func @ssd_fused(
// WGMMA-SAME: ssd.kernel_config = {{{.*}}mma = "wgmma", operands = "registers"
// WGMMA-SAME: ssd.mma = "wgmma"
// WGMMA: %[[STATE:.*]] = memref.view %{{.*}} to memref<1x8x16x8x8xbf16, #gpu.address_space<workgroup>>
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// WGMMA: vector.store %{{.*}}, %[[STATE]][{{.*}}] {{.*}} vector<4xbf16>
// WGMMA: memref.extract_aligned_pointer_as_index %[[STATE]]
// WGMMA: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
// Without tensor cores the scan reads slot(c) from global memory after the
// next step may have run: one slot per chunk boundary.
// SIMT: name = "passed_states", shape = [1, "nc + 1", 80, 64, 128]
// SIMT-LABEL: gpu.module @ssd_kernels
// SIMT: state_ring = 0 : i64
// SIMT: ssd.mma = "none"
// SIMT-NOT: mma.sync
// SIMT: math.fma

// -----

// Varlen with per-sequence initial states, f16 state, p_block 16 recorded on
// ssd.fused:
// a row of nc + s slots (no ring: the init item fills every sequence's
// first slot before the chain starts), s bound by initial_states, nc
// derived. Varlen takes
// the per-chunk chain whatever state-chain asks for.
// SEGMENT-LABEL: module attributes {gpu.container_module, ssd.launch = {
// SEGMENT-SAME: features = ["initial_states", "varlen"]
// SEGMENT: gpu.func @ssd_fused(
// SEGMENT-SAME: ssd.state_chain = "chunk"

// CHECK-LABEL: module attributes {gpu.container_module, ssd.launch = {
// CHECK-SAME: features = ["initial_states", "varlen"]
// CHECK-SAME: p_block = 16 : i64, state_dtype = "f16"
// CHECK-SAME: derived = {nc = "ceildiv(L, Q) + s - 1"}
// CHECK-SAME: {dtype = "i32", name = "cu_seqlens", shape = ["s + 1"]}
// CHECK-SAME: {dtype = "f16", name = "passed_states", shape = [1, "nc + s", 4, 32, 64]}
// CHECK-SAME: {dtype = "i32", name = "state_turn", shape = [8], zero_init = true}
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: state_ring = 0 : i64
// CHECK-SAME: ssd.state_chain = "chunk"
// CHECK: nvgpu.mma.sync
// SIMT-LABEL: gpu.module @ssd_kernels
// SIMT: ssd.mma = "none"
// SIMT-NOT: mma.sync
func.func @varlen(%x: tensor<1x?x4x32xf16>, %dt: tensor<1x?x4xf32>, %A: tensor<4xf32>, %B: tensor<1x?x2x64xf16>, %C: tensor<1x?x2x64xf16>, %is: tensor<?x4x32x64xf16>, %cu: tensor<?xi32>) -> (tensor<1x?x4x32xf16>, tensor<?x4x32x64xf16>) {
  %y, %fs = ssd.fused x(%x : tensor<1x?x4x32xf16>) dt(%dt : tensor<1x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x?x2x64xf16>) C(%C : tensor<1x?x2x64xf16>) initial_states(%is : tensor<?x4x32x64xf16>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 64 : i64, p_block = 16 : i64, state_type = f16} -> tensor<1x?x4x32xf16>, tensor<?x4x32x64xf16>
  return %y, %fs : tensor<1x?x4x32xf16>, tensor<?x4x32x64xf16>
}
