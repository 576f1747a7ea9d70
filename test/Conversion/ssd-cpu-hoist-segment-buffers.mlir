// RUN: ssd-opt %s --ssd-cpu-hoist-segment-buffers --split-input-file | FileCheck %s

// In a segment loop: the static temporary and the one sized by a value
// defined outside the loop move before the loop (with the size computed
// from the arguments, moved out first); the buffer yielded into the next
// iteration (also through a view), the one sized by the iteration, the one
// freed in the loop and the one inside the nested parallel loop stay where
// they are.
// CHECK-LABEL: func.func @segment_loop
// CHECK-SAME: (%[[N:.*]]: index, %[[OUT:.*]]: memref<64x32xf32>, %[[ARG:.*]]: memref<?xf32>)
// CHECK-DAG: %[[TMP:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK-DAG: %[[DYN:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK-DAG: %[[D:.*]] = memref.dim %[[ARG]]
// CHECK-DAG: memref.alloc(%[[D]]) : memref<?xf32>
// CHECK: scf.for %[[S:[^ ]*]] =
// CHECK-DAG: memref.alloc() : memref<16xf32>
// CHECK-DAG: memref.alloc() : memref<4x4xf32>
// CHECK-DAG: %[[M:.*]] = arith.addi %[[S]]
// CHECK-DAG: memref.alloc(%[[M]]) : memref<?xf32>
// CHECK-DAG: %[[FREED:.*]] = memref.alloc() : memref<32xf32>
// CHECK-DAG: memref.dealloc %[[FREED]]
// CHECK: scf.forall
// CHECK-NEXT: memref.alloc() : memref<8xf32>
// CHECK: } {ssd.segment_loop}
func.func @segment_loop(%n: index, %out: memref<64x32xf32>, %arg: memref<?xf32>) -> (memref<16xf32>, memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 0.0 : f32
  %init = memref.alloc() : memref<16xf32>
  %init2 = memref.alloc() : memref<4x4xf32>
  %r:2 = scf.for %s = %c0 to %c4 step %c1 iter_args(%st = %init, %st2 = %init2) -> (memref<16xf32>, memref<4x4xf32>) {
    %tmp = memref.alloc() : memref<64x32xf32>
    linalg.fill ins(%f : f32) outs(%tmp : memref<64x32xf32>)
    memref.copy %tmp, %out : memref<64x32xf32> to memref<64x32xf32>
    %next = memref.alloc() : memref<16xf32>
    memref.copy %st, %next : memref<16xf32> to memref<16xf32>
    %flat = memref.alloc() : memref<4x4xf32>
    %view = memref.collapse_shape %flat [[0, 1]] : memref<4x4xf32> into memref<16xf32>
    memref.copy %next, %view : memref<16xf32> to memref<16xf32>
    %dyn = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%f : f32) outs(%dyn : memref<?xf32>)
    %d = memref.dim %arg, %c0 : memref<?xf32>
    %like = memref.alloc(%d) : memref<?xf32>
    linalg.fill ins(%f : f32) outs(%like : memref<?xf32>)
    %m = arith.addi %s, %c1 : index
    %var = memref.alloc(%m) : memref<?xf32>
    linalg.fill ins(%f : f32) outs(%var : memref<?xf32>)
    %freed = memref.alloc() : memref<32xf32>
    linalg.fill ins(%f : f32) outs(%freed : memref<32xf32>)
    memref.dealloc %freed : memref<32xf32>
    scf.forall (%i) in (4) {
      %own = memref.alloc() : memref<8xf32>
      linalg.fill ins(%f : f32) outs(%own : memref<8xf32>)
    }
    scf.yield %next, %flat : memref<16xf32>, memref<4x4xf32>
  } {ssd.segment_loop}
  return %r#0, %r#1 : memref<16xf32>, memref<4x4xf32>
}

// -----

// A loop over the sequences of a cu_seqlens layer: what its segment loop
// hoisted moves out of it too (the static temporary), but a buffer sized by
// the sequence (the tokens after its whole segments) stays in it.
// CHECK-LABEL: func.func @sequence_loop
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: %[[LEN:.*]] = memref.load
// CHECK: memref.alloc(%[[LEN]]) : memref<?xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: } {ssd.segment_loop}
// CHECK: } {ssd.sequence_loop}
func.func @sequence_loop(%lens: memref<3xindex>, %out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    %len = memref.load %lens[%i] : memref<3xindex>
    %rest = memref.alloc(%len) : memref<?xf32>
    linalg.fill ins(%f : f32) outs(%rest : memref<?xf32>)
    scf.for %s = %c0 to %c4 step %c1 {
      %tmp = memref.alloc() : memref<64x32xf32>
      linalg.fill ins(%f : f32) outs(%tmp : memref<64x32xf32>)
      memref.copy %tmp, %out : memref<64x32xf32> to memref<64x32xf32>
    } {ssd.segment_loop}
  } {ssd.sequence_loop}
  return
}

// -----

// A loop the split did not make keeps its allocations.
// CHECK-LABEL: func.func @other_loop
// CHECK: scf.for
// CHECK-NEXT: memref.alloc() : memref<64x32xf32>
func.func @other_loop(%out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 0.0 : f32
  scf.for %s = %c0 to %c4 step %c1 {
    %tmp = memref.alloc() : memref<64x32xf32>
    linalg.fill ins(%f : f32) outs(%tmp : memref<64x32xf32>)
    memref.copy %tmp, %out : memref<64x32xf32> to memref<64x32xf32>
  }
  return
}
