// One Mamba-2 2.7B SSD layer (h=80, p=64, n=128, g=1) as the combined op:
// bf16 x/B/C, f32 dt/A/D/dt_bias, dt_softplus with dt_bias, D per head,
// f32 state, chunk size 256, dynamic batch and sequence length.
func.func @mamba2_2p7b_layer(
    %x: tensor<?x?x80x64xbf16>, %dt: tensor<?x?x80xf32>, %A: tensor<80xf32>,
    %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>,
    %D: tensor<80xf32>, %dt_bias: tensor<80xf32>)
    -> (tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>) {
  %y, %final_states = ssd.combined
      x(%x : tensor<?x?x80x64xbf16>) dt(%dt : tensor<?x?x80xf32>)
      A(%A : tensor<80xf32>) B(%B : tensor<?x?x1x128xbf16>)
      C(%C : tensor<?x?x1x128xbf16>) D(%D : tensor<80xf32>)
      dt_bias(%dt_bias : tensor<80xf32>)
      {chunk_size = 256 : i64, dt_softplus}
      -> tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
  return %y, %final_states : tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
}
