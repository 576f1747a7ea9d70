//===- ChainItem.cpp - chunk_state -> state_passing -> chunk_scan ---------===//
//
// The per-chunk chain item (b, c, h, pb) owns rows [p0, p0 + pBlock) of
// head h's state and output on chunk c:
//   0. with raw operands (KernelConfig::rawOperands), starts copies of the
//      chunk's x and B rows into shared memory, where the products read
//      them; C's rows follow into B's buffer during the turn wait (3);
//   1. computes dt and dA_cumsum of (b, h, c) (KernelConfig::ownCumsum; with
//      the look-back it waits for the cumsum items' and for CB instead),
//      stages them and the chunk-state weights in shared memory;
//   2. chunk state: S = sum_l (x_l w_l) B_l^T on the tensor cores;
//   3. state passing: waits until turn[b,h,pb] = c + 1, then
//      slot(c) + 1 <- carry * slot(c) + S in fp32, and turn <- c + 2;
//   4. chunk scan, once the chunk's CB is published:
//      y = exp(dA) C slot(c) + (CB o decay o dt) x + D x, gated
//      by z, one row tile of the chunk at a time.
// The serial part (3) is a load, an FMA and a store per element; the scan
// (4) of this item overlaps the next chunk's chain step. With raw operands
// the scan's output runs straight from the product's fragments (no output
// tile in shared memory). The fold also leaves slot(c), which it reads, in
// shared memory as the chunk scan's state operand, so that only the next
// step reads slot(c + 1): the slots then form a ring of two
// (KernelConfig::stateRing). This is the default chain
// (`state-chain=chunk`) and the one varlen layers take;
// `state-chain=lookback` replaces step 3 by a decoupled look-back over the
// chunk states (LookBack.cpp), `state-chain=auto` chooses between the two
// per launch, and `state-chain=segment` walks segments of chunks instead
// (SegmentItem.cpp).
//
//===----------------------------------------------------------------------===//
#include "ChainParts.h"
#include "Profile.h"
#include "Sync.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

/// Where a fold reads slot(c) and writes slot(c + 1) of `passed_states`.
struct FoldSlots {
  Value slots, carry, slot, nextSlot;
  /// The index of state element (p0 + rr, nn) in `slot` of `slots`.
  SmallVector<Value> at(Emitter &e, const ChainItem &it, Value ofSlot, Value rr,
                        Value nn) const {
    return {it.row, ofSlot, it.head, e.add(it.p0, rr), nn};
  }
};

/// The fold one element (or 8-column vector) at a time, as the chunk-state
/// product hands them over: load slot(c), FMA, store slot(c + 1).
void foldEachUnderTurn(FusedBuild &f, ChainItem &it, Value shared,
                       llvm::function_ref<void()> awaitTurn,
                       const FoldSlots &s) {
  Emitter &e = f.e;
  chunkStateProduct(f, it, shared, awaitTurn, [&](Value rr, Value nn, Value v) {
    e.ifThen(it.place.used, [&] {
      if (!f.config.stateVectors) {
        Value prev = e.loadF32(s.slots, s.at(e, it, s.slot, rr, nn));
        e.store(e.fma(s.carry, prev, v), s.slots,
                s.at(e, it, s.nextSlot, rr, nn));
        return;
      }
      int64_t width = cast<VectorType>(v.getType()).getNumElements();
      Value prev = e.toF32Vector(
          e.loadVector(s.slots, s.at(e, it, s.slot, rr, nn), width));
      e.storeVector(math::FmaOp::create(e.b, e.splat(s.carry, width), prev, v),
                    s.slots, s.at(e, it, s.nextSlot, rr, nn));
      if (it.sState)
        e.storeVector(prev, it.sState, residentStateAt(f, rr, nn));
    });
  });
}

