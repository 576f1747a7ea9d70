// fold-loads-ahead=N: the turn chain's fold loads slot(c)'s vectors N
// ahead of its stores into slot(c + 1). With 2, each thread's first two
// loads come before its first store, and each store is followed by the
// next load; the kernel configuration records the distance. The default
// follows the state dtype: with f32 states one vector at a time (load, FMA,
// store), with f16 states (F16) two ahead, unless the option says 1
// (F16-EACH).
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="state-chain=chunk fold-loads-ahead=2" | FileCheck %s --check-prefix=AHEAD
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="state-chain=chunk" | FileCheck %s --check-prefix=EACH
// RUN: sed -e 's/x128xf32>/x128xf16>/g' -e 's/dt_softplus}/dt_softplus, state_type = f16}/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="state-chain=chunk" | FileCheck %s --check-prefix=F16
// RUN: sed -e 's/x128xf32>/x128xf16>/g' -e 's/dt_softplus}/dt_softplus, state_type = f16}/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="state-chain=chunk fold-loads-ahead=1" | FileCheck %s --check-prefix=F16-EACH
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="fold-loads-ahead=-1" 2>&1 | FileCheck %s --check-prefix=LOW
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="fold-loads-ahead=9" 2>&1 | FileCheck %s --check-prefix=HIGH

// AHEAD: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf32>, %{{.*}}: memref<1xi32>
// AHEAD-SAME: fold_loads_ahead = 2 : i64
// AHEAD: llvm.load %{{.*}} atomic syncscope("device") acquire
// AHEAD: gpu.barrier
// AHEAD: vector.load %[[SLOTS]]
// AHEAD-NOT: vector.store
// AHEAD: vector.load %[[SLOTS]]
// AHEAD-NOT: vector.load %[[SLOTS]]
// AHEAD: math.fma {{.*}} : vector<8xf32>
// AHEAD-NEXT: vector.store %{{.*}}, %[[SLOTS]]
// AHEAD-NOT: vector.store %{{.*}}, %[[SLOTS]]
// AHEAD: vector.load %[[SLOTS]]
// AHEAD-NOT: vector.load %[[SLOTS]]
// AHEAD: vector.store %{{.*}}, %[[SLOTS]]
// AHEAD: vector.load %[[SLOTS]]
// AHEAD: vector.store %{{.*}}, %[[SLOTS]]
// AHEAD-NOT: vector.load %[[SLOTS]]
// AHEAD: vector.store %{{.*}}, %[[SLOTS]]
// AHEAD-NOT: vector.store %{{.*}}, %[[SLOTS]]
// AHEAD: gpu.barrier

// EACH-NOT: fold_loads_ahead
// EACH: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf32>, %{{.*}}: memref<1xi32>
// EACH-NOT: fold_loads_ahead
// EACH: llvm.load %{{.*}} atomic syncscope("device") acquire
// EACH: vector.load %[[SLOTS]]
// EACH-NOT: vector.load %[[SLOTS]]
// EACH: vector.store %{{.*}}, %[[SLOTS]]
// EACH: vector.load %[[SLOTS]]

// F16: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf16>, %{{.*}}: memref<1xi32>
// F16-SAME: fold_loads_ahead = 2 : i64
// F16: llvm.load %{{.*}} atomic syncscope("device") acquire
// F16: vector.load %[[SLOTS]]
// F16-NOT: vector.store %{{.*}}, %[[SLOTS]]
// F16: vector.load %[[SLOTS]]
// F16: vector.store %{{.*}}, %[[SLOTS]]

// F16-EACH: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf16>, %{{.*}}: memref<1xi32>
// F16-EACH-NOT: fold_loads_ahead
// F16-EACH: llvm.load %{{.*}} atomic syncscope("device") acquire
// F16-EACH: vector.load %[[SLOTS]]
// F16-EACH-NOT: vector.load %[[SLOTS]]
// F16-EACH: vector.store %{{.*}}, %[[SLOTS]]
// F16-EACH: vector.load %[[SLOTS]]

// LOW: error: convert-ssd-fused-to-gpu: fold-loads-ahead must be 0 (by the state dtype) or 1 to 8, got -1
// HIGH: error: convert-ssd-fused-to-gpu: fold-loads-ahead must be 0 (by the state dtype) or 1 to 8, got 9

func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
