// RUN: ssd-opt %s --ssd-test-tile-product="mma=wgmma" | FileCheck %s --check-prefix=KMAJOR
// RUN: ssd-opt %s --ssd-test-tile-product="mma=wgmma a-k-contiguous=false b-k-contiguous=false n=128" | FileCheck %s --check-prefix=MNMAJOR
// RUN: ssd-opt %s --ssd-test-tile-product="mma=mma.sync" | FileCheck %s --check-prefix=SYNC
// RUN: not ssd-opt %s --ssd-test-tile-product="mma=hmma" 2>&1 | FileCheck %s --check-prefix=BAD-MMA
// RUN: not ssd-opt %s --ssd-test-tile-product="mma=wgmma m=128 n=64" 2>&1 | FileCheck %s --check-prefix=BAD-WGMMA
// RUN: not ssd-opt %s --ssd-test-tile-product="k=100" 2>&1 | FileCheck %s --check-prefix=BAD-K
// RUN: not ssd-opt %s --ssd-test-tile-product="m=0" 2>&1 | FileCheck %s --check-prefix=BAD-SIZE
// RUN: ssd-opt %s --ssd-test-tile-product="a-source=registers" | FileCheck %s --check-prefix=REGS
// RUN: ssd-opt %s --ssd-test-tile-product="a-source=scaled a-k-contiguous=false" | FileCheck %s --check-prefix=SCALED
// RUN: ssd-opt %s --ssd-test-tile-product="a-source=causal" | FileCheck %s --check-prefix=CAUSAL
// RUN: not ssd-opt %s --ssd-test-tile-product="a-source=shared" 2>&1 | FileCheck %s --check-prefix=BAD-SOURCE
// RUN: not ssd-opt %s --ssd-test-tile-product="a-source=registers mma=wgmma" 2>&1 | FileCheck %s --check-prefix=BAD-SOURCE-MMA

// One 64x64 tile product over k = 128 in 64-deep slices. With wgmma the
// slices are staged as core matrices (no ldmatrix), made visible to the
// async proxy before the barrier, and each warpgroup multiplies its 32
// output columns in four k16 steps, A and B both K-major.
// KMAJOR: gpu.module @ssd_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// KMAJOR: gpu.func @tile_product(%{{.*}}: memref<64x128xbf16>, %{{.*}}: memref<64x128xbf16>, %{{.*}}: memref<64x64xf32>)
// KMAJOR-SAME: ssd.mma = "wgmma"
// KMAJOR-NOT: nvgpu.ldmatrix
// KMAJOR: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// KMAJOR-NEXT: gpu.barrier
// KMAJOR: nvvm.wgmma.fence.aligned
// KMAJOR-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// KMAJOR-NEXT: nvvm.wgmma.commit.group.sync.aligned
// KMAJOR-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// KMAJOR-NOT: nvgpu.ldmatrix

// Operands stored k x m and k x n: both MN-major (the transposed wgmma
// forms), 64 output columns per warpgroup.
// MNMAJOR: gpu.func @tile_product(%{{.*}}: memref<128x64xbf16>, %{{.*}}: memref<128x128xbf16>, %{{.*}}: memref<64x128xf32>)
// MNMAJOR: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]

// The sm_80 path: ldmatrix fragments and mma.sync m16n8k16.
// SYNC: gpu.func @tile_product
// SYNC-SAME: ssd.mma = "mma.sync"
// SYNC-NOT: wgmma
// SYNC: nvgpu.ldmatrix
// SYNC: nvvm.mma.sync

// A's fragments made in registers: B copied into shared memory once (one
// barrier, none per slice), only B read by ldmatrix (x2 per n8 pair), each
// A pair masked at k and narrowed to bf16 in registers.
// REGS: gpu.func @tile_product
// REGS-SAME: workgroup(%[[B:.*]] : memref<1x64x136xbf16, #gpu.address_space<workgroup>>
// REGS: gpu.barrier
// REGS-NOT: gpu.barrier
// REGS: vector.from_elements {{.*}} : vector<2xf32>
// REGS: arith.select {{.*}} : vector<2xi1>, vector<2xf32>
// REGS: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// REGS: nvgpu.ldmatrix %[[B]]
// REGS: nvvm.mma.sync
// REGS-NOT: gpu.barrier
// REGS: gpu.return

// A and B both in shared memory, A read with ldmatrix.trans (k x m) and its
// fragments scaled along k in f32 before the product.
// SCALED: %[[FRAG:.*]] = nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true} : memref<1x128x72xbf16
// SCALED: %[[ROW:.*]] = vector.extract %[[FRAG]][0] : vector<2xbf16> from vector<4x2xbf16>
// SCALED-NEXT: %[[WIDE:.*]] = arith.extf %[[ROW]] : vector<2xbf16> to vector<2xf32>
// SCALED-NEXT: %[[SCALED:.*]] = arith.mulf %[[WIDE]], {{.*}} : vector<2xf32>
// SCALED-NEXT: arith.truncf %[[SCALED]] : vector<2xf32> to vector<2xbf16>
// SCALED: nvvm.mma.sync

// Causal A: every k16 step sits in an scf.if on the warp's last row, the
// accumulators passing through when the step lies past the diagonal.
// CAUSAL: %[[LIVE:.*]] = arith.cmpi sle
// CAUSAL-NEXT: scf.if %[[LIVE]] -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CAUSAL: nvvm.mma.sync
// CAUSAL: } else {
// CAUSAL-NEXT: scf.yield

// BAD-SOURCE: error: ssd-test-tile-product: a-source must be 'staged', 'registers', 'scaled' or 'causal', got 'shared'
// BAD-SOURCE-MMA: error: ssd-test-tile-product: a-source 'registers' needs mma=mma.sync, got 'wgmma'
// BAD-MMA: error: ssd-test-tile-product: mma must be 'mma.sync' or 'wgmma', got 'hmma'
// BAD-WGMMA: error: ssd-test-tile-product: wgmma takes 64-row tiles with n a multiple of 16, got 128x64
// BAD-K: error: ssd-test-tile-product: the vector fills need m, n multiples of 8, k a multiple of depth and whole warps of vectors per slice
// BAD-SIZE: error: ssd-test-tile-product: m, n, k and depth must be positive, got m=0 n=64 k=128 depth=64
module {}
