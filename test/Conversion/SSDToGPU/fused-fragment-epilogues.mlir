// With raw operands the chunk scan's y runs straight from the product's
// fragments (TileMatmul::epiloguePairs: two columns of a row per thread, no
// output tile in shared memory, no barrier). The fold goes through the
// chunk state's output tile, 16-byte pieces of slot(c) in and slot(c + 1)
// out of the two-slot ring, for fp32 and fp16 states alike (from the
// fragments, 8-byte pairs into the ring were 20% slower on the H200).
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=F32
// RUN: sed -e 's/x128xf32>/x128xf16>/g' -e 's/dt_softplus}/dt_softplus, state_type = f16}/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=F16
// Without raw operands (state-chain=segment) both stay on the output tile.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=segment" | FileCheck %s --check-prefix=TILE

// F32: ssd.kernel_config = {{{.*}}operands = "tma", p_block = 64 : i64, shared_memory = 103984 : i64
// Under the turn (after C's copy starts, 32768 bytes): slot(c) in, slot(c
// + 1) out, 4 f32 (16 bytes) at a time, and the state left in shared
// memory in bf16.
// F32: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// F32: llvm.load %{{.*}} atomic syncscope("device") acquire
// F32: vector.load {{.*}} : memref<1x2x80x64x128xf32>, vector<4xf32>
// F32: math.fma {{.*}} : vector<4xf32>
// F32-NEXT: vector.store {{.*}} : memref<1x2x80x64x128xf32>, vector<4xf32>
// F32: arith.truncf {{.*}} : vector<4xf32> to vector<4xbf16>
// F32-NEXT: vector.store {{.*}} : memref<1x64x136xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// F32: llvm.fence syncscope("device") acq_rel
// F32: llvm.store {{.*}} atomic syncscope("device") monotonic
// No barrier between the release and the scan's products: each thread
// computes the row scales of its own rows, and C's rows are awaited on
// their mbarrier, so the other warps' products overlap thread 0's fence.
// The one barrier there is taken only where the chunk's CB was found
// unpublished as the item started (thread 32 then waits for it).
// F32-NOT: gpu.barrier
// F32: %[[CBSHORT:.*]] = arith.cmpi eq, %{{.*}}, %false : i1
// F32-NEXT: scf.if %[[CBSHORT]] {
// F32-NOT: gpu.barrier
// F32: scf.while
// F32-NOT: gpu.barrier
// F32: gpu.barrier
// F32-NEXT: }
// F32-NOT: gpu.barrier
// F32: nvvm.mbarrier.try_wait.parity
// F32-NOT: gpu.barrier
// F32: nvvm.mma.sync
// F32-NOT: gpu.barrier
// F32: math.exp
// The scan's y: the D x term from x's swizzled rows, then a bf16 pair, and
// no barrier from the last product to the end of the item. D (per head) was
// loaded once before the products: loaded beside each pair, after the
// previous pair's y store (which may alias it), it was reloaded every time.
// F32: nvvm.mma.sync
// F32-NOT: gpu.barrier
// F32: vector.load {{.*}} : memref<1x128x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// F32-NOT: memref<80xf32>
// F32: vector.store {{.*}} : memref<1x?x80x64xbf16>, vector<2xbf16>
// F32-NOT: gpu.barrier
// F32: scf.yield

// F16: ssd.kernel_config = {{{.*}}operands = "tma", p_block = 64 : i64, shared_memory = 103984 : i64
// F16: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// F16: llvm.load %{{.*}} atomic syncscope("device") acquire
// F16: vector.load {{.*}} : memref<1x2x80x64x128xf16>, vector<8xf16>
// F16: vector.store {{.*}} : memref<1x2x80x64x128xf16>, vector<8xf16>
// F16: llvm.fence syncscope("device") acq_rel
// F16: vector.store {{.*}} : memref<1x?x80x64xbf16>, vector<2xbf16>

// TILE: ssd.kernel_config = {{{.*}}operands = "registers"
// TILE-NOT: vector<2xbf16>, vector<2xbf16>
// TILE: vector.store {{.*}} : memref<1x?x80x64xbf16>, vector<8xbf16>

func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
