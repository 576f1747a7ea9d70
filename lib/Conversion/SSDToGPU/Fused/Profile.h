//===- Profile.h - the chain items' phase clocks (profile=true) -*- C++ -*-===//
//
// With `profile=true` thread 0 of the block reads clock64 where a chain item
// passes each phase boundary below and, at the item's end, writes one record
// of kProfileFields i64 to `chain_profile` at (row, chunk, head, p-block):
//   [0] the block (blockIdx.x), [1] its SM (%smid), [2] the clock at the
//   item's start, [3 + i] the clock where phase i ended, minus [2], and
//   [3 + kProfilePhases] the clock where the block's last warp ended the
//   item, minus [2] (it has the most of the causal product, and the next
//   ticket's barrier waits for it).
// Clocks are the SM's cycle counter, comparable within one SM only. The
// stamps are thread 0's: a barrier-delimited phase ends when the block
// passes the barrier, a product's when warp 0 has issued its part. Where
// the chunk scan takes several row tiles (no raw rows, or chunks over 128),
// ScanReady and ScanProducts are the last tile's.
// The `item_log` workspace places every item of every kind (init, cumsum,
// bmm, chain, final) on one time base: thread 0 writes, at index ticket,
//   [0] the item's kind (its place in the ticket order, 0..4), [1] its SM,
//   [2] %globaltimer (ns, the same on every SM) as the item starts and
//   [3] as thread 0 ends it.
// bench/ssd-bench --profile writes both workspaces to .npy files;
// scripts/profile-chain-items.py summarises the phases and
// scripts/profile-item-log.py the items' timeline.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_FUSED_PROFILE_H
#define SSD_LIB_CONVERSION_SSDTOGPU_FUSED_PROFILE_H

#include "FusedKernel.h"

namespace ssd {
namespace gpu_lowering {
namespace fused {

struct ChainItem;

/// The phase boundaries of a chain item, in order; each phase runs from the
/// previous boundary (the item's start for the first).
enum class ChainPhase : int64_t {
  CountersAwaited = 1, // the chunk's cumsum and CB counters
  Staged,              // dA, dt and the chunk-state weights in shared memory
  StateProduct,        // the chunk-state product (x and B rows awaited)
  TurnAcquired,        // C's copy issued, the state turn acquired
  Folded,              // slot(c) in, slot(c + 1) out
  Released,            // the turn released (barrier, fence, store)
  ScanReady,           // C's rows awaited, the row scales ready
  ScanProducts,        // the chunk scan's products issued
  Done,                // the chunk scan's epilogue (y)
};
constexpr int64_t kProfilePhases = static_cast<int64_t>(ChainPhase::Done);
constexpr int64_t kProfileFields = 4 + kProfilePhases;
constexpr int64_t kItemLogFields = 4;
/// Item kinds in ticket order (init, cumsum, bmm, chain, final): the kind
/// field's range, and in clusters the ranges each padded by up to
/// cluster - 1 tickets.
constexpr int64_t kItemKinds = 5;

/// Allocates the shared start stamp of the item log (no-op without a
/// profile); call once, outside the items' shared-memory marks.
void itemLogInit(FusedBuild &f);
/// Thread 0 stamps the start of the item the block is about to run.
void itemLogStart(FusedBuild &f);
/// Thread 0 writes the record of the item of ticket `ticket`, of kind
/// `kind`, that it has just ended.
void itemLogFinish(FusedBuild &f, mlir::Value ticket, int64_t kind);

/// Starts the record of a chain item (no-op without a profile).
void profileStart(FusedBuild &f);
/// Thread 0's clock at the end of `phase` (no-op without a profile).
void profileStamp(FusedBuild &f, ChainPhase phase);
/// Stamps ChainPhase::Done and writes the item's record, the last warp's
/// end included (no-op without a profile).
void profileFinish(FusedBuild &f, const ChainItem &it);

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_FUSED_PROFILE_H
