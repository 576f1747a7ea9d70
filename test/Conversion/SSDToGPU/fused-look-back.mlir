// The state chain by decoupled look-back (state-chain=lookback).
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=lookback" | FileCheck %s
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=lookback tensor-cores=false" | FileCheck %s --check-prefix=SIMT
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=auto" | FileCheck %s --check-prefix=AUTO
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=lookback" | FileCheck %s --check-prefix=CUMSUM
// RUN: ssd-opt %s -split-input-file --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=lookback fold=vectors" | FileCheck %s --check-prefix=VEC

// The Mamba-2 2.7B layer, fp32 states: one slot per chunk boundary (a
// look-back reads whichever slot holds the latest published state, so no
// ring), the chunk states f32 beside them, and one zero-initialised status
// word per (chunk, head) next to the other counters.
// The look-back reads earlier chunks' dA_cumsum, so this kernel keeps the
// cumsum items (the turn chain's items compute their own) and their
// workspaces. A chunk's cumsum is 5 items of 16 heads only where the grid's
// first wave holds every init, cumsum and bmm item split so (80 + nc x
// (5 + 3) items); elsewhere one item a chunk.
// CUMSUM: name = "dt_out", shape = [1, 80, "nc", 128]
// CUMSUM-SAME: name = "cumsum_ready", shape = ["nc"], zero_init = true
// CUMSUM: cumsum = "items"
// CUMSUM: %[[GRID2:.*]] = gpu.grid_dim x
// CUMSUM: %[[PERCHUNK:.*]] = arith.muli %{{.*}}, %c8 : index
// CUMSUM: %[[FIRSTWAVE:.*]] = arith.addi %{{.*}}, %[[PERCHUNK]]
// CUMSUM: %[[SPLIT:.*]] = arith.cmpi sle, %[[FIRSTWAVE]], %[[GRID2]]
// CUMSUM: %[[SLICES:.*]] = arith.select %[[SPLIT]], %c5, %c1{{.*}} : index
// CUMSUM: arith.muli %{{.*}}, %[[SLICES]]
// A cumsum item scans heads [h0, min(h0 + ceil(80 / items), 80)) and adds
// their count to the chunk's counter (a fence, then a relaxed add).
// CUMSUM: %[[ITEMSM1:.*]] = arith.subi %[[ITEMS:.*]], %c1{{.*}} : index
// CUMSUM-NEXT: %[[ROUND:.*]] = arith.addi %c80{{.*}}, %[[ITEMSM1]]
// CUMSUM-NEXT: %[[PER:.*]] = arith.divui %[[ROUND]], %[[ITEMS]]
// CUMSUM-NEXT: %[[H0:.*]] = arith.muli %{{.*}}, %[[PER]]
// CUMSUM-NEXT: %[[HEND:.*]] = arith.addi %[[H0]], %[[PER]]
// CUMSUM-NEXT: %[[H1:.*]] = arith.minsi %[[HEND]], %c80
// CUMSUM: gpu.shuffle up
// CUMSUM: %[[N:.*]] = arith.subi %[[H1]], %[[H0]]
// CUMSUM-NEXT: %[[HEADS:.*]] = arith.maxsi %[[N]], %c0
// CUMSUM: llvm.fence syncscope("device") acq_rel
// CUMSUM: %[[ADD:.*]] = arith.index_cast %[[HEADS]] : index to i32
// CUMSUM: llvm.atomicrmw add %{{.*}}, %[[ADD]] syncscope("device") monotonic
// The chain item waits, as it starts, for an acquire spin by thread 0 (the
// chunk's cumsum: until it counts all 80 heads) and one by thread 32 (its
// CB: all 3 tiles) at the same time, then a barrier and no fence. A poll
// that finds the counter short sleeps 64 ns before the next.
// CUMSUM: arith.cmpi eq, %{{.*}}, %c0
// CUMSUM: llvm.load %{{.*}} atomic syncscope("device") acquire
// CUMSUM-NEXT: %[[SEEN:.*]] = arith.index_cast
// CUMSUM-NEXT: %[[SHORT:.*]] = arith.cmpi slt, %[[SEEN]], %c80
// CUMSUM-NEXT: scf.if %[[SHORT]] {
// CUMSUM-NEXT: %[[NS:.*]] = arith.constant 64 : i32
// CUMSUM-NEXT: nvvm.nanosleep %[[NS]]
// CUMSUM-NEXT: }
// CUMSUM-NEXT: scf.condition(%[[SHORT]]) %[[SEEN]]
// CUMSUM: arith.cmpi eq, %{{.*}}, %c32
// CUMSUM-NEXT: scf.if
// CUMSUM: llvm.load %{{.*}} atomic syncscope("device") acquire
// CUMSUM-NEXT: %[[SEENCB:.*]] = arith.index_cast
// CUMSUM-NEXT: arith.cmpi slt, %[[SEENCB]], %c3
// CUMSUM-NOT: llvm.fence
// CUMSUM: gpu.barrier
// CUMSUM-NOT: llvm.fence
// CUMSUM: memref.load %{{.*}} : memref<1x80x?x128xf32>
// CHECK-LABEL: module attributes {gpu.container_module, ssd.launch = {
// CHECK-SAME: {abi = "memref", kind = "workspace", name = "state_turn"}, {abi = "memref", kind = "workspace", name = "chunk_states"}, {abi = "memref", kind = "workspace", name = "chain_status"}
// CHECK-SAME: {dtype = "f32", name = "passed_states", shape = [1, "nc + 1", 80, 64, 128]}
// CHECK-SAME: {dtype = "i32", name = "state_turn", shape = [80], zero_init = true}, {dtype = "i32", name = "chain_status", shape = ["nc * 80"], zero_init = true}, {dtype = "f32", name = "chunk_states", shape = [1, "nc", 80, 64, 128]}]
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: fold_pieces
// CHECK-SAME: look_back_patience = 2000 : i64
// CHECK-SAME: state_chain = "lookback"
// CHECK-SAME: state_ring = 0 : i64
// CHECK-SAME: ssd.state_chain = "lookback"
// Step 1: thread 0 waits for chunk c - 1's end state (status 2) for at most
// the patience, measured on the SM clock.
// CHECK: %[[T0:.*]] = nvvm.read.ptx.sreg.clock64 : i64
// CHECK: scf.while
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK: %[[NOW:.*]] = nvvm.read.ptx.sreg.clock64 : i64
// CHECK: %[[WAITED:.*]] = arith.subi %[[NOW]], %[[T0]] : i64
// CHECK: arith.cmpi slt, %[[WAITED]], %c2000_i64 : i64
// Step 2, when it did not come: the chunk state out of the output tile
// into chunk_states (the kernel's 17th argument) in 16-byte pieces in slot
// order (fold=auto with fp32 states: a thread's 8 pieces of the 64 x 128
// tile, as the turn chain's fold walks them), then thread 0's release
// (fence, status 1) and the look-back, a loop over the earlier chunks'
// statuses.
// CHECK: scf.if %{{.*}} -> (index) {
// CHECK: } else {
// CHECK-COUNT-8: vector.store %{{.*}}, %arg17[{{.*}}] {alignment = 16 : i64} : memref<1x?x80x64x128xf32>, vector<4xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic
// CHECK: scf.while (%{{.*}} = %{{.*}}) : (index) -> (index, index)
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire
// Step 3: the latest published state folded with the chunk states after it
// (fp32 slots: nothing to round), then the chunk's own state into slot
// c + 1, the start state into the scan's resident operand, status 2.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: vector.load %arg17[{{.*}}] {alignment = 16 : i64} : memref<1x?x80x64x128xf32>, vector<4xf32>
// CHECK-NOT: arith.truncf
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: math.fma
// CHECK: vector.store %{{.*}}, %arg12[{{.*}}] {alignment = 16 : i64} : memref<1x?x80x64x128xf32>, vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic
// The final item waits for the last chunk's end state (status 2 of chunk
// nc - 1 of the chain, in chain_status, the kernel's memref %arg18), or,
// without a chunk (L = 0), for the init item's turn.
// CHECK: %[[HASCHUNKS:.*]] = arith.cmpi slt, %c0{{.*}}, %[[NC:.*]] : index
// CHECK-NEXT: scf.if %[[HASCHUNKS]] {
// CHECK: %[[LAST:.*]] = arith.subi %[[NC]], %c1{{.*}} : index
// CHECK: memref.extract_strided_metadata %arg18
// CHECK: scf.while
// CHECK: llvm.load %{{.*}} atomic syncscope("device") acquire
// CHECK: arith.cmpi slt, %{{.*}}, %c2{{.*}} : index
// CHECK: gpu.barrier
// CHECK: %[[NOCHUNK:.*]] = arith.cmpi eq, %[[HASCHUNKS]], %false : i1
// CHECK-NEXT: scf.if %[[NOCHUNK]] {
// CHECK: gpu.return

