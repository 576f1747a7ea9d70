//===- LookBack.cpp - the state chain by decoupled look-back --------------===//
//
// The chain's recurrence P(c + 1) = a(c) P(c) + S(c) (P the state at a chunk
// start, a the chunk's decay or zero at a seq_idx reset, S its chunk state)
// is a scan whose combine, (a2, S2) o (a1, S1) = (a2 a1, a2 S1 + S2), is
// associative; so an item needs the latest published P and the chunk states
// after it, not its predecessor's fold. Chain item c, once S(c) sits in the
// chunk-state product's output tile:
//   1. thread 0 reads chunk c - 1's status. When its end state P(c) is
//      published (status 2: the chain keeps up), the block folds as the
//      turn chain does, P(c + 1) = a(c) P(c) + S(c), and publishes nothing
//      else;
//   2. otherwise the block publishes S(c) (chunk_states, status 1) and
//      thread 0 looks back k = c - 1, c - 2, ...: it spins while status(k)
//      is 0 and stops at the first k whose end state is published, or at
//      the row's first chunk (slot 0, the init item's); the block folds
//      P(k + 1) with the chunk states S(k + 1) .. S(c - 1), then its own;
//   3. P(c + 1) goes to slot c + 1 (status 2); P(c) stays in shared memory
//      as the chunk scan's state operand.
// Step 1 waits up to KernelConfig::lookBackPatience cycles first: where
// the chain keeps up (many heads) that wait is short and cheaper than the
// chunk state's store and the look-back's loads. Chunk states and passed
// states are rounded to the state precision at every step, whichever way
// an item took, so the outputs do not depend on it (with fp16 states the
// chunk states are rounded too, unlike the turn chain's).
// An item waits only on chunks before it (smaller tickets) and publishes a
// status without waiting on any chunk after it, so the kernel cannot
// deadlock. Where the chain keeps up an item costs what the turn's does (a
// status load in place of the turn's spin); where it does not, the chain's
// latency is paid once per look-back instead of once per chunk, at one
// chunk-state store and one slot-sized load per chunk looked past.
//
//===----------------------------------------------------------------------===//
#include "ChainParts.h"
#include "Profile.h"
#include "Sync.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

Value chainStatusIndex(FusedBuild &f, Value turn, Value c) {
  return f.e.add(f.e.mul(turn, f.numChunks), c);
}

