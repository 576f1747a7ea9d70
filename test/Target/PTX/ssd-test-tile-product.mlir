// REQUIRES: ptxas
// RUN: ssd-opt %s --ssd-test-tile-product="mma=wgmma a-k-contiguous=false" --ssd-gpu-kernels-to-binary="format=isa" -o %t.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.mlir %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx

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
module {}
