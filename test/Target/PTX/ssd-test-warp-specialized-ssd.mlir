// REQUIRES: ptxas
// RUN: ssd-opt %s --ssd-test-warp-specialized-ssd="batch=1 heads=4 seqlen=256 stages=2" --ssd-gpu-kernels-to-binary="format=isa" -o %t.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.mlir %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --input-file=%t.ptx

// The SSD by warpgroup roles assembles for sm_90a without spills: 384
// threads with a register budget (for setmaxnreg), the roles' registers
// moved, TMA copies into the ring, the state's wgmma m64n128k16 from
// shared memory, the outputs' wgmma m64n64k16, the published state and
// the prep warps' scaled x fenced for the async proxy, x's fragments for
// D x by ldmatrix, y staged by stmatrix and stored by whole rows.
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK: .target sm_90a
// CHECK: .visible .entry warp_specialized_ssd(
// CHECK: .maxntid 384, 1, 1
// CHECK: .minnctapersm 1
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32 {{.*}}48;
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 {{.*}}232;
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 {{.*}}224;
// CHECK-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: st.global.v4.b32
// CHECK-DAG: fence.proxy.async.shared::cta;
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
module {
}
