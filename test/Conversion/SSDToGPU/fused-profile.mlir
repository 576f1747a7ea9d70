// profile=true: a diagnostic build of the fused kernel whose chain items
// record thread 0's clock64 at their phase boundaries (Fused/Profile.h) in
// the `chain_profile` workspace, i64 [b, nc, heads, p-blocks, 13]: the
// block, its SM, the start clock, each of the nine phases' ends relative to
// it and the last warp's end, written once at the item's end. Every item of
// every kind also writes one record of the `item_log` workspace, i64
// [tickets, 4]: its kind, its SM and thread 0's %globaltimer at its start
// and end.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never profile=true" | FileCheck %s
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never profile=true" | FileCheck %s --check-prefix=LOG
// Without it: no workspace, no clock.
// RUN: ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never" | FileCheck %s --check-prefix=OFF
// The segment chain's items are not profiled: a clear error.
// RUN: not ssd-opt %s --ssd-decompose --ssd-fuse --convert-ssd-fused-to-gpu="warp-specialized=never profile=true state-chain=segment" 2>&1 | FileCheck %s --check-prefix=SEGMENT

// CHECK: {dtype = "i64", name = "chain_profile", shape = [1, "nc", 80, 1, 13]}
// CHECK: gpu.func @ssd_fused(
// CHECK-SAME: %[[PROFILE:arg[0-9]+]]: memref<1x?x80x1x13xi64>
// CHECK-SAME: profile = true
// The item's start, then each boundary: thread 0 stores its clock into the
// shared record.
// CHECK: %[[CLOCKS:.*]] = memref.view %{{.*}} to memref<10xi64, #gpu.address_space<workgroup>>
// CHECK-COUNT-10: nvvm.read.ptx.sreg.clock64
// At the item's end thread 0 writes the record: the block, the SM, the
// start clock, the nine phase ends.
// CHECK: memref.store %{{.*}}, %[[PROFILE]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0{{.*}}]
// CHECK: nvvm.read.ptx.sreg.smid
// CHECK-COUNT-11: memref.store %{{.*}}, %[[PROFILE]][
// Then lane 0 of the last warp (thread 224) its own end.
// CHECK: arith.cmpi eq, %{{.*}}, %c224
// CHECK: nvvm.read.ptx.sreg.clock64
// CHECK: memref.store %{{.*}}, %[[PROFILE]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c12{{.*}}]
// CHECK-NOT: nvvm.read.ptx.sreg.clock64

// One record per ticket, zeroed per launch: 80 init and 80 final items, and
// per chunk at most five cumsum items (slices of 16 heads), three bmm items
// (the tiles of CB's lower triangle) and 80 chain items.
// LOG: {dtype = "i64", name = "item_log", shape = ["160 + nc * 88", 4], zero_init = true}
// LOG: gpu.func @ssd_fused(
// LOG-SAME: memref<1x?x80x1x13xi64>, %[[LOG:arg[0-9]+]]: memref<?x4xi64>
// LOG: scf.while
// Each kind in ticket order (init, cumsum, bmm, chain, final; kinds 0 to
// 4) that the kernel holds: the start
// stamp into shared memory, then the record of the item's ticket.
// LOG: %[[START0:.*]] = nvvm.read.ptx.sreg.globaltimer
// LOG: memref.store %[[START0]], %[[SLOT:view[_0-9]*]][
// LOG: %[[END0:.*]] = nvvm.read.ptx.sreg.globaltimer
// LOG: %[[KIND0:.*]] = arith.constant 0 : i64
// LOG: memref.store %[[KIND0]], %[[LOG]][%[[TICKET:arg[0-9]+]], %c0
// LOG: nvvm.read.ptx.sreg.smid
// LOG: memref.store %{{.*}}, %[[LOG]][%[[TICKET]], %c1
// LOG: %[[S0:.*]] = memref.load %[[SLOT]][
// LOG: arith.constant 2 : index
// LOG-NEXT: memref.store %[[S0]], %[[LOG]][%[[TICKET]], %c2
// LOG: memref.store %[[END0]], %[[LOG]][%[[TICKET]], %c3
// No kind 1: the turn chain's kernel has no cumsum items (its chain items
// compute their own).
// LOG-NOT: memref.store %c1_i64, %[[LOG]]
// LOG: %[[KIND2:.*]] = arith.constant 2 : i64
// LOG: memref.store %[[KIND2]], %[[LOG]][%[[TICKET]], %c0
// LOG: nvvm.read.ptx.sreg.clock64
// LOG: %[[KIND3:.*]] = arith.constant 3 : i64
// LOG: memref.store %[[KIND3]], %[[LOG]][%[[TICKET]], %c0
// LOG: %[[KIND4:.*]] = arith.constant 4 : i64
// LOG: memref.store %[[KIND4]], %[[LOG]][%[[TICKET]], %c0
// LOG-NOT: sreg.globaltimer

// OFF-NOT: chain_profile
// OFF-NOT: item_log
// OFF-NOT: globaltimer
// OFF-NOT: clock64
// OFF: gpu.func @ssd_fused(
// OFF-NOT: clock64

// SEGMENT: error: convert-ssd-fused-to-gpu: profile records the per-chunk chain items: it needs state-chain 'chunk', got 'segment'
func.func @mamba2(%x: tensor<1x?x80x64xbf16>, %dt: tensor<1x?x80xf32>, %A: tensor<80xf32>, %B: tensor<1x?x1x128xbf16>, %C: tensor<1x?x1x128xbf16>, %D: tensor<80xf32>, %db: tensor<80xf32>) -> (tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x?x80x64xbf16>) dt(%dt : tensor<1x?x80xf32>) A(%A : tensor<80xf32>) B(%B : tensor<1x?x1x128xbf16>) C(%C : tensor<1x?x1x128xbf16>) D(%D : tensor<80xf32>) dt_bias(%db : tensor<80xf32>) {chunk_size = 128 : i64, dt_softplus} -> tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
  return %y, %fs : tensor<1x?x80x64xbf16>, tensor<1x80x64x128xf32>
}