/// Folds this thread's `count` places of `width` elements of the staged
/// chunk state (placeAt(j): the row and first column of the j-th), loading
/// slot(c)'s places KernelConfig::foldLoadsAhead ahead of the stores into
/// slot(c + 1). The compiler keeps a load after a store that may alias it,
/// so one place at a time waits a round trip to L2 per place; all loads
/// first left every store to drain at the release (measured slower with
/// vectors, eacd4a7). blockRelease's barrier follows.
void foldPlaces(FusedBuild &f, ChainItem &it, TileMatmul &mm,
                const FoldSlots &s, int64_t width, int64_t count,
                llvm::function_ref<std::pair<Value, Value>(int64_t)> placeAt) {
  Emitter &e = f.e;
  SmallVector<Value> prev;
  auto loadNext = [&] {
    auto [rr, nn] = placeAt(static_cast<int64_t>(prev.size()));
    prev.push_back(e.toF32Vector(
        e.loadVector(s.slots, s.at(e, it, s.slot, rr, nn), width)));
  };
  int64_t ahead = std::max<int64_t>(1, f.config.foldLoadsAhead);
  while (static_cast<int64_t>(prev.size()) < std::min(ahead, count))
    loadNext();
  Value carries = e.splat(s.carry, width);
  for (int64_t j = 0; j < count; ++j) {
    auto [rr, nn] = placeAt(j);
    Value chunkState = mm.loadOutputVector(rr, nn, width);
    e.storeVector(math::FmaOp::create(e.b, carries, prev[j], chunkState),
                  s.slots, s.at(e, it, s.nextSlot, rr, nn));
    if (it.sState)
      e.storeVector(prev[j], it.sState, residentStateAt(f, rr, nn));
    if (static_cast<int64_t>(prev.size()) < count)
      loadNext();
  }
}

/// The fold, software-pipelined, over this thread's places of the staged
/// chunk state (threadFoldPlaces: 16-byte pieces in slot order, or the
/// product's 8-column vectors).
void foldPlacesUnderTurn(FusedBuild &f, ChainItem &it, Value shared,
                         llvm::function_ref<void()> awaitTurn,
                         const FoldSlots &s) {
  TileMatmul mm = stagedChunkState(f, it, shared);
  awaitTurn();
  f.e.ifThen(it.place.used, [&] {
    FoldPlaces places = threadFoldPlaces(f, mm);
    foldPlaces(f, it, mm, s, places.width, places.count, places.at);
  });
}

/// Steps 2 and 3 under the turn: the whole chunk state, then
/// slot(c) + 1 <- carry * slot(c) + S once turn = c + 1, and turn <- c + 2.
void foldUnderTurn(FusedBuild &f, ChainItem &it, Value shared) {
  Emitter &e = f.e;
  Value turns = f.arg("state_turn");
  Value turn = turnIndex(f, it.row, it.head, it.pb);
  FoldSlots s{f.arg("passed_states"), stateCarry(f, it),
              stateSlotIndex(f, it.place.slot),
              stateSlotIndex(f, e.add(it.place.slot, 1))};
  auto awaitTurn = [&] {
    profileStamp(f, ChainPhase::StateProduct);
    // C replaces B in shared memory while the turn is awaited.
    if (it.sBC)
      copyChunkC(f, it);
    blockAcquire(e, turns, turn, e.add(it.c, 1));
    profileStamp(f, ChainPhase::TurnAcquired);
  };
  if (f.config.foldPieces ||
      (f.config.stateVectors && f.config.foldLoadsAhead > 1 &&
       stateProduct(f).outputVectorsEven()))
    foldPlacesUnderTurn(f, it, shared, awaitTurn, s);
  else
    foldEachUnderTurn(f, it, shared, awaitTurn, s);
  profileStamp(f, ChainPhase::Folded);
  blockRelease(e, turns, turn, e.add(it.c, 2));
  profileStamp(f, ChainPhase::Released);
}

} // namespace

void emitChainItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  ChainItem it;
  it.c = decodeChainIndex(f, index, it);
  it.place = placeChunk(f, it.c);
  profileStart(f);
  // x and B are inputs: their copies start before the wait for the chunk's
  // cumsum and CB.
  const KernelConfig &config = f.config;
  if (config.rawOperands())
    copyChunkXB(f, it);
  // With its own cumsum the item waits for CB only before its scan.
  Value cbFlag;
  if (config.ownCumsum)
    cbFlag = peekChunkCB(f, it);
  else
    waitForChunks(f, it.row, it.c, e.add(it.c, 1), /*cumsum=*/true, it.group);
  profileStamp(f, ChainPhase::CountersAwaited);
  stageChunk(f, it);
  if (cbFlag)
    readChunkCBFlag(f, it, cbFlag);
  profileStamp(f, ChainPhase::Staged);
  // One buffer for the vector paths of both products.
  Value shared;
  if (int64_t bytes = config.productBufferBytes)
    shared = f.k.sharedBuffer({bytes}, e.b.getI8Type());
  if (config.residentState)
    it.sState = allocateResidentState(f);

  walkStateChain(
      f, [&] { foldByLookBack(f, it, shared); },
      [&] { foldUnderTurn(f, it, shared); });
  if (config.ownCumsum)
    awaitChunkCB(f, it);
  chunkScan(f, it, shared);
  profileFinish(f, it);
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
