// The fused kernel's bmm item: CB = C B^T of one chunk and group, tile by
// tile below the diagonal. On the tensor cores it fills C's and B's rows
// with 16-byte loads and stores CB's rows 8 f32 at a time, as the unfused
// bmm kernel does: at short sequences the first chain items of each chunk
// wait for this item. With seq_idx the store stays per element (pairs of
// tokens from different sequences are zeroed); without tensor cores the
// rows are read per element.
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="tensor-cores=false" | FileCheck %s --check-prefix=SIMT

// CHECK-LABEL: gpu.func @ssd_fused(
// CHECK-SAME: %[[B:arg3]]: memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, %[[C:arg4]]: memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>
// CHECK-SAME: %[[CB:arg[0-9]+]]: memref<1x?x1x128x128xf32>
// CHECK: vector.load %[[C]][{{.*}}] {alignment = 16 : i64} : memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, vector<8xbf16>
// CHECK: vector.load %[[B]][{{.*}}] {alignment = 16 : i64} : memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, vector<8xbf16>
// CHECK: nvvm.mma.sync
// CHECK: vector.store %{{.*}}, %[[CB]][{{.*}}] {alignment = 16 : i64} : memref<1x?x1x128x128xf32>, vector<8xf32>
// CHECK-NOT: memref.store %{{.*}}, %[[CB]]
// CHECK: llvm.fence syncscope("device") acq_rel

// SIMT-LABEL: gpu.func @ssd_fused(
// SIMT-SAME: %[[C:arg4]]: memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>
// SIMT-SAME: %[[CB:arg[0-9]+]]: memref<1x?x1x128x128xf32>
// SIMT-NOT: vector.load %[[C]]
// SIMT: memref.load %[[C]]
// SIMT-NOT: vector.store %{{.*}}, %[[CB]]
// SIMT: memref.store %{{.*}}, %[[CB]]
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) {chunk_size = 128 : i64} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}

// -----

// CHECK-LABEL: gpu.func @ssd_fused(
// CHECK-SAME: %[[C:arg4]]: memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>
// CHECK-SAME: %[[CB:arg[0-9]+]]: memref<1x?x1x128x128xf32>
// CHECK: vector.load %[[C]][{{.*}}] {alignment = 16 : i64} : memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, vector<8xbf16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: vector.store %{{.*}}, %[[CB]]
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %[[CB]]
// CHECK: llvm.fence syncscope("device") acq_rel
func.func @mamba2_seq_idx(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %si: tensor<1x?xi32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) seq_idx(%si : tensor<1x?xi32>) {chunk_size = 128 : i64} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
