// REQUIRES: ptxas
// RUN: ssd-opt %s --ssd-gpu-unfused-pipeline="format=isa" -o %t.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.mlir %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: ssd-opt %s --ssd-gpu-unfused-pipeline="format=isa tensor-cores=false" -o %t.simt.mlir
// RUN: %python %ssd_src_root/scripts/gpu-binary-ptx.py %t.simt.mlir %t.simt.ptx
// RUN: %ptxas -arch=sm_90a %t.simt.ptx -o %t.simt.cubin
// RUN: FileCheck %s --check-prefix=SIMT --input-file=%t.simt.ptx

// The Mamba-2 2.7B layer in bf16 through the whole unfused pipeline: PTX for
// sm_90a that ptxas assembles, five kernels, the tile products of bmm,
// chunk_state and chunk_scan on tensor cores (ldmatrix + mma.sync m16n8k16
// bf16 with f32 accumulation, token-major operands through ldmatrix.trans),
// 16-byte global loads and stores, 64-bit addressing.

// CHECK: .target sm_90a
// CHECK-DAG: .visible .entry ssd_chunk_cumsum(
// CHECK-DAG: .visible .entry ssd_bmm(
// CHECK-DAG: .visible .entry ssd_chunk_state(
// CHECK-DAG: .visible .entry ssd_state_passing(
// CHECK-DAG: .visible .entry ssd_chunk_scan(
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: ld.global.v4.b32
// CHECK-DAG: st.global.v4.b32
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// SIMT-NOT: mma.sync
// SIMT-NOT: ldmatrix
// SIMT: fma.rn.f32
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
