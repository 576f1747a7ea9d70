// RUN: ssd-opt %s --pass-pipeline="builtin.module(func.func(ssd-cpu-lower-vectors))" | FileCheck %s

// A bufferized register tile: the collapse/expand round trip leaves a
// self-copy in the reduction loop, which is erased; the contraction becomes
// FMAs on rows of the 8 x 32 accumulator; vector exp becomes a polynomial.
// CHECK-LABEL: func.func @tile
// CHECK-NOT: memref.copy
// CHECK: scf.for
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @tile(%a: memref<64x8xf32>, %b: memref<64x32xf32>, %c: memref<1x8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %acc2d = memref.collapse_shape %c [[0, 1], [2]] : memref<1x8x32xf32> into memref<8x32xf32>
  %back = memref.expand_shape %acc2d [[0, 1], [2]] output_shape [1, 8, 32] : memref<8x32xf32> into memref<1x8x32xf32>
  scf.for %k = %c0 to %c64 step %c16 {
    %sa = memref.subview %a[%k, 0] [16, 8] [1, 1] : memref<64x8xf32> to memref<16x8xf32, strided<[8, 1], offset: ?>>
    %sb = memref.subview %b[%k, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
    %va = vector.transfer_read %sa[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x8xf32, strided<[8, 1], offset: ?>>, vector<16x8xf32>
    %vb = vector.transfer_read %sb[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x32xf32, strided<[32, 1], offset: ?>>, vector<16x32xf32>
    %vc = vector.transfer_read %acc2d[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<16x8xf32>, vector<16x32xf32> into vector<8x32xf32>
    vector.transfer_write %r, %acc2d[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
    memref.copy %back, %c : memref<1x8x32xf32> to memref<1x8x32xf32>
  }
  return
}

// CHECK-LABEL: func.func @vector_exp
// CHECK-NOT: math.exp
// CHECK: return
func.func @vector_exp(%v: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %v : vector<16xf32>
  return %e : vector<16xf32>
}
