// The turn chain's fold: fold=pieces walks the state slots in 16-byte
// pieces in slot order (4 f32 or 8 f16: each warp access covers whole
// sectors), fold=vectors in the chunk-state product's 8-column vectors;
// fold=auto (the default) takes pieces with f32 states and vectors with
// f16 ones. fold-loads-ahead=N loads slot(c)'s pieces or vectors N ahead of
// the stores into slot(c + 1). With vectors and 2, each thread's first two
// loads come before its first store, and each store is followed by the
// next load; the kernel configuration records the distance and the pieces.
// Defaults: 4 pieces ahead with f32 states (PIECES), one vector at a time
// with fold=vectors (EACH), two vectors ahead with f16 states (F16),
// unless the option says 1 (F16-EACH).
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk fold=vectors fold-loads-ahead=2" | FileCheck %s --check-prefix=AHEAD
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk fold=vectors" | FileCheck %s --check-prefix=EACH
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk" | FileCheck %s --check-prefix=PIECES
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk fold=pieces fold-loads-ahead=1" | FileCheck %s --check-prefix=PIECES-ONE
// RUN: sed -e 's/x128xf32>/x128xf16>/g' -e 's/dt_softplus}/dt_softplus, state_type = f16}/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk" | FileCheck %s --check-prefix=F16
// RUN: sed -e 's/x128xf32>/x128xf16>/g' -e 's/dt_softplus}/dt_softplus, state_type = f16}/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk fold-loads-ahead=1" | FileCheck %s --check-prefix=F16-EACH
// RUN: sed -e 's/x128xf32>/x128xf16>/g' -e 's/dt_softplus}/dt_softplus, state_type = f16}/' %s | ssd-opt --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never state-chain=chunk fold=pieces" | FileCheck %s --check-prefix=F16-PIECES
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never fold-loads-ahead=-1" 2>&1 | FileCheck %s --check-prefix=LOW
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never fold-loads-ahead=9" 2>&1 | FileCheck %s --check-prefix=HIGH
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never fold=rows" 2>&1 | FileCheck %s --check-prefix=BADFOLD

// AHEAD: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf32>, %{{.*}}: memref<1xi32>
// AHEAD-SAME: fold_loads_ahead = 2 : i64
// AHEAD-NOT: fold_pieces
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
// EACH-NOT: fold_pieces
// EACH: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf32>, %{{.*}}: memref<1xi32>
// EACH-NOT: fold_loads_ahead
// EACH-NOT: fold_pieces
// EACH: llvm.load %{{.*}} atomic syncscope("device") acquire
// EACH: vector.load %[[SLOTS]]
// EACH-NOT: vector.load %[[SLOTS]]
// EACH: vector.store %{{.*}}, %[[SLOTS]]
// EACH: vector.load %[[SLOTS]]

// Four pieces ahead: loads 0-3, then each store followed by the next load,
// 8 pieces a thread (64 x 128 f32 over 256 threads), the last four stores
// with no load between them.
// PIECES: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf32>, %{{.*}}: memref<1xi32>
// PIECES-SAME: fold_loads_ahead = 4 : i64, fold_pieces
// PIECES: llvm.load %{{.*}} atomic syncscope("device") acquire
// PIECES-COUNT-4: vector.load %[[SLOTS]]{{.*}} vector<4xf32>
// PIECES-NOT: vector.store %{{.*}}, %[[SLOTS]]
// PIECES: math.fma {{.*}} : vector<4xf32>
// PIECES-NEXT: vector.store %{{.*}}, %[[SLOTS]]{{.*}} vector<4xf32>
// PIECES: vector.load %[[SLOTS]]{{.*}} vector<4xf32>
// PIECES: vector.store %{{.*}}, %[[SLOTS]]
// PIECES: vector.load %[[SLOTS]]
// PIECES: vector.store %{{.*}}, %[[SLOTS]]
// PIECES: vector.load %[[SLOTS]]
// PIECES: vector.store %{{.*}}, %[[SLOTS]]
// PIECES: vector.load %[[SLOTS]]
// PIECES-COUNT-4: vector.store %{{.*}}, %[[SLOTS]]
// PIECES-NOT: vector.load %[[SLOTS]]
// PIECES-NOT: vector.store %{{.*}}, %[[SLOTS]]
// PIECES: gpu.barrier

// PIECES-ONE: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf32>, %{{.*}}: memref<1xi32>
// PIECES-ONE-NOT: fold_loads_ahead
// PIECES-ONE-SAME: fold_pieces
// PIECES-ONE: llvm.load %{{.*}} atomic syncscope("device") acquire
// PIECES-ONE: vector.load %[[SLOTS]]{{.*}} vector<4xf32>
// PIECES-ONE-NOT: vector.load %[[SLOTS]]
// PIECES-ONE: vector.store %{{.*}}, %[[SLOTS]]{{.*}} vector<4xf32>
// PIECES-ONE: vector.load %[[SLOTS]]

// F16: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf16>, %{{.*}}: memref<1xi32>
// F16-SAME: fold_loads_ahead = 2 : i64
// F16-NOT: fold_pieces
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

// An f16 piece is 8 elements, as an f16 vector.
// F16-PIECES: gpu.func @ssd_fused({{.*}}%[[SLOTS:arg[0-9]+]]: memref<1x2x80x64x128xf16>, %{{.*}}: memref<1xi32>
// F16-PIECES-SAME: fold_loads_ahead = 4 : i64, fold_pieces
// F16-PIECES: llvm.load %{{.*}} atomic syncscope("device") acquire
// F16-PIECES-COUNT-4: vector.load %[[SLOTS]]{{.*}} vector<8xf16>
// F16-PIECES-NOT: vector.store %{{.*}}, %[[SLOTS]]
// F16-PIECES: vector.store %{{.*}}, %[[SLOTS]]{{.*}} vector<8xf16>

// LOW: error: convert-ssd-fused-to-gpu: fold-loads-ahead must be 0 (the fold's default) or 1 to 8, got -1
// HIGH: error: convert-ssd-fused-to-gpu: fold-loads-ahead must be 0 (the fold's default) or 1 to 8, got 9
// BADFOLD: error: convert-ssd-fused-to-gpu: fold must be auto, pieces or vectors, got 'rows'

func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
