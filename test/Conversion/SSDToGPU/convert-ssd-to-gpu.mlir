// RUN: ssd-opt %s -split-input-file --ssd-decompose --convert-ssd-to-gpu | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --convert-ssd-to-gpu="tensor-cores=false" | FileCheck %s --check-prefix=SIMT

// Mamba-2 2.7B layer shape (h=80, p=64, n=128, g=1), bf16, dynamic L: five
// kernels in launch order, tile products on tensor cores (ldmatrix +
// mma.sync; bf16 through nvvm.mma.sync), the function replaced by the
// ssd.launch description.

// CHECK-LABEL: module attributes {gpu.container_module, ssd.launch = {
// CHECK-SAME: constants = {chunk_size = 128 : i64, dstate = 128 : i64, dtype = "bf16", features = ["D", "dt_bias", "softplus"], headdim = 64 : i64, ngroups = 1 : i64, nheads = 80 : i64, state_dtype = "f32"}
// CHECK-SAME: kernels = [{block = [128], grid = ["nc", 1], name = "ssd_chunk_cumsum", params = [{abi = "memref", kind = "tensor", name = "dt"}, {abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "dt_bias"}, {abi = "memref", kind = "workspace", name = "dt_out"}, {abi = "memref", kind = "workspace", name = "dA_cumsum"}], shared_memory = 0 : i64}
// CHECK-SAME: {block = [256], grid = [4, "nc", "1 * 1"], name = "ssd_bmm"
// CHECK-SAME: name = "ssd_chunk_state"
// CHECK-SAME: {block = [256], grid = [32, 80, 1], name = "ssd_state_passing"
// CHECK-SAME: name = "ssd_chunk_scan", params = [{abi = "memref", kind = "tensor", name = "x"}, {abi = "memref", kind = "workspace", name = "dt_out"}, {abi = "memref", kind = "workspace", name = "dA_cumsum"}, {abi = "memref", kind = "tensor", name = "C"}, {abi = "memref", kind = "workspace", name = "CB"}, {abi = "memref", kind = "workspace", name = "prev_states"}, {abi = "memref", kind = "tensor", name = "D"}, {abi = "memref", kind = "tensor", name = "y"}]
// CHECK-SAME: tensors = [{dtype = "bf16", layout = "inner_contiguous", name = "x", shape = [1, "L", 80, 64]}, {dtype = "f32", layout = "inner_contiguous", name = "dt", shape = [1, "L", 80]}, {dtype = "f32", name = "A", shape = [80]}, {dtype = "bf16", layout = "inner_contiguous", name = "B", shape = [1, "L", 1, 128]}, {dtype = "bf16", layout = "inner_contiguous", name = "C", shape = [1, "L", 1, 128]}, {dtype = "f32", name = "D", shape = [80]}, {dtype = "f32", name = "dt_bias", shape = [80]}, {dtype = "bf16", name = "y", output = true, shape = [1, "L", 80, 64]}, {dtype = "f32", name = "final_states", output = true, shape = [1, 80, 64, 128]}]
// CHECK-SAME: workspaces = [{dtype = "f32", name = "dt_out", shape = [1, 80, "nc", 128]}, {dtype = "f32", name = "dA_cumsum", shape = [1, 80, "nc", 128]}, {dtype = "f32", name = "CB", shape = [1, "nc", 1, 128, 128]}, {dtype = "f32", name = "states", shape = [1, "nc", 80, 64, 128]}, {dtype = "f32", name = "prev_states", shape = [1, "nc", 80, 64, 128]}]
// CHECK-NOT: func.func
// CHECK: gpu.module @ssd_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: gpu.func @ssd_chunk_cumsum(%{{.*}}: memref<1x?x80xf32, strided<[?, ?, 1]>>, %{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %{{.*}}: memref<1x80x?x128xf32>, %{{.*}}: memref<1x80x?x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// softplus on the special-function unit: 2^(x log2 e), then log(1 + t)
// with the rounding of 1 + t cancelled (t / ((1 + t) - 1)).
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// CHECK: llvm.inline_asm "lg2.approx.ftz.f32 $0, $1;"
// CHECK: llvm.inline_asm "rcp.approx.ftz.f32 $0, $1;"
// The products fill two shared stages (one 16-byte aligned byte buffer,
// viewed per layout) from 16-byte global loads issued a slice ahead.
// CHECK: gpu.func @ssd_bmm(%{{.*}}: memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, %{{.*}}: memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, %{{.*}}: memref<1x?x1x128x128xf32>) workgroup(%{{.*}} : memref<20480xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x?x1x128xbf16, strided<[?, ?, ?, 1]>>, vector<8xbf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<2x64x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// Token-major operands (x, B) sit k-major in shared memory and are read
// with ldmatrix.trans; the states tile leaves through shared memory in
// 16-byte stores.
// CHECK: gpu.func @ssd_chunk_state(
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<2x32x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<2x32x136xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1x?x80x64x128xf32>, vector<8xf32>
// CHECK: gpu.func @ssd_state_passing(
// CHECK: gpu.func @ssd_chunk_scan(
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<2x32x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1x?x80x64xbf16>, vector<8xbf16>

