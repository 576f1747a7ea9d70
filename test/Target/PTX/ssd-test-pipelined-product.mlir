// REQUIRES: ptxas
// RUN: ssd-opt %s --ssd-test-pipelined-product="m=128 n=64 k=256 stages=3" --ssd-gpu-kernels-to-binary="format=isa" -o %t.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.mlir %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx

// The warp-specialised main loop assembles for sm_90a: 384 threads with a
// register budget (which setmaxnreg needs), the consumers' registers
// raised, each slice waited for on its full barrier, multiplied in four
// wgmma steps, committed, one group left in flight, and the previous
// slice's stage released; the producer's registers lowered and its TMA
// copies issued.
// CHECK: .target sm_90a
// CHECK: .visible .entry pipelined_product(
// CHECK: .maxntid 384, 1, 1
// CHECK: .minnctapersm 1
// CHECK: setmaxnreg.inc.sync.aligned.u32 {{.*}}232;
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned {{.*}}1;
// CHECK: mbarrier.arrive.shared.b64
// CHECK: wgmma.wait_group.sync.aligned {{.*}}0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 {{.*}}40;
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
module {
}
