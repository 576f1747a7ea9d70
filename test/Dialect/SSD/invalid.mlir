// RUN: ssd-opt %s -split-input-file -verify-diagnostics

// One case per verifier check of the ssd ops.

func.func @f(%x: tensor<2x64x4xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'x' must be a rank-4 tensor (b,L,h,p), got 'tensor<2x64x4xf32>'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<3x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'B' dimension 0 (b) is 3, expected 2 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<3x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x65x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'dt' dimension 1 (L) is 65, expected 64 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x65x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<5xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'A' dimension 0 (h) is 5, expected 4 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<5xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x8xf32>) {
  // expected-error @+1 {{operand 'C' dimension 3 (n) is 8, expected 16 as in operand 'B'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x8xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x?x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'x' dimension 2 (h) must be static}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x?x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x?xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'B' dimension 3 (n) must be static}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x?xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x3x16xf32>, %C: tensor<2x64x3x16xf32>) {
  // expected-error @+1 {{nheads (4) must be a multiple of ngroups (3)}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x3x16xf32>) C(%C : tensor<2x64x3x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{chunk size must be a positive power of two, got 48 (from attribute 'chunk_size')}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 48 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{chunk size must be a positive power of two, got 0 (from attribute 'chunk_size')}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 0 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %D: tensor<4x8x1xf32>) {
  // expected-error @+1 {{operand 'D' must be (h) or (h,p), got 'tensor<4x8x1xf32>'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) D(%D : tensor<4x8x1xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %D: tensor<4x4xf32>) {
  // expected-error @+1 {{operand 'D' dimension 1 (p) is 4, expected 8 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) D(%D : tensor<4x4xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %z: tensor<2x64x4x16xf32>) {
  // expected-error @+1 {{operand 'z' dimension 3 (p) is 16, expected 8 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) z(%z : tensor<2x64x4x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %dt_bias: tensor<8xf32>) {
  // expected-error @+1 {{operand 'dt_bias' dimension 0 (h) is 8, expected 4 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) dt_bias(%dt_bias : tensor<8xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %initial_states: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{operand 'initial_states' dimension 3 (n) is 8, expected 16 as in operand 'B'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) initial_states(%initial_states : tensor<2x4x8x8xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %seq_idx: tensor<2x32xi32>) {
  // expected-error @+1 {{operand 'seq_idx' dimension 1 (L) is 32, expected 64 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) seq_idx(%seq_idx : tensor<2x32xi32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %seq_idx: tensor<2x64xi32>, %cu_seqlens: tensor<3xi32>) {
  // expected-error @+1 {{seq_idx and cu_seqlens are mutually exclusive}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) seq_idx(%seq_idx : tensor<2x64xi32>) cu_seqlens(%cu_seqlens : tensor<3xi32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %cu_seqlens: tensor<3xi32>) {
  // expected-error @+1 {{cu_seqlens requires batch 1, got 2}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) cu_seqlens(%cu_seqlens : tensor<3xi32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<?x64x4x8xf32>, %dt: tensor<?x64x4xf32>, %A: tensor<4xf32>, %B: tensor<?x64x2x16xf32>, %C: tensor<?x64x2x16xf32>, %cu_seqlens: tensor<3xi32>) {
  // expected-error @+1 {{cu_seqlens requires batch 1, got a dynamic batch}}
  %y, %fs = ssd.combined x(%x : tensor<?x64x4x8xf32>) dt(%dt : tensor<?x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<?x64x2x16xf32>) C(%C : tensor<?x64x2x16xf32>) cu_seqlens(%cu_seqlens : tensor<3xi32>) {chunk_size = 32 : i64} -> tensor<?x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x4x8xf32>, %dt: tensor<1x64x4xf32>, %A: tensor<4xf32>, %B: tensor<1x64x2x16xf32>, %C: tensor<1x64x2x16xf32>, %cu_seqlens: tensor<1xi32>) {
  // expected-error @+1 {{cu_seqlens must hold at least one sequence (2 entries)}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x4x8xf32>) dt(%dt : tensor<1x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x64x2x16xf32>) C(%C : tensor<1x64x2x16xf32>) cu_seqlens(%cu_seqlens : tensor<1xi32>) {chunk_size = 32 : i64} -> tensor<1x64x4x8xf32>, tensor<0x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x4x8xf32>, %dt: tensor<1x64x4xf32>, %A: tensor<4xf32>, %B: tensor<1x64x2x16xf32>, %C: tensor<1x64x2x16xf32>, %cu_seqlens: tensor<0xi32>) {
  // expected-error @+1 {{operand 'cu_seqlens' dimension 0 (s+1) is 0, expected at least 1}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x4x8xf32>) dt(%dt : tensor<1x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x64x2x16xf32>) C(%C : tensor<1x64x2x16xf32>) cu_seqlens(%cu_seqlens : tensor<0xi32>) {chunk_size = 32 : i64} -> tensor<1x64x4x8xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x4x8xf32>, %dt: tensor<1x64x4xf32>, %A: tensor<4xf32>, %B: tensor<1x64x2x16xf32>, %C: tensor<1x64x2x16xf32>, %initial_states: tensor<1x4x8x16xf32>, %cu_seqlens: tensor<4xi32>) {
  // expected-error @+1 {{operand 'initial_states' dimension 0 (s) is 1, expected 3 as in operand 'cu_seqlens'}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x4x8xf32>) dt(%dt : tensor<1x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x64x2x16xf32>) C(%C : tensor<1x64x2x16xf32>) initial_states(%initial_states : tensor<1x4x8x16xf32>) cu_seqlens(%cu_seqlens : tensor<4xi32>) {chunk_size = 32 : i64} -> tensor<1x64x4x8xf32>, tensor<3x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x4x8xf32>, %dt: tensor<1x64x4xf32>, %A: tensor<4xf32>, %B: tensor<1x64x2x16xf32>, %C: tensor<1x64x2x16xf32>, %cu_seqlens: tensor<4xi32>) {
  // expected-error @+1 {{result 'final_states' dimension 0 (s) is 1, expected 3 as in operand 'cu_seqlens'}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x4x8xf32>) dt(%dt : tensor<1x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x64x2x16xf32>) C(%C : tensor<1x64x2x16xf32>) cu_seqlens(%cu_seqlens : tensor<4xi32>) {chunk_size = 32 : i64} -> tensor<1x64x4x8xf32>, tensor<1x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{result 'final_states' dimension 2 (p) is 4, expected 8 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x4x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{result 'y' dimension 1 (L) is 32, expected 64 as in operand 'x'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x32x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xi32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xi32>, %C: tensor<2x64x2x16xi32>) {
  // expected-error @+1 {{operand 'x' element type must be f32, bf16 or f16, got 'i32'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xi32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xi32>) C(%C : tensor<2x64x2x16xi32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xi32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xbf16>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf16>, %C: tensor<2x64x2x16xbf16>) {
  // expected-error @+1 {{operand 'B' element type must match operand 'x' ('bf16'), got 'f16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xbf16>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf16>) C(%C : tensor<2x64x2x16xbf16>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xbf16>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %z: tensor<2x64x4x8xbf16>) {
  // expected-error @+1 {{operand 'z' element type must match operand 'x' ('f32'), got 'bf16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) z(%z : tensor<2x64x4x8xbf16>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xbf16>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xbf16>, %C: tensor<2x64x2x16xbf16>) {
  // expected-error @+1 {{result 'y' element type must match operand 'x' ('bf16'), got 'f32'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xbf16>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xbf16>) C(%C : tensor<2x64x2x16xbf16>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xbf16>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'dt' element type must be f32, got 'bf16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xbf16>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf16>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{operand 'A' element type must be f32, got 'f16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf16>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %D: tensor<4xf16>) {
  // expected-error @+1 {{operand 'D' element type must be f32, got 'f16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) D(%D : tensor<4xf16>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %dt_bias: tensor<4xf64>) {
  // expected-error @+1 {{operand 'dt_bias' element type must be f32, got 'f64'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) dt_bias(%dt_bias : tensor<4xf64>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %seq_idx: tensor<2x64xi64>) {
  // expected-error @+1 {{operand 'seq_idx' element type must be i32, got 'i64'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) seq_idx(%seq_idx : tensor<2x64xi64>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x4x8xf32>, %dt: tensor<1x64x4xf32>, %A: tensor<4xf32>, %B: tensor<1x64x2x16xf32>, %C: tensor<1x64x2x16xf32>, %cu_seqlens: tensor<3xf32>) {
  // expected-error @+1 {{operand 'cu_seqlens' element type must be i32, got 'f32'}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x4x8xf32>) dt(%dt : tensor<1x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x64x2x16xf32>) C(%C : tensor<1x64x2x16xf32>) cu_seqlens(%cu_seqlens : tensor<3xf32>) {chunk_size = 32 : i64} -> tensor<1x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{attribute 'state_type' must be f32 or f16, got 'bf16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, state_type = bf16} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xbf16>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{result 'final_states' element type must be the state type 'f16', got 'f32'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, state_type = f16} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>, %initial_states: tensor<2x4x8x16xf16>) {
  // expected-error @+1 {{operand 'initial_states' element type must be the state type 'f32', got 'f16'}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) initial_states(%initial_states : tensor<2x4x8x16xf16>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{dt_limit low (3.000000e-01) must not exceed high (2.000000e-01)}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, dt_limit = array<f64: 0.3, 0.2>} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{dt_limit must hold two values [low, high], got 3}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, dt_limit = array<f64: 0.0, 0.1, 0.2>} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{dt_limit low (-1.000000e-01) must be non-negative}}
  %y, %fs = ssd.combined x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, dt_limit = array<f64: -0.1, 0.2>} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%dt: tensor<2x100x4xf32>, %A: tensor<4xf32>) {
  // expected-error @+1 {{nchunks is 3 but seqlen 100 with chunk size 64 needs 2}}
  %0:2 = ssd.chunk_cumsum dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) -> tensor<2x4x3x64xf32>, tensor<2x4x3x64xf32>
  return
}

