// REQUIRES: ptxas
// RUN: ssd-opt %s --ssd-test-tile-product="mma=wgmma a-k-contiguous=false" --ssd-gpu-kernels-to-binary="format=isa" -o %t.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.mlir %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: ssd-opt %s --ssd-test-tile-product="mma=wgmma a-k-contiguous=false a-source=scaled" --ssd-gpu-kernels-to-binary="format=isa" -o %t.scaled.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.scaled.mlir %t.scaled.ptx
// RUN: %ptxas -arch=sm_90a %t.scaled.ptx -o %t.scaled.cubin
// RUN: FileCheck %s --check-prefix=SCALED --input-file=%t.scaled.ptx

// The wgmma tile product assembles for sm_90a: shared stores fenced for the
// async proxy, wgmma.mma_async m64n32k16 on bf16 from two shared-memory
// descriptors (A transposed: stored k x m), committed and waited for.
// CHECK: .target sm_90a
// CHECK: .visible .entry tile_product(
// CHECK: fence.proxy.async.shared::cta;
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;

// A's scaled fragments as wgmma's register A: ldmatrix.trans, then four
// b32 registers and B's descriptor per step, B k-major (no transpose).
// SCALED: .visible .entry tile_product(
// SCALED: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SCALED: wgmma.fence.sync.aligned;
// SCALED: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, 1, 1, 1, 0;
// SCALED: wgmma.commit_group.sync.aligned;
// SCALED: wgmma.wait_group.sync.aligned 0;
module {}
