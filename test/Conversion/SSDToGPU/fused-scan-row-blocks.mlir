// scan-rows=paired: the chunk scan's 8 x 1 grid of mma.sync warps takes
// its 16-row blocks in pairs per SM sub-partition: warps w and w + 4 (one
// sub-partition, w % 4) own blocks w and 7 - w, so that the causal
// product's k16 steps come to 9 on every sub-partition (warp w on block w:
// 6, 8, 10 and 12).
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="scan-rows=paired" | FileCheck %s --check-prefix=PAIRED
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="scan-rows=paired copy=cp.async" | FileCheck %s --check-prefix=PAIRED
// RUN: ssd-opt %s --ssd-gpu-fused-pipeline="format=none scan-rows=paired" -o /dev/null
// linear (the default) keeps warp w on block w, and so do the wgmma scan
// (a warpgroup's m64 fixes each warp's rows) and a 64-row scan tile
// (chunk 64: 4 x 2 warps) whatever the option.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s --check-prefix=LINEAR
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="scan-rows=linear" | FileCheck %s --check-prefix=LINEAR
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="scan-rows=paired mma=wgmma" | FileCheck %s --check-prefix=LINEAR
// RUN: sed 's/chunk_size = 128/chunk_size = 64/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="scan-rows=paired" | FileCheck %s --check-prefix=LINEAR
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="scan-rows=diagonal" 2>&1 | FileCheck %s --check-prefix=BAD

// PAIRED: ssd.kernel_config = {{{.*}}p_block = 64 : i64, scan_row_blocks = "paired", shared_memory
// The warp's block: w below 4, else 11 - w.
// PAIRED: %[[FLIPPED:.*]] = arith.subi %c11{{.*}}, %[[WARP:[0-9]+]] : index
// PAIRED-NEXT: %c4{{.*}} = arith.constant 4 : index
// PAIRED-NEXT: %[[LOW:.*]] = arith.cmpi slt, %[[WARP]], %c4{{.*}} : index
// PAIRED-NEXT: arith.select %[[LOW]], %{{[0-9]+}}, %[[FLIPPED]] : index

// LINEAR: ssd.kernel_config = {{{.*}}p_block = 64 : i64, shared_memory
// LINEAR-NOT: arith.constant 11 : index

// BAD: error: convert-ssd-fused-to-gpu: scan-rows must be 'linear' or 'paired', got 'diagonal'
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
