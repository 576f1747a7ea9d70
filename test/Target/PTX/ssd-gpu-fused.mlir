// REQUIRES: ptxas
// RUN: ssd-opt %s --ssd-gpu-fused-pipeline="warp-specialized=never format=isa" -o %t.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.mlir %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: FileCheck %s --check-prefix=PUBLISH --input-file=%t.ptx
// RUN: grep -A1 'fence.acq_rel.gpu' %t.ptx | FileCheck %s --check-prefix=ONE-FENCE
// RUN: grep -cE '^[[:space:]]*(@%p[0-9]+[[:space:]]+)?(atom|red)\.' %t.ptx | FileCheck %s --check-prefix=TWO-RMW
// RUN: grep -B1 -E '^[[:space:]]*atom\.' %t.ptx | FileCheck %s --check-prefix=ADD-PUBLISH
// RUN: grep -cE '^[[:space:]]*\.shared' %t.ptx | FileCheck %s --check-prefix=ONE-SHARED
// RUN: ssd-opt %s --ssd-gpu-fused-pipeline="warp-specialized=never format=isa mma=wgmma copy=cp.async" -o %t.wgmma.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.wgmma.mlir %t.wgmma.ptx
// RUN: %ptxas -arch=sm_90a %t.wgmma.ptx -o %t.wgmma.cubin
// RUN: FileCheck %s --check-prefix=WGMMA --input-file=%t.wgmma.ptx
// RUN: grep -cE '^[[:space:]]*\.shared' %t.wgmma.ptx | FileCheck %s --check-prefix=ONE-SHARED
// RUN: ssd-opt %s --ssd-gpu-fused-pipeline="warp-specialized=never format=isa mma=wgmma" -o %t.inplace.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.inplace.mlir %t.inplace.ptx
// RUN: %ptxas -arch=sm_90a %t.inplace.ptx -o %t.inplace.cubin
// RUN: FileCheck %s --check-prefix=INPLACE --input-file=%t.inplace.ptx
// RUN: ssd-opt %s --ssd-gpu-fused-pipeline="warp-specialized=never format=isa copy=tma" -o %t.tma.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.tma.mlir %t.tma.ptx
// RUN: %ptxas -arch=sm_90a %t.tma.ptx -o %t.tma.cubin
// RUN: FileCheck %s --check-prefix=TMA --input-file=%t.tma.ptx
// RUN: grep -cE '^[[:space:]]*\.shared' %t.tma.ptx | FileCheck %s --check-prefix=ONE-SHARED

// The Mamba-2 2.7B layer in bf16 through the fused pipeline: ONE persistent
// kernel that ptxas assembles for sm_90a, sized for two blocks per SM, its
// tile products on tensor cores.
// CHECK: .target sm_90a
// CHECK: .visible .entry ssd_fused(
// CHECK-DAG: .maxntid 256, 1, 1
// CHECK-DAG: .minnctapersm 2
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: .entry

// The inter-CTA hand-offs keep their ordering through LLVM 22.1.8 (which
// would turn an ordered atomicrmw into a relaxed atom): every publish is a
// barrier, then in thread 0 alone a device-scope fence and a strong relaxed
// store (the fence makes it a release; a release store would fence again);
// every wait spins on an acquire load.
// PUBLISH: fence.acq_rel.gpu;
// PUBLISH-NEXT: st.relaxed.gpu.global.b32
// PUBLISH-NOT: st.release
// PUBLISH: ld.acquire.gpu.global.b32
// No fence in every thread before the barrier:
// ONE-FENCE: fence.acq_rel.gpu
// ONE-FENCE-NOT: bar.sync
// The only read-modify-writes are the relaxed ticket add and the bmm
// items' publish (several blocks add to a chunk's counter), which the
// device fence before it makes a release. (No cumsum items: the turn
// chain's items compute their own.)
// TWO-RMW: {{^2$}}
// ADD-PUBLISH: fence.acq_rel.gpu;
// ADD-PUBLISH-NEXT: atom.global.add.u32
// The arena is the kernel's only shared variable: NVPTX demotes its
// zero-sized symbol to one byte, so any other would alias the arena's
// first bytes (the ticket slot once sat on x's rows).
// ONE-SHARED: {{^1$}}

// mma=wgmma with cp.async rows: the chain item's products (chunk state
// 64x128, chunk scan 64x64) on warpgroup MMA from staged shared memory; the
// bmm item keeps mma.sync.
// WGMMA: .visible .entry ssd_fused(
// WGMMA-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// WGMMA-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// WGMMA-DAG: fence.proxy.async.shared::cta;
// WGMMA-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// mma=wgmma with TMA rows (the default copy on sm_90a): the chunk scan on
// warpgroup MMA in place, each warpgroup 64 rows of the chunk. C times the
// state: eight k16 steps from two descriptors (C's swizzled rows, the state's
// core matrices), one group; the weights times x: eight steps with the
// weights' fragments from registers and x's swizzled rows (N-major, so B is
// transposed), all fragments computed first, then one group. The
// chunk-state product stays on mma.sync.
// INPLACE: .visible .entry ssd_fused(
// INPLACE-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// INPLACE-DAG: cp.async.bulk.tensor.4d
// INPLACE-DAG: fence.proxy.async.shared::cta;
// INPLACE: wgmma.fence.sync.aligned;
// INPLACE-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// INPLACE: wgmma.commit_group.sync.aligned;
// INPLACE: wgmma.wait_group.sync.aligned 0;
// INPLACE: wgmma.fence.sync.aligned;
// INPLACE-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, 1, 1, 1, 1;
// INPLACE-NEXT: // end inline asm
// INPLACE-NEXT: wgmma.commit_group.sync.aligned;
// INPLACE-NEXT: wgmma.wait_group.sync.aligned 0;
// INPLACE-NOT: wgmma.mma_async.sync.aligned.m64n32k16
// copy=tma: x, B and C rows by 4-d TMA boxes completing on two mbarriers
// at the start of the dynamic shared memory; ptxas assembles it for sm_90a.
// TMA: .visible .entry ssd_fused(
// TMA-COUNT-3: .param .align 64 .b8 ssd_fused_param_{{[0-9]+}}[128]
// TMA-COUNT-3: cvta.param.u64
// TMA-COUNT-2: mbarrier.init.shared.b64
// TMA: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [__dynamic_shmem__0],
// TMA-COUNT-3: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {{.*}}, [__dynamic_shmem__0];
// TMA: mbarrier.try_wait.parity.shared.b64
// TMA: mbarrier.arrive.expect_tx.shared.b64 {{.*}}, [__dynamic_shmem__0+8],
// TMA-COUNT-2: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {{.*}}, [__dynamic_shmem__0+8];
// TMA: mbarrier.try_wait.parity.shared.b64
// TMA-NOT: cp.async.cg.shared.global
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
