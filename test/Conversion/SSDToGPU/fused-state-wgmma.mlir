// The chunk-state product on wgmma (state-mma=auto, the default, and
// wgmma) where the chain item has TMA rows and dstate 128. x w is staged as
// MN-major core matrices (A transposed), and each warpgroup reads its
// 64-column panel of B's 128-byte-swizzled TMA rows in place (N-major: B
// transposed), so no ldmatrix of B remains. The chunk scan keeps mma.sync
// (`mma`). state-mma=mma.sync, and cp.async rows, keep mma.sync for it.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-mma=wgmma" | FileCheck %s --check-prefix=WGMMA
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=WGMMA
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-mma=auto" | FileCheck %s --check-prefix=WGMMA
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-mma=mma.sync" | FileCheck %s --check-prefix=MMASYNC
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-mma=wgmma copy=cp.async" | FileCheck %s --check-prefix=CPASYNC
// RUN: ssd-opt %s --ssd-gpu-fused-pipeline="format=none state-mma=wgmma" -o /dev/null
// RUN: not ssd-opt %s --convert-ssd-fused-to-gpu="warp-specialized=never state-mma=hgmma" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ssd-opt %s --convert-ssd-fused-to-gpu="warp-specialized=never state-mma=wgmma chip=sm_80" 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// The same shared memory: x w's two stages of core matrices fit where
// mma.sync's padded ones did.
// WGMMA: gpu.func @ssd_fused(
// WGMMA-SAME: mma = "mma.sync", operands = "tma"
// WGMMA-SAME: shared_memory = 78640
// WGMMA-SAME: state_mma = "wgmma"
// The A descriptor: core matrices 1024 bytes apart along k (eight 8-row
// groups of the 64-row tile), 128 along rows; B's: the swizzle bit, 1024
// bytes between 8-k groups, the panel (64 rows x 128 bytes) as the leading
// offset.
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-DAG: arith.constant 34363932672 : i64
// WGMMA-DAG: arith.constant 4611686293338849280 : i64
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// WGMMA: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// WGMMA-NOT: nvvm.wgmma.mma_async
// WGMMA: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA-NOT: transpose = true} : memref<2x64x64xbf16
// WGMMA: gpu.return

// mma.sync reads B's swizzled rows by ldmatrix.trans: chunk (n % 64) / 8
// of row l at that xor l % 8.
// MMASYNC: gpu.func @ssd_fused(
// MMASYNC-SAME: shared_memory = 78640
// MMASYNC-SAME: state_mma = "mma.sync"
// MMASYNC-NOT: nvvm.wgmma.mma_async
// MMASYNC: arith.xori
// MMASYNC: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true} : memref<2x64x64xbf16
// MMASYNC-NOT: nvvm.wgmma.mma_async
// MMASYNC: gpu.return

// CPASYNC: gpu.func @ssd_fused(
// CPASYNC-SAME: operands = "cp.async"
// CPASYNC-SAME: state_mma = "mma.sync"
// CPASYNC-NOT: nvvm.wgmma.mma_async

// BAD: error: convert-ssd-fused-to-gpu: state-mma must be 'auto', 'mma.sync' or 'wgmma', got 'hgmma'
// BAD-CHIP: error: convert-ssd-fused-to-gpu: state-mma=wgmma needs chip sm_90a, got 'sm_80'
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 64 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