// fold=vectors: the chunk-state product's own 8-column output vectors
// throughout (a thread's 4).
// VEC: gpu.func @ssd_fused(
// VEC-NOT: fold_pieces
// VEC: } else {
// VEC-COUNT-4: vector.store %{{.*}}, %arg17[{{.*}}] {alignment = 16 : i64} : memref<1x?x80x64x128xf32>, vector<8xf32>
// VEC: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// VEC: vector.store %{{.*}}, %arg12[{{.*}}] {alignment = 16 : i64} : memref<1x?x80x64x128xf32>, vector<8xf32>

// state-chain=auto keeps the turn chain alone here: one batch row has 80
// chains, which no sm_90 grid (at most 264 blocks) gives 8 blocks each.
// AUTO: gpu.func @ssd_fused(
// AUTO-SAME: state_chain = "chunk"
// AUTO-SAME: state_ring = 2 : i64

// Without tensor cores the products do not take the vector path: the
// per-chunk turn chain.
// SIMT-LABEL: module attributes
// SIMT-NOT: chunk_states
// SIMT: gpu.func @ssd_fused(
// SIMT-SAME: state_chain = "chunk"
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}

// -----

// fp16 states: the chunk states are f16 too, and every chunk state and
// state a look-back passes over is rounded to f16, the item's own chunk
// state included where it folds it without publishing it: the outputs do
// not depend on the way an item took.
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "f16", name = "passed_states", shape = [2, "nc + 1", 8, 64, 128]}
// CHECK-SAME: {dtype = "i32", name = "chain_status", shape = ["nc * 16"], zero_init = true}, {dtype = "f16", name = "chunk_states", shape = [2, "nc", 8, 64, 128]}
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: ssd.state_chain = "lookback"
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load {{.*}} : memref<2x?x8x64x128xf16>, vector<8xf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-NEXT: math.fma
// CHECK-NEXT: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: scf.yield
// CHECK: %[[OWN:.*]] = vector.load {{.*}} : memref<64x136xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-NEXT: %[[OWN16:.*]] = arith.truncf %[[OWN]] : vector<8xf32> to vector<8xf16>
// CHECK-NEXT: %[[OWN32:.*]] = arith.extf %[[OWN16]] : vector<8xf16> to vector<8xf32>
// CHECK: math.fma %{{.*}}, %{{.*}}, %[[OWN32]] : vector<8xf32>
func.func @f16_states(%x: tensor<2x?x8x64xbf16>, %dt: tensor<2x?x8xf32>, %A: tensor<8xf32>, %B: tensor<2x?x1x128xbf16>, %C: tensor<2x?x1x128xbf16>) -> (tensor<2x?x8x64xbf16>, tensor<2x8x64x128xf16>) {
  %y, %fs = ssd.fused x(%x : tensor<2x?x8x64xbf16>) dt(%dt : tensor<2x?x8xf32>) A(%A : tensor<8xf32>) B(%B : tensor<2x?x1x128xbf16>) C(%C : tensor<2x?x1x128xbf16>) {chunk_size = 128 : i64, state_type = f16} -> tensor<2x?x8x64xbf16>, tensor<2x8x64x128xf16>
  return %y, %fs : tensor<2x?x8x64xbf16>, tensor<2x8x64x128xf16>
}

