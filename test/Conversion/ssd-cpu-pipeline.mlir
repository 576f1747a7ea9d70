// RUN: ssd-opt %s --ssd-cpu-pipeline | FileCheck %s
// RUN: ssd-opt %s --pass-pipeline="builtin.module(ssd-cpu-pipeline{vectorize=false chunk-size=32})" | FileCheck %s
// RUN: ssd-opt %s --pass-pipeline="builtin.module(ssd-cpu-pipeline{parallel=true threads=2})" | FileCheck %s --check-prefixes=CHECK,PAR

// A module in the shape ssd-run builds: memref arguments, to_tensor inputs,
// one ssd.combined, materialize_in_destination outputs; dynamic L. The
// pipeline leaves only the LLVM dialect, with the C interface wrapper.

// CHECK-NOT: ssd.
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-LABEL: llvm.func @ssd(
// PAR: llvm.call @mlirAsyncRuntimeCreateGroup
// CHECK-LABEL: llvm.func @_mlir_ciface_ssd(
// CHECK: llvm.call @ssd(
func.func @ssd(%x: memref<1x?x2x4xbf16>, %dt: memref<1x?x2xf32>, %A: memref<2xf32>, %B: memref<1x?x1x8xbf16>, %C: memref<1x?x1x8xbf16>, %D: memref<2xf32>, %y: memref<1x?x2x4xbf16>, %fs: memref<1x2x4x8xf32>) attributes {llvm.emit_c_interface} {
  %tx = bufferization.to_tensor %x restrict : memref<1x?x2x4xbf16> to tensor<1x?x2x4xbf16>
  %tdt = bufferization.to_tensor %dt restrict : memref<1x?x2xf32> to tensor<1x?x2xf32>
  %tA = bufferization.to_tensor %A restrict : memref<2xf32> to tensor<2xf32>
  %tB = bufferization.to_tensor %B restrict : memref<1x?x1x8xbf16> to tensor<1x?x1x8xbf16>
  %tC = bufferization.to_tensor %C restrict : memref<1x?x1x8xbf16> to tensor<1x?x1x8xbf16>
  %tD = bufferization.to_tensor %D restrict : memref<2xf32> to tensor<2xf32>
  %ry, %rfs = ssd.combined x(%tx : tensor<1x?x2x4xbf16>) dt(%tdt : tensor<1x?x2xf32>) A(%tA : tensor<2xf32>) B(%tB : tensor<1x?x1x8xbf16>) C(%tC : tensor<1x?x1x8xbf16>) D(%tD : tensor<2xf32>) {chunk_size = 16 : i64, dt_softplus} -> tensor<1x?x2x4xbf16>, tensor<1x2x4x8xf32>
  bufferization.materialize_in_destination %ry in restrict writable %y : (tensor<1x?x2x4xbf16>, memref<1x?x2x4xbf16>) -> ()
  bufferization.materialize_in_destination %rfs in restrict writable %fs : (tensor<1x2x4x8xf32>, memref<1x2x4x8xf32>) -> ()
  return
}