// -----

func.func @f(%dt: tensor<1x150x4xf32>, %A: tensor<4xf32>, %cu: tensor<4xi32>) {
  // expected-error @+1 {{nchunks is 3 but seqlen 150 with chunk size 64 and 3 sequences needs 5}}
  %0:2 = ssd.chunk_cumsum dt(%dt : tensor<1x150x4xf32>) A(%A : tensor<4xf32>) cu_seqlens(%cu : tensor<4xi32>) -> tensor<1x4x3x64xf32>, tensor<1x4x3x64xf32>
  return
}

// -----

func.func @f(%dt: tensor<2x96x4xf32>, %A: tensor<4xf32>) {
  // expected-error @+1 {{chunk size must be a positive power of two, got 48 (from result 'dt_out')}}
  %0:2 = ssd.chunk_cumsum dt(%dt : tensor<2x96x4xf32>) A(%A : tensor<4xf32>) -> tensor<2x4x2x48xf32>, tensor<2x4x2x48xf32>
  return
}

// -----

func.func @f(%dt: tensor<2x100x4xf32>, %A: tensor<4xf32>) {
  // expected-error @+1 {{result 'dA_cumsum' element type must be f32, got 'f16'}}
  %0:2 = ssd.chunk_cumsum dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) -> tensor<2x4x2x64xf32>, tensor<2x4x2x64xf16>
  return
}

