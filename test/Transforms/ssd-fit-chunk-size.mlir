// RUN: ssd-opt %s --ssd-fit-chunk-size --split-input-file | FileCheck %s
// RUN: ssd-opt %s --ssd-fit-chunk-size="chunk-size=64 min-chunk-size=4 max-versions=2" --split-input-file | FileCheck %s --check-prefix=OPT
// RUN: ssd-opt %s --ssd-fit-chunk-size=max-versions=0 --split-input-file | FileCheck %s --check-prefix=NOLADDER
// RUN: not ssd-opt %s --ssd-fit-chunk-size=chunk-size=48 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: not ssd-opt %s --ssd-fit-chunk-size=min-chunk-size=12 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADMIN
// RUN: not ssd-opt %s --ssd-fit-chunk-size=max-versions=-1 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADV

// BADQ: ssd-fit-chunk-size: chunk-size must be a positive power of two or 0, got 48
// BADMIN: ssd-fit-chunk-size: min-chunk-size must be a positive power of two, got 12
// BADV: ssd-fit-chunk-size: max-versions must not be negative, got -1

// 20 tokens are one chunk at 128 as at 32: the op is computed at 32.
// CHECK-LABEL: func.func @short
// CHECK: ssd.combined {{.*}} {chunk_size = 32 : i64, dt_softplus} -> tensor<1x20x2x4xf32>
// With chunk-size=64 and min-chunk-size=4 the option is fitted the same way.
// OPT-LABEL: func.func @short
// OPT: ssd.combined {{.*}} {chunk_size = 32 : i64, dt_softplus}
func.func @short(%x: tensor<1x20x2x4xf32>, %dt: tensor<1x20x2xf32>, %A: tensor<2xf32>, %B: tensor<1x20x1x8xf32>, %C: tensor<1x20x1x8xf32>) -> (tensor<1x20x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x20x2x4xf32>) dt(%dt : tensor<1x20x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x20x1x8xf32>) C(%C : tensor<1x20x1x8xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x20x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x20x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// Three tokens: not below min-chunk-size (32 by default, 4 with OPT).
// CHECK-LABEL: func.func @tiny
// CHECK: ssd.combined {{.*}} {chunk_size = 32 : i64} -> tensor<2x3x2x4xf32>
// OPT-LABEL: func.func @tiny
// OPT: ssd.combined {{.*}} {chunk_size = 4 : i64} -> tensor<2x3x2x4xf32>
func.func @tiny(%x: tensor<2x3x2x4xf32>, %dt: tensor<2x3x2xf32>, %A: tensor<2xf32>, %B: tensor<2x3x1x8xf32>, %C: tensor<2x3x1x8xf32>) -> (tensor<2x3x2x4xf32>, tensor<2x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<2x3x2x4xf32>) dt(%dt : tensor<2x3x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<2x3x1x8xf32>) C(%C : tensor<2x3x1x8xf32>) {chunk_size = 256 : i64} -> tensor<2x3x2x4xf32>, tensor<2x2x4x8xf32>
  return %y, %fs : tensor<2x3x2x4xf32>, tensor<2x2x4x8xf32>
}

// -----

