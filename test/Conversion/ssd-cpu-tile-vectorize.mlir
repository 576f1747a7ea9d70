// RUN: ssd-opt %s --pass-pipeline="builtin.module(func.func(ssd-cpu-tile-vectorize))" --split-input-file | FileCheck %s
// RUN: ssd-opt %s --pass-pipeline="builtin.module(func.func(ssd-cpu-tile-vectorize{parallel=true}))" --split-input-file | FileCheck %s --check-prefix=PAR

// A batched product in the (k, m) x (k, n) layout the lowering emits: the
// chunk loop (with the fused fill), then 8 x 32 register tiles with a
// K step of 16, each one 2-D vector.contract over collapsed tiles.
// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$ACC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul
// CHECK: scf.for %[[C:.*]] = %c0 to %c2 step %c1
// CHECK: linalg.fill
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c16
// CHECK: %[[A:.*]] = vector.transfer_read {{.*}} : tensor<16x8xf32>, vector<16x8xf32>
// CHECK: %[[B:.*]] = vector.transfer_read {{.*}} : tensor<16x32xf32>, vector<16x32xf32>
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: vector.contract {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ACC]]], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %[[A]], %[[B]], %[[ACC]]
// PAR-LABEL: func.func @matmul
// PAR: scf.forall
// PAR: vector.contract
func.func @matmul(%a: tensor<2x16x32xf32>, %b: tensor<2x16x64xf32>) -> tensor<2x32x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x32x64xf32>) -> tensor<2x32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(c, i, j, k) -> (c, k, i)>, affine_map<(c, i, j, k) -> (c, k, j)>, affine_map<(c, i, j, k) -> (c, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x16x32xf32>, tensor<2x16x64xf32>) outs(%f : tensor<2x32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x64xf32>
  return %r : tensor<2x32x64xf32>
}

// -----

// Causal product (the intra-chunk term of chunk_scan): the reduction loop of
// row tile i0 stops at alignTo(i0 + 8, 16).
// CHECK-LABEL: func.func @causal
// CHECK: scf.for %[[I:.*]] = %c0 to %c64 step %c8
// CHECK: %[[END:.*]] = arith.addi %[[I]], %c23
// CHECK: %[[Q:.*]] = arith.divui %[[END]], %c16
// CHECK: %[[R:.*]] = arith.muli %[[Q]], %c16
// CHECK: %[[UB:.*]] = arith.minui %[[R]], %c64
// CHECK: scf.for %{{.*}} = %c0 to %[[UB]] step %c16
// CHECK: vector.contract
// With threads it stays whole: a contraction is spread over its batch loops
// only, and this one has none (a slice of its rows would see its causal
// bound from row 0).
// PAR-LABEL: func.func @causal
// PAR-NOT: scf.forall
// PAR: vector.contract
// PAR-NOT: scf.forall
// PAR: return
func.func @causal(%w: tensor<64x64xf32>, %x: tensor<64x32xf32>, %y: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, p, j) -> (j, i)>, affine_map<(i, p, j) -> (j, p)>, affine_map<(i, p, j) -> (i, p)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %x : tensor<64x64xf32>, tensor<64x32xf32>) outs(%y : tensor<64x32xf32>) attrs = {ssd.lower_triangular} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// -----

// Elementwise ops become one vector per innermost tile, math included.
// CHECK-LABEL: func.func @decay
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK: %[[V:.*]] = vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: %[[M:.*]] = arith.minimumf %[[V]], %{{.*}} : vector<1x16xf32>
// CHECK: math.exp %[[M]] : vector<1x16xf32>
func.func @decay(%d: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.minimumf %x, %z : f32
    %v = math.exp %m : f32
    linalg.yield %v : f32
  } -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// With threads, an elementwise op of at least 4096 iterations is spread over
// an scf.forall; a smaller one (the cumsum scan's step: one per chunk
// position) stays on the calling thread, where a fork and join would cost
// more than it computes.
// PAR-LABEL: func.func @distribute_by_work
// PAR: scf.forall
// PAR: arith.mulf {{.*}} : vector<
// PAR: scf.forall.in_parallel
// PAR-NOT: scf.forall
// PAR: arith.addf {{.*}} : vector<
// PAR: return
func.func @distribute_by_work(%big: tensor<64x128xf32>, %small: tensor<80x32xf32>) -> (tensor<64x128xf32>, tensor<80x32xf32>) {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%big : tensor<64x128xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<80x32xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%small : tensor<80x32xf32>) outs(%e1 : tensor<80x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<80x32xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<80x32xf32>
}

// -----

// With threads, a dynamic loop (the chunks of the tokens after a sequence's
// whole segments, often one) gives way to a static one of more than one
// iteration: the heads go on the threads.
// PAR-LABEL: func.func @distribute_static_first
// PAR: tensor.empty
// PAR-NEXT: %[[D:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x80x64xf32>
// PAR-NEXT: scf.forall (%{{.*}}) in (80)
// PAR: scf.for %{{.*}} = %c0 to %[[D]] step %c1
// PAR: arith.mulf
// PAR: scf.forall.in_parallel
func.func @distribute_static_first(%x: tensor<?x80x64xf32>) -> tensor<?x80x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x80x64xf32>
  %e = tensor.empty(%n) : tensor<?x80x64xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(c, h, p) -> (c, h, p)>, affine_map<(c, h, p) -> (c, h, p)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x80x64xf32>) outs(%e : tensor<?x80x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<?x80x64xf32>
  return %0 : tensor<?x80x64xf32>
}

// -----

// An elementwise op whose innermost loop has one iteration stays scalar: a
// one-element vector gains nothing.
// CHECK-LABEL: func.func @unit_innermost
// CHECK-NOT: vector.
// CHECK: tensor.extract
// CHECK-NOT: vector.
// CHECK: return
func.func @unit_innermost(%src: tensor<2x16x1x1xf32>) -> tensor<2x16x1xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<2x16x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, t, n) -> (b, t, n)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x16x1xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %t = linalg.index 1 : index
    %v = tensor.extract %src[%b, %t, %c0, %c0] : tensor<2x16x1x1xf32>
    linalg.yield %v : f32
  } -> tensor<2x16x1xf32>
  return %r : tensor<2x16x1xf32>
}
