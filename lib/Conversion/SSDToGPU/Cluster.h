//===- Cluster.h - thread block clusters: ranks, barriers, peers -*- C++
//-*-===//
//
// On sm_90 the blocks of a cluster run at once on one GPC and can reach
// each other's shared memory (shared::cluster addresses). The fused kernel
// pairs blocks on work items that read the same B and C rows, so that each
// row panel leaves L2 once for both (TMA multicast); these are the pieces
// it is built from.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_CLUSTER_H
#define SSD_LIB_CONVERSION_SSDTOGPU_CLUSTER_H

#include "Emit.h"

namespace ssd {
namespace gpu_lowering {

/// This block's rank in its cluster (%cluster_ctarank), as an index.
Value clusterRank(Emitter &e);

/// Every thread of every block of the cluster meets here
/// (barrier.cluster.arrive + wait.acquire, aligned: call from warp-uniform
/// control flow). With `release` the calling thread's writes before it
/// (shared::cluster stores included) are visible to every thread after it;
/// without, the arrival orders nothing (and spares the warp a device-wide
/// memory barrier, which ptxas emits for a release at cluster scope).
void clusterBarrier(Emitter &e, bool release = true);

/// The shared::cluster address (!llvm.ptr<7>) of the byte at the shared
/// address `ptr` (!llvm.ptr<3>) in the block of rank `rank` (index).
Value peerPointer(Emitter &e, Value ptr, Value rank);

/// One arrival on the mbarrier at shared::cluster address `bar` (this
/// block's or a peer's), a release of this thread's shared-memory accesses
/// at CTA scope (the form whose only cost is a block-level memory barrier).
void arriveOnClusterBarrier(Emitter &e, Value bar);

/// Makes mbarrier initialisations visible to the cluster's other blocks
/// (fence.mbarrier_init.release.cluster); a cluster barrier follows.
void fenceBarrierInit(Emitter &e);

} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_CLUSTER_H