// The SIMT variant keeps every product in f32 FMAs.
// SIMT-LABEL: gpu.module @ssd_kernels
// SIMT-NOT: mma.sync
// SIMT: gpu.func @ssd_bmm({{.*}}) workgroup(%{{.*}} : memref<32x65xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<32x65xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// SIMT: math.fma
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}

// -----

// f16 with every optional input of a batched layer: nvgpu.mma.sync directly,
// f16 states, seq_idx, z, per-channel D, dt_limit, dynamic b.

// CHECK-LABEL: module attributes {gpu.container_module, ssd.launch = {
// CHECK-SAME: features = ["Dhp", "z", "dt_bias", "softplus", "dt_limit", "initial_states", "seq_idx"]
// CHECK-SAME: state_dtype = "f16"
// CHECK-SAME: grid = [1, "nc", "b * 2"], name = "ssd_bmm", params = [{abi = "memref", kind = "tensor", name = "C"}, {abi = "memref", kind = "tensor", name = "B"}, {abi = "memref", kind = "tensor", name = "seq_idx"}, {abi = "memref", kind = "workspace", name = "CB"}]
// CHECK-SAME: {dtype = "f16", name = "initial_states", shape = ["b", 4, 64, 64]}, {dtype = "i32", name = "seq_idx", shape = ["b", "L"]}
// CHECK-SAME: {dtype = "f16", name = "prev_states", shape = ["b", "nc", 4, 64, 64]}
// CHECK: gpu.func @ssd_chunk_state(
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// SIMT-LABEL: gpu.module @ssd_kernels
// SIMT-NOT: mma.sync
func.func @batched(%x: tensor<?x?x4x64xf16>, %dt: tensor<?x?x4xf32>, %A: tensor<4xf32>, %B: tensor<?x?x2x64xf16>, %C: tensor<?x?x2x64xf16>, %D: tensor<4x64xf32>, %z: tensor<?x?x4x64xf16>, %db: tensor<4xf32>, %is: tensor<?x4x64x64xf16>, %si: tensor<?x?xi32>) -> (tensor<?x?x4x64xf16>, tensor<?x4x64x64xf16>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x4x64xf16>) dt(%dt : tensor<?x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<?x?x2x64xf16>) C(%C : tensor<?x?x2x64xf16>) D(%D : tensor<4x64xf32>) z(%z : tensor<?x?x4x64xf16>) dt_bias(%db : tensor<4xf32>) initial_states(%is : tensor<?x4x64x64xf16>) seq_idx(%si : tensor<?x?xi32>) {chunk_size = 64 : i64, dt_softplus, dt_limit = array<f64: 0.0, 6.0>, state_type = f16} -> tensor<?x?x4x64xf16>, tensor<?x4x64x64xf16>
  return %y, %fs : tensor<?x?x4x64xf16>, tensor<?x4x64x64xf16>
}

// -----

// Varlen f32 without initial states: the sequence count comes from
// cu_seqlens (s1 = s + 1 entries), nc = ceil(L/Q) + s - 1 is derived, the
// rows of final_states are s1 - 1 (no symbol s: a bare s in an output's shape
// binds it, and the runtime refuses to derive a bound symbol), and the
// products stay on exact f32 FMAs.

// CHECK-LABEL: module attributes {gpu.container_module, ssd.launch = {
// CHECK-SAME: derived = {nc = "ceildiv(L, Q) + (s1 - 1) - 1"}
// CHECK-SAME: grid = [2, 2, 1], name = "ssd_state_passing"
// CHECK-SAME: {dtype = "i32", name = "cu_seqlens", shape = ["s1"]}
// CHECK-SAME: {dtype = "f32", name = "final_states", output = true, shape = ["s1 - 1", 2, 32, 16]}
// The f32 layer keeps libm's softplus (its bound is 1e-4), nowhere the
// special-function unit's form.
// CHECK-NOT: lg2.approx
// CHECK: math.log1p
// CHECK-NOT: mma.sync
// CHECK: math.fma
// CHECK-NOT: lg2.approx
// SIMT-LABEL: gpu.module @ssd_kernels
func.func @varlen(%x: tensor<1x?x2x32xf32>, %dt: tensor<1x?x2xf32>, %A: tensor<2xf32>, %B: tensor<1x?x1x16xf32>, %C: tensor<1x?x1x16xf32>, %cu: tensor<?xi32>) -> (tensor<1x?x2x32xf32>, tensor<?x2x32x16xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x2x32xf32>) dt(%dt : tensor<1x?x2xf32>) A(%A : tensor<2xf32>) B(%B : tensor<1x?x1x16xf32>) C(%C : tensor<1x?x1x16xf32>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 16 : i64, dt_softplus} -> tensor<1x?x2x32xf32>, tensor<?x2x32x16xf32>
  return %y, %fs : tensor<1x?x2x32xf32>, tensor<?x2x32x16xf32>
}
