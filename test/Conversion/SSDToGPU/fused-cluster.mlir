// cluster=2: the fused kernel runs in clusters of two blocks that take work
// items in pairs (one ticket, items 2t and 2t + 1); the pair of chain items
// of one chunk and group reads the same B and C rows, so each block copies
// half of their panels (panel r by rank r) into both blocks' shared memory
// by TMA multicast. C's panels overwrite B's only once both blocks have read
// B (a third mbarrier, one arrival from each block).
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never cluster=2" | FileCheck %s
// The look-back kernel takes the same pairs.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never cluster=2 state-chain=lookback" | FileCheck %s --check-prefix=LOOKBACK
// Without clusters nothing of it is emitted.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=NONE

// The launch: the manifest's cluster, which the runtime launches with.
// CHECK: ssd.launch = {{{.*}}kernels = [{block = [256], cluster = [2], grid = ["num_sms * 2"], name = "ssd_fused"
// CHECK: gpu.func @ssd_fused
// CHECK-SAME: known_cluster_size = array<i32: 2, 1, 1>
// CHECK-SAME: ssd.kernel_config = {{{.*}}cluster = 2 : i64{{.*}}operands = "tma"
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// The third mbarrier counts two arrivals; its initialisation is fenced for
// the cluster before any block may arrive on it.
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c2_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// The ticket: rank 0's thread 0 takes it and stores it into both blocks'
// slot; only the writing warp's arrival is a release.
// CHECK: scf.while
// CHECK: llvm.atomicrmw add
// CHECK: nvvm.mapa %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: llvm.store %{{.*}} : i64, !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: llvm.store %{{.*}} : i64, !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: nvvm.cluster.arrive.relaxed {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// x's panel is this block's alone; B's two panels are multicast, each from
// one rank.
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// Before C: an arrival on each block's rows-free barrier, then the wait
// for both, then C's panels multicast the same way.
// CHECK: nvvm.mapa
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK: nvvm.mapa
// CHECK-NEXT: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// No block leaves while its peer may still write into it.
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return

// LOOKBACK: gpu.func @ssd_fused
// LOOKBACK-SAME: known_cluster_size = array<i32: 2, 1, 1>
// LOOKBACK-SAME: state_chain = "lookback"
// LOOKBACK: multicast_mask = %c3_i16
// LOOKBACK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>

// NONE: ssd.launch = {{{.*}}kernels = [{block = [256], grid = ["num_sms * 2"], name = "ssd_fused"
// NONE: gpu.func @ssd_fused
// NONE-SAME: kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32, ssd.kernel_config = {block = 256 : i64, blocks_per_sm = 2 : i64, cluster = 1 : i64
// NONE-NOT: nvvm.cluster
// NONE-NOT: nvvm.mapa
// NONE-NOT: multicast_mask
// NONE: gpu.return

func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