// -----

// Varlen layers keep the turn chain (their slots are per sequence).
// CHECK-LABEL: module attributes
// CHECK-NOT: chain_status
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: ssd.state_chain = "chunk"
func.func @varlen(%x: tensor<1x?x4x64xbf16>, %dt: tensor<1x?x4xf32>, %A: tensor<4xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %cu: tensor<?xi32>) -> (tensor<1x?x4x64xbf16>, tensor<?x4x64x128xf32>) {
  %y, %fs = ssd.fused x(%x : tensor<1x?x4x64xbf16>) dt(%dt : tensor<1x?x4xf32>) A(%A : tensor<4xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) cu_seqlens(%cu : tensor<?xi32>) {chunk_size = 128 : i64} -> tensor<1x?x4x64xbf16>, tensor<?x4x64x128xf32>
  return %y, %fs : tensor<1x?x4x64xbf16>, tensor<?x4x64x128xf32>
}

// -----

// state-chain=auto: two kernels, the turn chain's `ssd_fused` with its ring
// of two slots and the look-back's `ssd_fused_lookback` with a slot per
// chunk boundary; each launch runs the one whose `when` holds, through the
// derived symbol look_back (1 where the grid holds at least 8 blocks per
// chain, b x heads x p-blocks chains), which also sizes the slots, the
// statuses and the chunk states (last, so that a launch taking the turns
// has the turn chain's layout).
// AUTO-LABEL: derived = {look_back = "1 - min(1, (b * 64 - 1) / (num_sms * 2))"}
// AUTO-SAME: kernels = [{block = [256], grid = ["num_sms * 2"], name = "ssd_fused", params = [
// AUTO-NOT: chain_status
// AUTO-SAME: when = "1 - look_back"}, {block = [256], grid = ["num_sms * 2"], name = "ssd_fused_lookback", params = [
// AUTO-SAME: {abi = "memref", kind = "workspace", name = "chunk_states"}, {abi = "memref", kind = "workspace", name = "chain_status"}
// AUTO-SAME: when = "look_back"}]
// AUTO-SAME: {dtype = "f32", name = "passed_states", shape = ["b", "2 + look_back * (nc + 1 - 2)", 8, 64, 128]}
// AUTO-SAME: {dtype = "i32", name = "state_turn", shape = ["b * 8"], zero_init = true}, {dtype = "i32", name = "chain_status", shape = ["max(1, look_back * b * nc * 8)"], zero_init = true}, {dtype = "f32", name = "chunk_states", shape = ["max(1, look_back * b)", "max(1, look_back * nc)", 8, 64, 128]}]
// The turn chain's kernel: no look-back, its slots in the ring, statically
// two as in the plain turn-chain kernel.
// AUTO: gpu.func @ssd_fused(
// AUTO-SAME: memref<?x2x8x64x128xf32>
// AUTO-SAME: state_chain = "chunk"
// AUTO-SAME: state_ring = 2 : i64
// AUTO-SAME: ssd.state_chain = "chunk"
// AUTO-NOT: nvvm.read.ptx.sreg.clock64
// AUTO: arith.remui %{{.*}}, %c2{{.*}} : index
// AUTO-NOT: nvvm.read.ptx.sreg.clock64
// AUTO: gpu.return
// The look-back's kernel: the chunk states and statuses among its
// arguments, the patience on the SM clock, every slot its own.
// AUTO: gpu.func @ssd_fused_lookback(
// AUTO-SAME: %arg15: memref<?x?x8x64x128xf32>, %arg16: memref<?xi32>
// AUTO-SAME: look_back_patience = 2000 : i64
// AUTO-SAME: state_chain = "lookback"
// AUTO-SAME: state_ring = 0 : i64
// AUTO-SAME: ssd.state_chain = "lookback"
// AUTO: nvvm.read.ptx.sreg.clock64
// AUTO: gpu.return
func.func @auto(%x: tensor<?x?x8x64xbf16>, %dt: tensor<?x?x8xf32>, %A: tensor<8xf32>, %B: tensor<?x?x1x128xbf16>, %C: tensor<?x?x1x128xbf16>) -> (tensor<?x?x8x64xbf16>, tensor<?x8x64x128xf32>) {
  %y, %fs = ssd.fused x(%x : tensor<?x?x8x64xbf16>) dt(%dt : tensor<?x?x8xf32>) A(%A : tensor<8xf32>) B(%B : tensor<?x?x1x128xbf16>) C(%C : tensor<?x?x1x128xbf16>) {chunk_size = 128 : i64} -> tensor<?x?x8x64xbf16>, tensor<?x8x64x128xf32>
  return %y, %fs : tensor<?x?x8x64xbf16>, tensor<?x8x64x128xf32>
}
