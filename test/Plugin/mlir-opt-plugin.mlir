// Debian's mlir-opt, which knows nothing of the project, reads ssd IR and
// runs the project's passes once libSSDPlugin.so is loaded.
// REQUIRES: ssd-plugin
// RUN: mlir-opt %s --load-dialect-plugin=%ssd_plugin --load-pass-plugin=%ssd_plugin \
// RUN:   --pass-pipeline="builtin.module(ssd-decompose)" | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%ssd_plugin --load-pass-plugin=%ssd_plugin \
// RUN:   --pass-pipeline="builtin.module(ssd-decompose,convert-ssd-to-linalg)" \
// RUN:   | FileCheck %s --check-prefix=LINALG
// Without the plugin the same mlir-opt does not know the dialect.
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// CHECK-LABEL: func.func @layer
// CHECK: %[[DTO:.*]], %[[DA:.*]] = ssd.chunk_cumsum
// CHECK: %[[ST:.*]] = ssd.chunk_state
// CHECK: %[[OUT:.*]], %[[FS:.*]] = ssd.state_passing states(%[[ST]]
// CHECK: %[[CB:.*]] = ssd.bmm
// CHECK: %[[SEG:.*]] = ssd.segsum dA_cumsum(%[[DA]]
// CHECK: %[[Y:.*]] = ssd.chunk_scan {{.*}} segsum(%[[SEG]] : {{.*}} CB(%[[CB]] : {{.*}} states(%[[OUT]]
// CHECK-NOT: ssd.combined
// CHECK: return %[[Y]], %[[FS]]

// The linalg the conversion builds comes from mlir-opt's own dialects; no
// ssd op is left (the ssd.lower_triangular attribute may be).
// LINALG-LABEL: func.func @layer
// LINALG-NOT: = ssd.
// LINALG: linalg.generic
// LINALG-NOT: = ssd.
// LINALG: return

// NOPLUGIN: Dialect `ssd' not found for custom op 'ssd.combined'

func.func @layer(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
