// RUN: ssd-opt %s --ssd-cpu-pipeline | FileCheck %s
// RUN: ssd-opt %s --ssd-cpu-pipeline=parallel=true | FileCheck %s

// A static sequence length of 0 (dynamic batch): every loop over tokens and
// chunks is empty. The CPU code generation leaves loops with a zero trip
// count untiled (tiling one divided by that zero, or crashed computing its
// tile sizes) and the function still lowers to the LLVM dialect.
// CHECK: llvm.func @empty
// CHECK-NOT: ssd.
func.func @empty(%x: tensor<?x0x2x4xf32>, %dt: tensor<?x0x2xf32>, %A: tensor<2xf32>, %B: tensor<?x0x1x8xf32>, %C: tensor<?x0x1x8xf32>) -> (tensor<?x0x2x4xf32>, tensor<?x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x0x2x4xf32>) dt(%dt : tensor<?x0x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<?x0x1x8xf32>) C(%C : tensor<?x0x1x8xf32>) {chunk_size = 16 : i64} -> tensor<?x0x2x4xf32>, tensor<?x2x4x8xf32>
  return %y, %fs : tensor<?x0x2x4xf32>, tensor<?x2x4x8xf32>
}