// -----

func.func @f(%dt: tensor<2x100x4xf32>, %A: tensor<4xf32>) {
  // expected-error @+1 {{dt_limit low (5.000000e-01) must not exceed high (1.000000e-01)}}
  %0:2 = ssd.chunk_cumsum dt(%dt : tensor<2x100x4xf32>) A(%A : tensor<4xf32>) {dt_limit = array<f64: 0.5, 0.1>} -> tensor<2x4x2x64xf32>, tensor<2x4x2x64xf32>
  return
}

// -----

func.func @f(%dA: tensor<2x4x2x64xf32>) {
  // expected-error @+1 {{result 'segsum' dimension 4 (Q) is 32, expected 64 as in operand 'dA_cumsum'}}
  %0 = ssd.segsum dA_cumsum(%dA : tensor<2x4x2x64xf32>) -> tensor<2x4x2x64x32xf32>
  return
}

// -----

func.func @f(%dA: tensor<2x4x2x64xf16>) {
  // expected-error @+1 {{operand 'dA_cumsum' element type must be f32, got 'f16'}}
  %0 = ssd.segsum dA_cumsum(%dA : tensor<2x4x2x64xf16>) -> tensor<2x4x2x64x64xf32>
  return
}

// -----

func.func @f(%C: tensor<2x96x2x16xf16>, %B: tensor<2x96x2x16xf16>) {
  // expected-error @+1 {{result 'CB' dimension 2 (g) is 1, expected 2 as in operand 'C'}}
  %0 = ssd.bmm C(%C : tensor<2x96x2x16xf16>) B(%B : tensor<2x96x2x16xf16>) -> tensor<2x3x1x32x32xf32>
  return
}

// -----

func.func @f(%C: tensor<2x96x2x16xf16>, %B: tensor<2x96x2x16xbf16>) {
  // expected-error @+1 {{operand 'B' element type must match operand 'C' ('f16'), got 'bf16'}}
  %0 = ssd.bmm C(%C : tensor<2x96x2x16xf16>) B(%B : tensor<2x96x2x16xbf16>) -> tensor<2x3x2x32x32xf32>
  return
}

