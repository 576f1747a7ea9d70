// copy=tma, and the default (auto) on sm_90a: the chain item's x, B and C
// rows come by TMA boxes (one thread,
// one mbarrier per copy group, the 128-byte swizzle) where the layer takes
// raw operands; elsewhere the cp.async or staged paths stay.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=tma" | FileCheck %s --check-prefix=TMA
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=TMA
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=XROWS
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=cp.async" | FileCheck %s --check-prefix=CPASYNC
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=auto chip=sm_80" | FileCheck %s --check-prefix=CPASYNC
// RUN: sed 's/chunk_size = 64/chunk_size = 256/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=tma" | FileCheck %s --check-prefix=STAGED
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=tma p-block=32" | FileCheck %s --check-prefix=CPASYNC

// Three descriptors, passed by value (the manifest's default), boxes of one
// chunk by one 64-column panel of x (by head) and of B and C (by group).
// TMA: {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "C"}
// Dense swizzled rows (no padding), with up to 1008 bytes to align them,
// and no shared row scales (each thread computes its rows'): 1280 bytes
// less than cp.async's 79920.
// TMA: shared_memory = 78640
// TMA: gpu.func @ssd_fused({{.*}}%[[XD:.*]]: !llvm.ptr, %[[BD:.*]]: !llvm.ptr, %[[CD:.*]]: !llvm.ptr)
// TMA-SAME: operands = "tma"
// Their positions among the lowered arguments (14 memrefs of ranks 1 to 5
// expanded first), for ssd-tma-descriptors-by-value.
// TMA-SAME: ssd.lowered_arg_count = 123 : i64
// TMA-SAME: ssd.tma_descriptors = array<i64: 120, 121, 122>
// Two mbarriers, initialised once before the persistent loop, whose phase
// parity the loop carries.
// TMA-COUNT-2: nvvm.mbarrier.init
// TMA: scf.while (%[[P0:.*]] = %c0_i32) : (i32) -> (index, i32)
// TMA: ^bb0(%{{.*}}: index, %[[PARITY:.*]]: i32):
// x (one panel) and B (two) into a 1024-byte aligned buffer, then one
// arrival for their 24576 bytes and three boxes at (column, head or group,
// chunk start, batch row).
// TMA: memref.view {{.*}} to memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// TMA: memref.view {{.*}} to memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// TMA: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[XD]], %{{.*}}, box[
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[BD]], %{{.*}}, box[
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[BD]], %{{.*}}, box[
// TMA: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PARITY]]
// x reaches the block by TMA alone: the products and the epilogue's D x read
// its rows in shared memory, never x in global memory.
// XROWS: gpu.func @ssd_fused(%[[X:arg0]]: memref<1x?x80x64xbf16, strided<[?, ?, ?, 1]>>
// XROWS-NOT: load %[[X]][
// XROWS: gpu.return
// The chunk-state product reads B's swizzled rows in place, one 64-column
// panel per warpgroup (wgmma, B N-major; fused-state-wgmma.mlir).
// TMA: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// C replaces B after a barrier, on the second mbarrier.
// TMA: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// TMA-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[CD]], %{{.*}}, box[
// TMA: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PARITY]]
// TMA-NOT: nvvm.cp.async.shared.global
// TMA: gpu.return

// The cp.async path (copy=cp.async, auto on a chip without TMA, and p-block
// 32: x rows of 32 columns are not a whole panel).
// CPASYNC-NOT: kind = "tma"
// CPASYNC: gpu.func @ssd_fused(
// CPASYNC-SAME: operands = "cp.async"
// CPASYNC-NOT: nvvm.mbarrier
// CPASYNC: nvvm.cp.async.shared.global
// CPASYNC-NOT: nvvm.cp.async.bulk.tensor

// Chunk 256: no raw operands, so no TMA either.
// STAGED-NOT: kind = "tma"
// STAGED: gpu.func @ssd_fused(
// STAGED-SAME: operands = "registers"
// STAGED-NOT: nvvm.cp.async
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 64 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