// A layer of a whole chunk or more keeps its chunk grid; an empty one keeps
// its chunk size (nothing is padded). The chunk-size option replaces the
// op's own on every op.
// CHECK-LABEL: func.func @kept
// CHECK: ssd.combined {{.*}} {chunk_size = 32 : i64} -> tensor<1x32x2x4xf32>
// CHECK: ssd.combined {{.*}} {chunk_size = 32 : i64} -> tensor<1x40x2x4xf32>
// CHECK: ssd.combined {{.*}} {chunk_size = 32 : i64} -> tensor<1x0x2x4xf32>
// OPT-LABEL: func.func @kept
// OPT: ssd.combined {{.*}} {chunk_size = 32 : i64} -> tensor<1x32x2x4xf32>
// OPT: ssd.combined {{.*}} {chunk_size = 64 : i64} -> tensor<1x40x2x4xf32>
// OPT: ssd.combined {{.*}} {chunk_size = 64 : i64} -> tensor<1x0x2x4xf32>
func.func @kept(%x: tensor<1x32x2x4xf32>, %dt: tensor<1x32x2xf32>, %B: tensor<1x32x1x8xf32>, %x2: tensor<1x40x2x4xf32>, %dt2: tensor<1x40x2xf32>, %B2: tensor<1x40x1x8xf32>, %x0: tensor<1x0x2x4xf32>, %dt0: tensor<1x0x2xf32>, %B0: tensor<1x0x1x8xf32>, %A: tensor<2xf32>) -> (tensor<1x32x2x4xf32>, tensor<1x40x2x4xf32>, tensor<1x0x2x4xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x32x2x4xf32>) dt(%dt : tensor<1x32x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x32x1x8xf32>) C(%B : tensor<1x32x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x32x2x4xf32>, tensor<1x2x4x8xf32>
  %y2, %fs2 = ssd.combined x(%x2 : tensor<1x40x2x4xf32>) dt(%dt2 : tensor<1x40x2xf32>) A(%A : tensor<2xf32>) B(%B2 : tensor<1x40x1x8xf32>) C(%B2 : tensor<1x40x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x40x2x4xf32>, tensor<1x2x4x8xf32>
  %y0, %fs0 = ssd.combined x(%x0 : tensor<1x0x2x4xf32>) dt(%dt0 : tensor<1x0x2xf32>) A(%A : tensor<2xf32>) B(%B0 : tensor<1x0x1x8xf32>) C(%B0 : tensor<1x0x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x0x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %y2, %y0 : tensor<1x32x2x4xf32>, tensor<1x40x2x4xf32>, tensor<1x0x2x4xf32>
}

// -----

// Packed sequences: each is at most the layer's 24 tokens long, so each
// stays one chunk at 32.
// CHECK-LABEL: func.func @packed
// CHECK: ssd.combined {{.*}} cu_seqlens(%{{.*}} : tensor<3xi32>) {chunk_size = 32 : i64} -> tensor<1x24x2x4xf32>
func.func @packed(%x: tensor<1x24x2x4xf32>, %dt: tensor<1x24x2xf32>, %A: tensor<2xf32>, %B: tensor<1x24x1x8xf32>, %cu: tensor<3xi32>) -> (tensor<1x24x2x4xf32>, tensor<2x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x24x2x4xf32>) dt(%dt : tensor<1x24x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x24x1x8xf32>) C(%B : tensor<1x24x1x8xf32>) cu_seqlens(%cu : tensor<3xi32>) {chunk_size = 128 : i64} -> tensor<1x24x2x4xf32>, tensor<2x2x4x8xf32>
  return %y, %fs : tensor<1x24x2x4xf32>, tensor<2x2x4x8xf32>
}

// -----

// A dynamic length: a ladder of scf.if on the token count, the smallest
// chunk size first (below 128 and from min-chunk-size 32: 32 and 64), the
// op at 128 for the rest. Every rung reads the same operands.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x?x2x4xf32>
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[L:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<1x?x2x4xf32>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[F32:.*]] = arith.cmpi ule, %[[L]], %[[C32]] : index
// CHECK: %[[R:.*]]:2 = scf.if %[[F32]] -> (tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>)
// CHECK: %[[Y32:.*]], %[[S32:.*]] = ssd.combined x(%[[X]] : tensor<1x?x2x4xf32>) {{.*}} {chunk_size = 32 : i64, dt_softplus}
// CHECK: scf.yield %[[Y32]], %[[S32]]
// CHECK: } else {
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: arith.cmpi ule, %[[L]], %[[C64]] : index
// CHECK: scf.if
// CHECK: ssd.combined x(%[[X]] : tensor<1x?x2x4xf32>) {{.*}} {chunk_size = 64 : i64, dt_softplus}
// CHECK: } else {
// CHECK: ssd.combined x(%[[X]] : tensor<1x?x2x4xf32>) {{.*}} {chunk_size = 128 : i64, dt_softplus}
// Each rung names the most tokens its layer holds.
// CHECK: } {ssd.fit_rung = 64 : i64}
// CHECK: } {ssd.fit_rung = 32 : i64}
// CHECK: return %[[R]]#0, %[[R]]#1
// With chunk-size=64, min-chunk-size=4 and max-versions=2: rungs at 16 and
// 32 (the two largest below 64), then 64.
// OPT-LABEL: func.func @dynamic
// OPT: {chunk_size = 16 : i64, dt_softplus}
// OPT: {chunk_size = 32 : i64, dt_softplus}
// OPT: {chunk_size = 64 : i64, dt_softplus}
// OPT-NOT: ssd.combined
// OPT: return
// max-versions=0 leaves a dynamic length alone.
// NOLADDER-LABEL: func.func @dynamic
// NOLADDER-NOT: scf.if
// NOLADDER: ssd.combined {{.*}} {chunk_size = 128 : i64, dt_softplus}
// NOLADDER-NOT: ssd.combined
// NOLADDER: return
func.func @dynamic(%x: tensor<1x?x2x4xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x8xf32>) -> (tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x4xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x8xf32>) C(%B : tensor<1x?x1x8xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>
}

// -----

// A chunk size at the minimum has no smaller rung: the op stays as it is.
// CHECK-LABEL: func.func @at_minimum
// CHECK-NOT: scf.if
// CHECK: ssd.combined {{.*}} {chunk_size = 32 : i64}
func.func @at_minimum(%x: tensor<1x?x2x4xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x8xf32>) -> (tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x4xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x8xf32>) C(%B : tensor<1x?x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x?x2x4xf32>, tensor<1x2x4x8xf32>
}
