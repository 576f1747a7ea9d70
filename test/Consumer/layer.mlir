// The layer the installed ssd-opt and plugin decompose (see CMakeLists.txt).
func.func @layer(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>, %C: tensor<1x64x1x8xf32>) -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>) {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