namespace {

/// Thread 0 only: the first chunk whose start state is published, looking
/// back from chunk c - 1 (c >= 1): k + 1 for the last k < c whose end state
/// is published, or 0 (slot 0, the init item's) when every chunk before c
/// has published only its chunk state. Every status it passes is acquired,
/// so the chunk states between are visible too.
Value lookBackFrom(FusedBuild &f, Value turn, Value c) {
  Emitter &e = f.e;
  ImplicitLocOpBuilder &b = e.b;
  Type index = b.getIndexType();
  Value statuses = f.arg("chain_status");
  auto loop = scf::WhileOp::create(b, TypeRange{index, index},
                                   ValueRange{e.sub(c, e.idx(1))});
  Block *before = b.createBlock(&loop.getBefore(), {}, {index}, {b.getLoc()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(before);
    Value k = before->getArgument(0);
    Value status = spinUntilAtLeast(
        e, counterPointer(e, statuses, chainStatusIndex(f, turn, k)),
        e.idx(kChunkStatePublished));
    Value more =
        e.andi(e.ne(status, e.idx(kEndStatePublished)), e.ne(k, e.idx(0)));
    scf::ConditionOp::create(b, more, ValueRange{k, status});
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, {index, index},
                               {b.getLoc(), b.getLoc()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(after);
    scf::YieldOp::create(b, ValueRange{e.sub(after->getArgument(0), e.idx(1))});
  }
  b.setInsertionPointAfter(loop);
  Value k = loop.getResult(0), status = loop.getResult(1);
  Value first =
      e.select(e.eq(status, e.idx(kEndStatePublished)), e.add(k, 1), e.idx(0));
  // Slot 0 is the init item's (turn >= 1).
  e.ifThen(e.eq(first, e.idx(0)), [&] {
    spinUntilAtLeast(e, counterPointer(e, f.arg("state_turn"), turn), e.idx(1));
  });
  return first;
}

} // namespace

void foldByLookBack(FusedBuild &f, ChainItem &it, Value shared) {
  Emitter &e = f.e;
  ImplicitLocOpBuilder &b = e.b;
  const SSDProblem &p = f.p;
  assert(f.config.lookBack() && it.sState && "the scan reads the folded state");
  TileMatmul mm = stagedChunkState(f, it, shared);
  profileStamp(f, ChainPhase::StateProduct);
  // C replaces B in shared memory while the chain is awaited.
  if (it.sBC)
    copyChunkC(f, it);

  Value turn = turnIndex(f, it.row, it.head, it.pb);
  Value statuses = f.arg("chain_status");
  Value slots = f.arg("passed_states"), chunkStates = f.arg("chunk_states");
  Value broadcastSlot = f.broadcastSlot;
  Value zero = e.idx(0), one = e.idx(1);
  // 1. Is P(c) published, or will it be within the patience? (Chunk 0
  // starts from slot 0, the init item's.)
  // The broadcast's barriers also make the staged tile readable.
  Value kept = broadcastFromThread0(e, broadcastSlot, [&] {
    return e.ifElse(
        e.eq(it.c, zero), {b.getIndexType()},
        [&]() -> SmallVector<Value> {
          spinUntilAtLeast(e, counterPointer(e, f.arg("state_turn"), turn),
                           one);
          return {one};
        },
        [&]() -> SmallVector<Value> {
          Value status = spinUntilAtLeast(
              e,
              counterPointer(e, statuses,
                             chainStatusIndex(f, turn, e.sub(it.c, one))),
              e.idx(kEndStatePublished), f.config.lookBackPatience);
          return {e.select(e.eq(status, e.idx(kEndStatePublished)), one, zero)};
        })[0];
  });
  // This thread's places of the tile, for every pass below (the same
  // places in the chunk states and the slots).
  FoldPlaces places = threadFoldPlaces(f, mm);
  SmallVector<std::pair<Value, Value>> owned;
  for (int64_t j = 0; j < places.count; ++j)
    owned.push_back(places.at(j));
  int64_t width = places.width;
  auto stateAt = [&](Value chunk, Value rr, Value nn) -> SmallVector<Value> {
    return {it.row, chunk, it.head, e.add(it.p0, rr), nn};
  };
  // 2. If not: publish S(c), then look back for the latest published P.
  Value first = e.ifElse(
      e.eq(kept, one), {b.getIndexType()},
      [&]() -> SmallVector<Value> { return {it.place.slot}; },
      [&]() -> SmallVector<Value> {
        for (auto [rr, nn] : owned)
          e.storeVector(mm.loadOutputVector(rr, nn, width), chunkStates,
                        stateAt(it.c, rr, nn));
        // Every thread's stores before thread 0's fence.
        e.barrier();
        return {broadcastFromThread0(e, broadcastSlot, [&] {
          // The release pattern of blockRelease: readOutput's closing
          // barrier ordered the block's stores before the fence.
          fenceDevice(e);
          storeRelaxed(
              e, counterPointer(e, statuses, chainStatusIndex(f, turn, it.c)),
              e.idx(kChunkStatePublished));
          return lookBackFrom(f, turn, it.c);
        })};
      })[0];
  profileStamp(f, ChainPhase::TurnAcquired);

  // 3. P(first), then a(j) P + S(j) for j in [first, c), on this thread's
  // places of the tile; then P(c + 1) = a(c) P(c) + S(c).
  SmallVector<Value> state;
  for (auto [rr, nn] : owned)
    state.push_back(
        e.toF32Vector(e.loadVector(slots, stateAt(first, rr, nn), width)));
  Value dA = f.arg("dA_cumsum"), lastQ = e.idx(p.chunk - 1);
  // Every chunk state and every state P(j + 1) passed over is rounded to the
  // slots' precision, as the published chunk states and the slots hold
  // them: the outputs do not depend on the way an item took (bitwise, run
  // to run).
  Type slotType = cast<MemRefType>(slots.getType()).getElementType();
  auto asInSlot = [&](Value v) {
    if (slotType.isF32())
      return v;
    auto type = cast<VectorType>(v.getType());
    return e.toF32Vector(
        arith::TruncFOp::create(b, type.clone(slotType), v).getResult());
  };
  state = e.forLoop(
      first, it.place.slot, one, state,
      [&](Value j, ValueRange prev) -> SmallVector<Value> {
        Value lastDA = e.loadF32(dA, {it.row, it.head, j, lastQ});
        Value a = e.splat(carryAcross(f, it.row, j, lastDA), width);
        SmallVector<Value> next;
        for (auto [i, at] : llvm::enumerate(owned)) {
          Value s = e.toF32Vector(e.loadVector(
              chunkStates, stateAt(j, at.first, at.second), width));
          next.push_back(asInSlot(math::FmaOp::create(b, a, prev[i], s)));
        }
        return next;
      });
  Value carry = e.splat(stateCarry(f, it), width);
  Value nextSlot = e.add(it.place.slot, 1);
  for (auto [i, at] : llvm::enumerate(owned)) {
    auto [rr, nn] = at;
    Value own = asInSlot(mm.loadOutputVector(rr, nn, width));
    e.storeVector(math::FmaOp::create(b, carry, state[i], own), slots,
                  stateAt(nextSlot, rr, nn));
    e.storeVector(state[i], it.sState, residentStateAt(f, rr, nn));
  }
  profileStamp(f, ChainPhase::Folded);
  blockRelease(e, statuses, chainStatusIndex(f, turn, it.c),
               e.idx(kEndStatePublished));
  profileStamp(f, ChainPhase::Released);
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