// -----

func.func @f(%C: tensor<2x96x2x16xf16>, %B: tensor<2x96x2x16xf16>) {
  // expected-error @+1 {{result 'CB' element type must be f32, got 'f16'}}
  %0 = ssd.bmm C(%C : tensor<2x96x2x16xf16>) B(%B : tensor<2x96x2x16xf16>) -> tensor<2x3x2x32x32xf16>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xbf16>, %B: tensor<2x96x2x16xbf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>) {
  // expected-error @+1 {{result 'states' element type must be f32 or f16, got 'bf16'}}
  %0 = ssd.chunk_state x(%x : tensor<2x96x4x8xbf16>) B(%B : tensor<2x96x2x16xbf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) -> tensor<2x3x4x8x16xbf16>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xbf16>, %B: tensor<2x96x2x16xbf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x2x32xf32>) {
  // expected-error @+1 {{operand 'dA_cumsum' dimension 2 (nc) is 2, expected 3 as in operand 'dt'}}
  %0 = ssd.chunk_state x(%x : tensor<2x96x4x8xbf16>) B(%B : tensor<2x96x2x16xbf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x2x32xf32>) -> tensor<2x3x4x8x16xf32>
  return
}

// -----

func.func @f(%s: tensor<2x3x4x8x16xf32>, %dA: tensor<2x4x3x32xf32>) {
  // expected-error @+1 {{result 'final_states' element type must match result 'out' ('f32'), got 'f16'}}
  %0:2 = ssd.state_passing states(%s : tensor<2x3x4x8x16xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) -> tensor<2x3x4x8x16xf32>, tensor<2x4x8x16xf16>
  return
}

// -----

func.func @f(%s: tensor<1x5x4x8x16xf32>, %dA: tensor<1x4x5x64xf32>, %init: tensor<1x4x8x16xf32>, %cu: tensor<4xi32>) {
  // expected-error @+1 {{operand 'cu_seqlens' dimension 0 (s+1) is 4, expected 2 as in operand 'initial_states'}}
  %0:2 = ssd.state_passing states(%s : tensor<1x5x4x8x16xf32>) dA_cumsum(%dA : tensor<1x4x5x64xf32>) initial_states(%init : tensor<1x4x8x16xf32>) cu_seqlens(%cu : tensor<4xi32>) -> tensor<1x5x4x8x16xf32>, tensor<3x4x8x16xf32>
  return
}

// -----

func.func @f(%s: tensor<2x3x4x8x16xf32>, %dA: tensor<2x4x3x32xf32>, %si: tensor<2x64xi32>) {
  // expected-error @+1 {{nchunks is 3 but seqlen 64 with chunk size 32 needs 2}}
  %0:2 = ssd.state_passing states(%s : tensor<2x3x4x8x16xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) seq_idx(%si : tensor<2x64xi32>) -> tensor<2x3x4x8x16xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %seg: tensor<2x4x3x32x32xf32>, %C: tensor<2x96x2x16xf16>, %CB: tensor<2x3x2x32x32xf32>, %s: tensor<2x3x4x8x16xf32>, %D: tensor<2xf32>) {
  // expected-error @+1 {{operand 'D' dimension 0 (h) is 2, expected 4 as in operand 'x'}}
  %0 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) D(%D : tensor<2xf32>) -> tensor<2x96x4x8xf16>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %seg: tensor<2x4x3x32x32xf32>, %C: tensor<2x96x2x16xf16>, %CB: tensor<2x3x2x32x32xf32>, %s: tensor<2x3x4x8x16xf32>) {
  // expected-error @+1 {{result 'y' element type must match operand 'x' ('f16'), got 'f32'}}
  %0 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) -> tensor<2x96x4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %seg: tensor<2x4x3x32x32xf32>, %C: tensor<2x96x2x16xf16>, %CB: tensor<2x3x2x32x32xf32>, %s: tensor<2x3x4x8x16xf32>, %CB16: tensor<2x3x2x32x32xf16>) {
  // expected-error @+1 {{operand 'CB' element type must be f32, got 'f16'}}
  %0 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB16 : tensor<2x3x2x32x32xf16>) states(%s : tensor<2x3x4x8x16xf32>) -> tensor<2x96x4x8xf16>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %seg: tensor<2x4x3x32x32xf32>, %C: tensor<2x96x2x16xf16>, %CB: tensor<2x3x2x32x32xf32>, %s: tensor<2x3x4x8x16xf32>, %si: tensor<2x95xi32>) {
  // expected-error @+1 {{operand 'seq_idx' dimension 1 (L) is 95, expected 96 as in operand 'x'}}
  %0 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) seq_idx(%si : tensor<2x95xi32>) -> tensor<2x96x4x8xf16>
  return
}

