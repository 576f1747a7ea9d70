// When the chain item takes x, B and C through cp.async copies (raw
// operands): mma.sync, the per-chunk chain, 16-bit inputs, and only while
// two blocks still fit on an SM.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="copy=cp.async" | FileCheck %s --check-prefix=RAW
// RUN: sed 's/chunk_size = 64/chunk_size = 256/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s --check-prefix=STAGED
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="state-chain=segment" | FileCheck %s --check-prefix=STAGED
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="mma=wgmma" | FileCheck %s --check-prefix=STAGED

// Chunk 64: 79888 bytes, x rows [64][72], B/C rows [64][136], the x w
// stages and the chunk state's output tile, which the fold reads (the
// scan's output runs from the product's fragments).
// RAW: shared_memory = 79888
// RAW: gpu.func @ssd_fused(
// RAW-SAME: ssd.kernel_config = {{{.*}}operands = "cp.async"
// RAW-DAG: memref.view {{.*}} to memref<1x64x72xbf16, #gpu.address_space<workgroup>>
// RAW-DAG: memref.view {{.*}} to memref<1x64x136xbf16, #gpu.address_space<workgroup>>
// RAW: nvvm.cp.async.shared.global
// RAW: nvvm.cp.async.wait.group 0
// The scan's weights: register fragments computed from pairs of CB (each
// warp owns whole rows of the chunk), each k16 step of a warp under its
// diagonal test.
// RAW: scf.if {{.*}} -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// RAW: vector.load {{.*}} {alignment = 8 : i64} : memref<1x?x1x64x64xf32>, vector<2xf32>
// RAW: math.exp
// RAW: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// RAW: nvvm.mma.sync

// Chunk 256 (the rows would take 105 KB more: one block per SM), the
// segment chain and wgmma stage every operand through registers and shared
// memory (no register fragments).
// STAGED: gpu.func @ssd_fused(
// STAGED-SAME: operands = "registers"
// STAGED-NOT: nvvm.cp.async
// STAGED-NOT: vector.load {{.*}} : memref<1x?x1x{{[0-9]+}}x{{[0-9]+}}xf32>, vector<2xf32>
// STAGED: gpu.return
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 64 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
