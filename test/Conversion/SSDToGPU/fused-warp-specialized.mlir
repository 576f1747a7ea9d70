// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu | FileCheck %s --check-prefix=GATED
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=NEVER
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always" 2>&1 | FileCheck %s --check-prefixes=ALWAYS,BAD-Z
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=NEVER
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=NEVER
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="profile=true" | FileCheck %s --check-prefix=NEVER
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=sometimes" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=always chip=sm_80" 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// The Mamba-2 2.7B layer (80 heads, headdim 64, dstate 128, bf16, D,
// dt_bias, softplus) with a dynamic batch: by default (auto) the module
// holds the persistent kernel and `ssd_warp_specialized`, the latter
// launched where b x 80 blocks reach 2 per SM (derived `warp_specialized`),
// the former elsewhere.
// CHECK: derived = {warp_specialized = "min(1, (b * 80) / (num_sms * 2))"}
// CHECK: name = "ssd_fused"
// CHECK-SAME: when = "(1 - warp_specialized)"
// One block of 512 threads (producer, state, two output warpgroups) per
// (row, head): A, dt_bias, D, y and the final states as memrefs, then the
// TMA maps of C, B, x (a chunk of 64 rows by a 64-column panel, 128-byte
// swizzle) and dt (64 tokens by 4 heads, unswizzled), in 160816 bytes of
// dynamic shared memory (3 stages).
// CHECK-SAME: {block = [512], grid = ["b * 80"], name = "ssd_warp_specialized", params = [{abi = "memref", kind = "tensor", name = "A"}, {abi = "memref", kind = "tensor", name = "dt_bias"}, {abi = "memref", kind = "tensor", name = "D"}, {abi = "memref", kind = "tensor", name = "y"}, {abi = "memref", kind = "tensor", name = "final_states"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "C"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "B"}, {box = [1, 64, 1, 64], kind = "tma", swizzle = "128B", tensor = "x"}, {box = [1, 64, 4], kind = "tma", swizzle = "none", tensor = "dt"}], shared_memory = 160816 : i64, when = "warp_specialized"}
// CHECK: gpu.func @ssd_fused(
// CHECK: gpu.func @ssd_warp_specialized(%{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %{{.*}}: memref<80xf32>, %[[Y:.*]]: memref<?x?x80x64xbf16>, %{{.*}}: memref<?x80x64x128xf32>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel
// The descriptors' positions among the lowered arguments, for
// ssd-tma-descriptors-by-value; one resident block a SM (setmaxnreg).
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>, nvvm.minctasm = 1 : i32, ssd.lowered_arg_count = 41 : i64, ssd.tma_descriptors = array<i64: 37, 38, 39, 40>
// The sequence's length from y, its chunks of 64 tokens rounded up.
// CHECK: %[[L:.*]] = memref.dim %[[Y]], %c1
// CHECK: %[[END:.*]] = arith.addi %[[L]], %c63 : index
// CHECK-NEXT: arith.divui %[[END]], %c64{{.*}} : index
// CHECK-COUNT-4: nvvm.setmaxregister

// ALWAYS: derived = {warp_specialized = "1"}
// ALWAYS: when = "(1 - warp_specialized)"
// ALWAYS: name = "ssd_warp_specialized"

// With never, on chips other than sm_90a and with profile (which
// records the persistent kernel's items), the persistent kernel alone.
// NEVER-NOT: warp_specialized

// BAD: convert-ssd-fused-to-gpu: warp-specialized must be 'auto', 'always' or 'never', got 'sometimes'
// BAD-CHIP: convert-ssd-fused-to-gpu: warp-specialized=always, but the warp-specialised kernel cannot take the layer: it needs chip sm_90a (TMA, wgmma, setmaxnreg), got 'sm_80'

func.func @mamba2(%x: tensor<?x?x80x64xbf16>, %dt: tensor<?x?x80xf32>, %A: tensor<80xf32>, %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x80x64xbf16>) dt(%dt : tensor<?x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<?x?x1x128xbf16>) C(%C : tensor<?x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
  return %y, %fs : tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
}

// -----

// With z, the warp-specialised kernel does not take the layer: auto keeps
// the persistent kernel alone, always says why.
// GATED: gpu.func @ssd_warp_specialized(
// GATED: gpu.container_module
// GATED-NOT: warp_specialized
// GATED: gpu.func @ssd_fused(
// GATED-NOT: gpu.func @ssd_warp_specialized
// BAD-Z: warp-specialized=always, but the warp-specialised kernel cannot take the layer: the layer has z
func.func @gated(%x: tensor<?x?x80x64xbf16>, %dt: tensor<?x?x80xf32>, %A: tensor<80xf32>, %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>, %z: tensor<?x?x80x64xbf16>) -> (tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<?x?x80x64xbf16>) dt(%dt : tensor<?x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<?x?x1x128xbf16>) C(%C : tensor<?x?x1x128xbf16>) z(%z : tensor<?x?x80x64xbf16>) {chunk_size = 128 : i64} -> tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
  return %y, %fs : tensor<?x?x80x64xbf16>, tensor<?x80x64x128xf32>
}
