// RUN: ssd-opt %s -split-input-file --ssd-cpu-sink-segment-updates | FileCheck %s

// The state's update (its destination: the loop's state) moves after the
// scan-like reader of the old state, through the reshape it reads it by.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @moves_past_reader
// CHECK: scf.for
// CHECK: %[[READ:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: %[[UPDATE:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%[[STATE:.*]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: scf.yield %[[UPDATE]], %[[READ]]
// CHECK: } {ssd.segment_loop}
func.func @moves_past_reader(%init: tensor<4x8xf32>, %add: tensor<4x8xf32>, %out: tensor<4x8xf32>, %n: index) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %init, %y = %out) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.addf %a, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %flat = tensor.collapse_shape %s [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
    %back = tensor.expand_shape %flat [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
    %scan = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%back : tensor<4x8xf32>) outs(%y : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.mulf %a, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next, %scan : tensor<4x8xf32>, tensor<4x8xf32>
  } {ssd.segment_loop}
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The update's result is read before the old state's last reader: it
// stays.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @result_read_first
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: tensor.extract
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
func.func @result_read_first(%init: tensor<4x8xf32>, %add: tensor<4x8xf32>, %out: tensor<4x8xf32>, %n: index) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %init, %y = %out) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.addf %a, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %e = tensor.extract %next[%c0, %c0] : tensor<4x8xf32>
    %y2 = tensor.insert %e into %y[%c0, %c1] : tensor<4x8xf32>
    %scan = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%y2 : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.mulf %a, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next, %scan : tensor<4x8xf32>, tensor<4x8xf32>
  } {ssd.segment_loop}
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An op between the update and the reader writes into the update's input
// (%a, by tensor.insert): moving the update past it would read the new
// value; it stays.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @input_written_between
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: tensor.insert
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
func.func @input_written_between(%init: tensor<4x8xf32>, %out: tensor<4x8xf32>, %n: index, %f: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %init, %y = %out) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %a = tensor.empty() : tensor<4x8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %v = arith.addf %x, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %a2 = tensor.insert %f into %a[%c0, %c0] : tensor<4x8xf32>
    %scan = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%a2 : tensor<4x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %v = arith.mulf %x, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next, %scan : tensor<4x8xf32>, tensor<4x8xf32>
  } {ssd.segment_loop}
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Only segment loops are scheduled: elsewhere the order stays.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @not_a_segment_loop
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
func.func @not_a_segment_loop(%init: tensor<4x8xf32>, %add: tensor<4x8xf32>, %out: tensor<4x8xf32>, %n: index) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%s = %init, %y = %out) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4x8xf32>) outs(%s : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.addf %a, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %scan = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%y : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = arith.mulf %a, %o : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    scf.yield %next, %scan : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}
