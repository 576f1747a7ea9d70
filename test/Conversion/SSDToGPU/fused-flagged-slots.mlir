// fold=flags: the turn chain's ring slots as 8-byte words, each state value
// with the flag of its step (FlaggedSlots.h).
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="fold=flags" | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="fold=flags" | FileCheck %s --check-prefix=FOLD

// The Mamba-2 2.7B layer (the turn chain alone, its ring, fp32 states):
// the ring's two slots hold i64 words.
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "i64", name = "passed_states", shape = [1, 2, 80, 64, 128]}
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: %arg10: memref<1x2x80x64x128xi64>
// CHECK-SAME: flagged_slots
// CHECK-NOT: fold_pieces
// CHECK-SAME: state_ring = 2 : i64
// The init item: slot 0's words with flag 1 (the state at chunk 0), slot 1's
// with flag 0 (cleared), relaxed 64-bit stores; then the turn's release.
// CHECK: %[[SHIFT:.*]] = arith.constant 32 : i64
// CHECK: %[[ONE:.*]] = arith.index_cast %c1{{.*}} : index to i64
// CHECK-NEXT: %[[HIGH:.*]] = arith.shli %[[ONE]], %[[SHIFT]] : i64
// CHECK-NEXT: %[[WORD:.*]] = arith.ori %[[HIGH]], %{{.*}} : i64
// CHECK-NEXT: llvm.store %[[WORD]], %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: %[[ZERO:.*]] = arith.index_cast %c0{{.*}} : index to i64
// CHECK-NEXT: arith.shli %[[ZERO]]
// CHECK-NEXT: arith.ori
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: gpu.barrier
// CHECK: llvm.fence syncscope("device") acq_rel

// The chain item's fold: the init item's turn (1) acquired, every word of
// slot(c) loaded first (32 a thread: 64 x 128 / 256), then per word a spin
// until its flag is c + 1, the FMA, the word of slot(c + 1) with flag
// c + 2; no device fence before the block barrier that follows the fold.
// FOLD-LABEL: gpu.func @ssd_fused(
// FOLD: %[[ACQ:.*]] = llvm.load %{{.*}} atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// FOLD: arith.cmpi slt, %{{.*}}, %c1{{.*}} : index
// FOLD: gpu.barrier
// FOLD-COUNT-32: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// FOLD-NOT: llvm.store
// FOLD: %[[WANT:.*]] = arith.index_cast %{{.*}} : index to i64
// FOLD-NEXT: arith.constant 32 : i64
// FOLD-NEXT: scf.while (%[[W:.*]] = %{{.*}}) : (i64) -> i64 {
// FOLD-NEXT: %[[FLAG:.*]] = arith.shrui %[[W]], %{{.*}} : i64
// FOLD-NEXT: %[[PENDING:.*]] = arith.cmpi ne, %[[FLAG]], %[[WANT]] : i64
// FOLD-NEXT: scf.condition(%[[PENDING]]) %[[W]] : i64
// FOLD: nvvm.nanosleep
// FOLD-NEXT: llvm.load %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// FOLD: %[[VALUE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// FOLD: %[[S:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// FOLD-NEXT: %[[NEXT:.*]] = math.fma %{{.*}}, %[[VALUE]], %[[S]] : f32
// FOLD: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// FOLD: memref.store %{{.*}}, %{{.*}} : memref<1x64x136xbf16, #gpu.address_space<workgroup>>
// FOLD-COUNT-31: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// FOLD-NOT: llvm.fence
// FOLD: gpu.barrier
// The final item (the kernel's last): each element of the last slot once
// its flag is there, into final_states.
// FOLD: scf.while (%{{.*}} = %{{.*}}) : (i64) -> i64 {
// FOLD: arith.trunci %{{.*}} : i64 to i32
// FOLD-NEXT: arith.bitcast %{{.*}} : i32 to f32
// FOLD-NEXT: memref.store %{{.*}}, %arg8[{{.*}}] : memref<1x80x64x128xf32>
// FOLD: gpu.return
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}

// -----

// fp16 states: no flagged slots (the words hold f32 values); fold=flags
// folds as auto does (vectors with f16 slots).
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "f16", name = "passed_states", shape = [1, 2, 80, 64, 128]}
// CHECK: gpu.func @ssd_fused(
// CHECK-NOT: flagged_slots
// CHECK-SAME: state_ring = 2 : i64
// CHECK-NOT: atomic syncscope("device") monotonic {alignment = 8 : i64}
// CHECK: gpu.return
// FOLD-LABEL: gpu.func @ssd_fused(
func.func @f16_states(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf16>) {
  %y, %fs = ssd.fused x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) {chunk_size = 128 : i64, state_type = f16} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf16>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf16>
}

// -----

// Varlen layers keep per-sequence slots (no ring): no flagged slots; the
// fold takes the pieces, as with auto.
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "f32", name = "passed_states"
// CHECK: gpu.func @ssd_fused(
// CHECK-NOT: flagged_slots
// CHECK-SAME: fold_pieces
// CHECK-NOT: atomic syncscope("device") monotonic {alignment = 8 : i64}
// CHECK: gpu.return
// FOLD-LABEL: gpu.func @ssd_fused(
func.func @varlen(%x: tensor<1x?x4x64xbf16>, %dt: tensor<1x?x4xf32>, %A: tensor<4xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %cu: tensor<?xi32>) -> (tensor<1x?x4x64xbf16>, tensor<?x4x64x128xf32>) {
  %y, %fs = ssd.fused x(%x : tensor<1x?x4x64xbf16>) dt(%dt : tensor<1x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 128 : i64} -> tensor<1x?x4x64xbf16>, tensor<?x4x64x128xf32>
  return %y, %fs : tensor<1x?x4x64xbf16>, tensor<?x4x64x128xf32>
}
