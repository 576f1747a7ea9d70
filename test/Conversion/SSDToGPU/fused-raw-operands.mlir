// When the chain item takes x, B and C through cp.async copies (raw
// operands): mma.sync, the per-chunk chain, 16-bit inputs, and only while
// two blocks still fit on an SM.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never copy=cp.async" | FileCheck %s --check-prefix=RAW
// RUN: sed 's/chunk_size = 64/chunk_size = 256/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=STAGED
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=segment" | FileCheck %s --check-prefix=STAGED
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never mma=wgmma" | FileCheck %s --check-prefix=STAGED

// Chunk 64: 79920 bytes, x rows [64][72], B/C rows [64][136], the x w
// stages and the chunk state's output tile, which the fold reads (the
// scan's output runs from the product's fragments).
// RAW: shared_memory = 79920
// RAW: gpu.func @ssd_fused(
// RAW-SAME: ssd.kernel_config = {{{.*}}operands = "cp.async"
// RAW-DAG: memref.view {{.*}} to memref<1x64x72xbf16, #gpu.address_space<workgroup>>
// RAW-DAG: memref.view {{.*}} to memref<1x64x136xbf16, #gpu.address_space<workgroup>>
// RAW: nvvm.cp.async.shared.global
// RAW: nvvm.cp.async.wait.group 0
// The scan's weights: register fragments computed from pairs of CB (each
// warp owns whole rows of the chunk). Where the warps' vote finds that the
// chunk only decays (A dt <= 0), the k16 steps below a warp's 16-row block
// take CB times one factor per column (4 exponentials a step instead of
// 8), then the accumulators their rows' factors (the accurate exp), and
// the diagonal step its exact, masked weights; otherwise every step runs
// as the diagonal one (the second loop from k 0).
// RAW: %[[DECAYS:.*]] = nvvm.vote.sync all %{{.*}}, %{{.*}} -> i1
// RAW: %[[BELOW:.*]] = arith.select %[[DECAYS]], %{{.*}}, %c0{{.*}} : index
// Two factored steps an iteration (both fragments before the products),
// then the odd one.
// RAW: %[[PAIRS:.*]] = arith.subi %[[BELOW]], %{{[0-9]+}} : index
// RAW: scf.for %{{.*}} = %c0{{.*}} to %[[PAIRS]] step %c32
// RAW-COUNT-4: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// RAW-NOT: llvm.inline_asm
// RAW: vector.load {{.*}} {alignment = 8 : i64} : memref<1x?x1x64x64xf32>, vector<2xf32>
// RAW: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// RAW-COUNT-4: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// RAW-NOT: llvm.inline_asm
// RAW: nvvm.mma.sync
// RAW: scf.yield
// RAW: scf.for %{{.*}} = %[[PAIRS]] to %[[BELOW]] step %c16
// RAW-COUNT-4: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// RAW-NOT: llvm.inline_asm
// RAW: nvvm.mma.sync
// RAW: scf.yield
// RAW: math.exp
// RAW: arith.select %[[DECAYS]], %{{.*}}, %cst{{.*}} : f32
// RAW: scf.for %{{.*}} = %[[BELOW]] to %{{.*}} step %c16
// RAW-COUNT-8: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;"
// RAW-NOT: llvm.inline_asm
// RAW: nvvm.mma.sync

// Chunk 256 (the rows would take 105 KB more: one block per SM), the
// segment chain and wgmma stage every operand through registers and shared
// memory (no register fragments).
// STAGED: gpu.func @ssd_fused(
// STAGED-SAME: operands = "registers"
// STAGED-NOT: nvvm.cp.async
// STAGED-NOT: vector.load {{.*}} : memref<1x?x1x{{[0-9]+}}x{{[0-9]+}}xf32>, vector<2xf32>
// STAGED: gpu.return
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 64 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
