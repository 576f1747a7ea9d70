// RUN: ssd-opt %s --ssd-cpu-strided-gathers --canonicalize --cse --split-input-file | FileCheck %s

// A gather from a window of a (2, 150) buffer (its rows 150 elements
// apart) whose lane offsets were linearized over the window's 2 x 16 shape:
// each lane's row and column come back from the window's shape, and its
// offset is row * 150 + column.
// CHECK-LABEL: func.func @strided_window
// CHECK-SAME: (%[[M:[^:]*]]: memref<2x16xi32, strided<[150, 1], offset: ?>>, %[[IDX:[^:]*]]: vector<16xindex>, %[[MASK:[^:]*]]: vector<16xi1>, %[[PASS:[^:]*]]: vector<16xi32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[S150:.*]] = arith.constant dense<150> : vector<16xindex>
// CHECK-DAG: %[[S16:.*]] = arith.constant dense<16> : vector<16xindex>
// CHECK-DAG: %[[COL:.*]] = arith.remui %[[IDX]], %[[S16]] : vector<16xindex>
// CHECK-DAG: %[[ROW:.*]] = arith.divui %[[IDX]], %[[S16]] : vector<16xindex>
// CHECK-DAG: %[[ROWOFF:.*]] = arith.muli %[[ROW]], %[[S150]] : vector<16xindex>
// CHECK: %[[OFF:.*]] = arith.addi %[[COL]], %[[ROWOFF]] : vector<16xindex>
// CHECK: vector.gather %[[M]][%[[C0]], %[[C0]]] [%[[OFF]]], %[[MASK]], %[[PASS]]
func.func @strided_window(%m: memref<2x16xi32, strided<[150, 1], offset: ?>>, %idx: vector<16xindex>, %mask: vector<16xi1>, %pass: vector<16xi32>) -> vector<16xi32> {
  %c0 = arith.constant 0 : index
  %g = vector.gather %m[%c0, %c0] [%idx], %mask, %pass : memref<2x16xi32, strided<[150, 1], offset: ?>>, vector<16xindex>, vector<16xi1>, vector<16xi32> into vector<16xi32>
  return %g : vector<16xi32>
}

// -----

// Dynamic sizes and strides, base indices that are not zero and i32 lane
// offsets: the base indices join the lanes' positions (linearized over the
// sizes, each at least 1), the sizes and strides come from the buffer's
// metadata, and the new gather starts at [0, 0].
// CHECK-LABEL: func.func @dynamic_layout
// CHECK-SAME: (%[[M:[^:]*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index, %[[IDX:[^:]*]]: vector<8xi32>
// CHECK: %{{.*}}, %{{.*}}, %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[M]]
// CHECK-DAG: %[[LANES:.*]] = arith.index_cast %[[IDX]] : vector<8xi32> to vector<8xindex>
// CHECK-DAG: %[[S1:.*]] = arith.maxui %[[SIZES]]#1, %c1 : index
// CHECK-DAG: %[[ROWBASE:.*]] = arith.muli %[[I]], %[[S1]] : index
// CHECK-DAG: %[[BASE:.*]] = arith.addi %[[J]], %[[ROWBASE]] : index
// CHECK: %[[POS:.*]] = arith.addi %[[LANES]], %{{.*}} : vector<8xindex>
// CHECK: arith.remui %[[POS]]
// CHECK: arith.divui %[[POS]]
// CHECK: vector.broadcast %[[STRIDES]]#0 : index to vector<8xindex>
// CHECK: vector.gather %[[M]][%c0, %c0] [%{{.*}}], {{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xindex>
func.func @dynamic_layout(%m: memref<?x?xf32, strided<[?, 1], offset: ?>>, %i: index, %j: index, %idx: vector<8xi32>, %mask: vector<8xi1>, %pass: vector<8xf32>) -> vector<8xf32> {
  %g = vector.gather %m[%i, %j] [%idx], %mask, %pass : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xi32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  return %g : vector<8xf32>
}

// -----

// Dense buffers keep their gathers: an identity layout (static or dynamic
// shape) and a contiguous row-major strided layout with an offset.
// CHECK-LABEL: func.func @dense
// CHECK-NOT: extract_strided_metadata
// CHECK-NOT: arith.divui
// CHECK-COUNT-3: vector.gather %{{.*}}[%c0, %c0] [%{{.*}}]
// CHECK-NOT: extract_strided_metadata
func.func @dense(%a: memref<2x16xi32>, %b: memref<?x?xi32>, %c: memref<2x16xi32, strided<[16, 1], offset: 32>>, %idx: vector<16xindex>, %mask: vector<16xi1>, %pass: vector<16xi32>) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>) {
  %c0 = arith.constant 0 : index
  %ga = vector.gather %a[%c0, %c0] [%idx], %mask, %pass : memref<2x16xi32>, vector<16xindex>, vector<16xi1>, vector<16xi32> into vector<16xi32>
  %gb = vector.gather %b[%c0, %c0] [%idx], %mask, %pass : memref<?x?xi32>, vector<16xindex>, vector<16xi1>, vector<16xi32> into vector<16xi32>
  %gc = vector.gather %c[%c0, %c0] [%idx], %mask, %pass : memref<2x16xi32, strided<[16, 1], offset: 32>>, vector<16xindex>, vector<16xi1>, vector<16xi32> into vector<16xi32>
  return %ga, %gb, %gc : vector<16xi32>, vector<16xi32>, vector<16xi32>
}

// -----

// Not yet bufferized: a gather from a tensor has no layout to index by and
// is left as it is (the pass runs after bufferization).
// CHECK-LABEL: func.func @tensor_source
// CHECK-NOT: extract_strided_metadata
// CHECK: vector.gather %{{.*}}[%c0, %c0] [%{{.*}}], {{.*}} : tensor<2x16xi32>
func.func @tensor_source(%t: tensor<2x16xi32>, %idx: vector<16xindex>, %mask: vector<16xi1>, %pass: vector<16xi32>) -> vector<16xi32> {
  %c0 = arith.constant 0 : index
  %g = vector.gather %t[%c0, %c0] [%idx], %mask, %pass : tensor<2x16xi32>, vector<16xindex>, vector<16xi1>, vector<16xi32> into vector<16xi32>
  return %g : vector<16xi32>
}