// -----

func.func @f(%x: tensor<2x96x4x8xf16>, %dt: tensor<2x4x3x32xf32>, %dA: tensor<2x4x3x32xf32>, %seg: tensor<2x4x3x32x32xf32>, %C: tensor<2x96x2x16xf16>, %CB: tensor<2x3x2x32x32xf32>, %s: tensor<2x3x4x8x16xf32>, %z: tensor<2x96x4x8xbf16>) {
  // expected-error @+1 {{operand 'z' element type must match operand 'x' ('f16'), got 'bf16'}}
  %0 = ssd.chunk_scan x(%x : tensor<2x96x4x8xf16>) dt(%dt : tensor<2x4x3x32xf32>) dA_cumsum(%dA : tensor<2x4x3x32xf32>) segsum(%seg : tensor<2x4x3x32x32xf32>) C(%C : tensor<2x96x2x16xf16>) CB(%CB : tensor<2x3x2x32x32xf32>) states(%s : tensor<2x3x4x8x16xf32>) z(%z : tensor<2x96x4x8xbf16>) -> tensor<2x96x4x8xf16>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{attribute 'p_block' must be a power of two dividing headdim (8), got 16}}
  %y, %fs = ssd.fused x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, p_block = 16 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x2x16xf32>, %C: tensor<2x64x2x16xf32>) {
  // expected-error @+1 {{attribute 'p_block' must be a power of two dividing headdim (8), got 3}}
  %y, %fs = ssd.fused x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x2x16xf32>) C(%C : tensor<2x64x2x16xf32>) {chunk_size = 32 : i64, p_block = 3 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

// ssd.fused shares every check of ssd.combined.
func.func @f(%x: tensor<2x64x4x8xf32>, %dt: tensor<2x64x4xf32>, %A: tensor<4xf32>, %B: tensor<2x64x3x16xf32>, %C: tensor<2x64x3x16xf32>) {
  // expected-error @+1 {{nheads (4) must be a multiple of ngroups (3)}}
  %y, %fs = ssd.fused x(%x : tensor<2x64x4x8xf32>) dt(%dt : tensor<2x64x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<2x64x3x16xf32>) C(%C : tensor<2x64x3x16xf32>) {chunk_size = 32 : i64} -> tensor<2x64x4x8xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

// Zero sizes the kernels specialise on are refused with their source.
func.func @f(%x: tensor<1x64x2x0xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x16xf32>, %C: tensor<1x64x1x16xf32>) {
  // expected-error @+1 {{headdim (p) must be at least 1, got 0 (from operand 'x')}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x0xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x16xf32>) C(%C : tensor<1x64x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x64x2x0xf32>, tensor<1x2x0x16xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x2x16xf32>, %dt: tensor<1x64x2xf32>, %A: tensor<2xf32>, %B: tensor<1x64x1x0xf32>, %C: tensor<1x64x1x0xf32>) {
  // expected-error @+1 {{dstate (n) must be at least 1, got 0 (from operand 'B')}}
  %y, %fs = ssd.fused x(%x : tensor<1x64x2x16xf32>) dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x64x1x0xf32>) C(%C : tensor<1x64x1x0xf32>) {chunk_size = 16 : i64} -> tensor<1x64x2x16xf32>, tensor<1x2x16x0xf32>
  return
}

// -----

func.func @f(%x: tensor<1x64x0x16xf32>, %dt: tensor<1x64x0xf32>, %A: tensor<0xf32>, %B: tensor<1x64x1x16xf32>, %C: tensor<1x64x1x16xf32>) {
  // expected-error @+1 {{nheads (h) must be at least 1, got 0 (from operand 'x')}}
  %y, %fs = ssd.combined x(%x : tensor<1x64x0x16xf32>) dt(%dt : tensor<1x64x0xf32>) A(%A : tensor<0xf32>) B(%B : tensor<1x64x1x16xf32>) C(%C : tensor<1x64x1x16xf32>) {chunk_size = 16 : i64} -> tensor<1x64x0x16xf32>, tensor<1x0x16x16xf32>
  return
}
