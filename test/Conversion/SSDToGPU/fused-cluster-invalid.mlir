// cluster= is checked against the option's values, the chip and the layer:
// each error names what is missing.
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="cluster=3" 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="cluster=2 chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="cluster=2" 2>&1 | FileCheck %s --check-prefix=LAYER
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="cluster=2 state-chain=segment" 2>&1 | FileCheck %s --check-prefix=SEGMENT

// VALUE: error: convert-ssd-fused-to-gpu: cluster must be 1 or 2, got 3
// CHIP: error: convert-ssd-fused-to-gpu: cluster=2 needs chip sm_90a, got 'sm_80'

// f32 rows: no TMA, so nothing to multicast.
// LAYER: error: convert-ssd-fused-to-gpu: cluster=2 shares B and C rows by TMA multicast: it needs TMA rows ({{.*}}), and this layer's chain item takes registers
// Three heads of one group cannot be paired.
// LAYER: error: convert-ssd-fused-to-gpu: cluster=2 pairs chain items of one group: heads per group x p-blocks must be even, got 3 x 1
// LAYER-NOT: error
// SEGMENT: error: convert-ssd-fused-to-gpu: cluster=2 pairs per-chunk chain items: it needs state-chain chunk, lookback or auto, got segment

func.func @f32_rows(%x: tensor<1x?x4x64xf32>, %dt: tensor<1x?x4xf32>, %A: tensor<4xf32>, %B: tensor<1x?x1x128xf32>, %C: tensor<1x?x1x128xf32>) -> (tensor<1x?x4x64xf32>, tensor<1x4x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x4x64xf32>) dt(%dt : tensor<1x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x?x1x128xf32>) C(%C : tensor<1x?x1x128xf32>) {chunk_size = 128 : i64} -> tensor<1x?x4x64xf32>, tensor<1x4x64x128xf32>
  return %y, %fs : tensor<1x?x4x64xf32>, tensor<1x4x64x128xf32>
}

// -----

func.func @three_heads(%x: tensor<1x?x3x64xbf16>, %dt: tensor<1x?x3xf32>, %A: tensor<3xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>) -> (tensor<1x?x3x64xbf16>, tensor<1x3x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x3x64xbf16>) dt(%dt : tensor<1x?x3xf32>) A(%A : tensor<3xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) {chunk_size = 128 : i64} -> tensor<1x?x3x64xbf16>, tensor<1x3x64x128xf32>
  return %y, %fs : tensor<1x?x3x64xbf16>, tensor<1x3x64x128xf32>
}
