// RUN: ssd-opt %s --ssd-test-pipelined-product="m=128 n=64 k=256 stages=3" | FileCheck %s
// RUN: ssd-opt %s --ssd-test-pipelined-product="m=64 n=32 k=64 stages=2" | FileCheck %s --check-prefix=ONE
// RUN: not ssd-opt %s --ssd-test-pipelined-product="m=96" 2>&1 | FileCheck %s --check-prefix=BAD-M
// RUN: not ssd-opt %s --ssd-test-pipelined-product="n=40" 2>&1 | FileCheck %s --check-prefix=BAD-N
// RUN: not ssd-opt %s --ssd-test-pipelined-product="k=100" 2>&1 | FileCheck %s --check-prefix=BAD-K
// RUN: not ssd-opt %s --ssd-test-pipelined-product="stages=1" 2>&1 | FileCheck %s --check-prefix=BAD-STAGES
// RUN: not ssd-opt %s --ssd-test-pipelined-product="m=128 n=256 stages=8" 2>&1 | FileCheck %s --check-prefix=BAD-SHARED

// m = 128: a producer warpgroup and two consumer warpgroups (384 threads).
// Three stages of A's 128 and B's 64 swizzled rows (24576 bytes each,
// 1024-aligned) and six mbarriers in the dynamic shared memory.
// CHECK: module attributes {gpu.container_module, ssd.shared_memory = 74784 : i64}
// CHECK: gpu.func @pipelined_product(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[C:.*]]: memref<128x64xf32>) kernel
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// Thread 0 initialises each stage's full (one arrival) and empty (every
// consumer thread) barriers before the block's barrier.
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: gpu.barrier
// The producer gives registers back; its thread 0 waits for a stage's
// release from the second fill on, announces the bytes of both boxes and
// copies A's and B's 64-deep slices at k = 64 i.
// Use i of the ring is stage i % 3, that stage's fill i / 3; fill u waits
// for the empty barrier (stage + 3) to finish phase u - 1.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.for %[[I:.*]] = %c0{{.*}} to %c4{{.*}} step %c1
// CHECK: %[[STAGE:.*]] = arith.remui %[[I]], %c3{{.*}} : index
// CHECK: %[[FILL:.*]] = arith.divui %[[I]], %c3{{.*}} : index
// CHECK: %[[REFILL:.*]] = arith.cmpi slt, %c0{{.*}}, %[[FILL]] : index
// CHECK-NEXT: scf.if %[[REFILL]]
// CHECK: %[[PREVIOUS:.*]] = arith.subi %[[FILL]], %c1{{.*}} : index
// CHECK: %[[PHASE:.*]] = arith.remui %[[PREVIOUS]], %c2{{.*}} : index
// CHECK-NEXT: %[[PARITY:.*]] = arith.index_cast %[[PHASE]] : index to i32
// CHECK: arith.addi %[[STAGE]], %c3{{.*}} : index
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PARITY]], %c0_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg0, %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg1, %{{.*}}, box[%{{.*}}, %{{.*}}]
// The consumers take registers, wait for each slice's fill, multiply their
// 64 rows in four k16 steps from the swizzled stages (both K-major), keep
// one group in flight and release the previous slice's stage.
// The consumers wait for the full barrier's phase i / 3.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for %[[J:.*]] = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args
// CHECK: %[[USE:.*]] = arith.divui %[[J]], %c3{{.*}} : index
// CHECK-NEXT: %c2{{.*}} = arith.constant 2 : index
// CHECK-NEXT: %[[FULLPHASE:.*]] = arith.remui %[[USE]], %c2{{.*}} : index
// CHECK-NEXT: %[[FULLPARITY:.*]] = arith.index_cast %[[FULLPHASE]] : index to i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[FULLPARITY]], %c0_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// Eight n8 fragments of a warp's 16 rows: 32 stores of C a thread.
// CHECK-COUNT-32: memref.store %{{.*}}, %[[C]]
// CHECK-NOT: memref.store
// CHECK: gpu.return

// m = 64: one consumer warpgroup (256 threads), empty barriers of 128
// arrivals, one slice.
// ONE: known_block_size = array<i32: 256, 1, 1>
// ONE: nvvm.mbarrier.init %{{.*}}, %c128_i32
// ONE: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c12288_i32
// ONE-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>

// BAD-M: error: ssd-test-pipelined-product: m must be 64 or 128 (one consumer warpgroup per 64 rows), got 96
// BAD-N: error: ssd-test-pipelined-product: n must be a multiple of 16 from 16 to 256 (wgmma's N and a TMA box's rows), got 40
// BAD-K: error: ssd-test-pipelined-product: k must be a positive multiple of 64 (whole swizzled slices), got 100
// BAD-STAGES: error: ssd-test-pipelined-product: stages must be 2 to 8, got 1
// BAD-SHARED: error: ssd-test-pipelined-product: 8 stages of 49152 bytes need 394368 bytes of shared memory, over the 232448 a block may hold
module {
}
