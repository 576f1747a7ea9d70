//===- Items.cpp - the small work items of the fused SSD kernel -----------===//
//
// init, cumsum, bmm and final items, and the chunk placement they share
// with the chain items. Each item body runs with all 256 threads of the
// block and ends with its publish (a release of a counter).
//
//===----------------------------------------------------------------------===//
#include "../CBTile.h"
#include "FusedKernel.h"
#include "Sync.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

//===----------------------------------------------------------------------===//
// Chunks, sequences and state slots
//===----------------------------------------------------------------------===//

namespace {

/// One step of the walk over cu_seqlens: sequence i's token bounds and
/// chunk count, clamped as chunkRange clamps them.
struct SequenceSpan {
  Value lo, hi, count;
};

SequenceSpan sequenceSpan(FusedBuild &f, Value i, Value base) {
  Emitter &e = f.e;
  Value zero = e.idx(0), q = e.idx(f.p.chunk);
  Value cu = f.arg("cu_seqlens");
  auto cuAt = [&](Value at) {
    return e.min(e.max(e.toIndex(e.load(cu, {at})), zero), f.seqLen);
  };
  Value lo = cuAt(i);
  Value hi = e.max(cuAt(e.add(i, 1)), lo);
  Value count = e.div(e.add(e.sub(hi, lo), e.idx(f.p.chunk - 1)), q);
  count = e.min(count, e.max(e.sub(f.numChunks, base), zero));
  return {lo, hi, count};
}

} // namespace

ChunkPlace placeChunk(FusedBuild &f, Value c) {
  Emitter &e = f.e;
  if (!f.p.isVarlen()) {
    ChunkRange r = chunkRange(e, f.p, c, f.seqLen, f.numChunks, Value());
    return {r, c, e.i1(true)};
  }
  Value zero = e.idx(0), q = e.idx(f.p.chunk);
  SmallVector<Value> r =
      e.forLoop(zero, f.numSeqs, e.idx(1),
                ValueRange{zero, zero, zero, zero, e.i1(false)},
                [&](Value i, ValueRange a) -> SmallVector<Value> {
                  Value base = a[0];
                  SequenceSpan s = sequenceSpan(f, i, base);
                  Value k = e.sub(c, base);
                  Value mine = e.andi(e.le(base, c), e.lt(k, s.count));
                  Value start = e.add(s.lo, e.mul(k, q));
                  Value len = e.min(q, e.sub(s.hi, start));
                  return {e.add(base, s.count), e.select(mine, start, a[1]),
                          e.select(mine, len, a[2]),
                          e.select(mine, e.add(c, i), a[3]), e.ori(mine, a[4])};
                });
  return {{r[1], r[2]}, r[3], r[4]};
}

Value stateSlotIndex(FusedBuild &f, Value slot) {
  int64_t ring = f.config.stateRing;
  if (!ring)
    return slot;
  return f.e.rem(slot, f.e.idx(ring));
}

void walkStateChain(FusedBuild &f, function_ref<void()> byLookBack,
                    function_ref<void()> byTurns) {
  if (f.config.lookBack())
    byLookBack();
  else
    byTurns();
}

void forEachSequence(FusedBuild &f, Value row,
                     function_ref<void(Value, Value, Value)> body) {
  Emitter &e = f.e;
  if (!f.p.isVarlen()) {
    body(row, e.idx(0), f.chainSteps);
    return;
  }
  Value zero = e.idx(0);
  e.forLoop(zero, f.numSeqs, e.idx(1), ValueRange{zero},
            [&](Value i, ValueRange base) -> SmallVector<Value> {
              SequenceSpan s = sequenceSpan(f, i, base[0]);
              Value first = e.add(base[0], i);
              body(i, first, e.add(first, s.count));
              return {e.add(base[0], s.count)};
            });
}

void forEachStateElement(FusedBuild &f, Value p0,
                         function_ref<void(Value, Value)> body) {
  Emitter &e = f.e;
  int64_t n = f.p.state;
  e.forLoop(e.threadId(), e.idx(f.plan.pBlock * n), e.idx(kThreads),
            [&](Value el) {
              body(e.add(p0, e.div(el, e.idx(n))), e.rem(el, e.idx(n)));
            });
}

Value turnIndex(FusedBuild &f, Value row, Value head, Value pb) {
  Emitter &e = f.e;
  return e.add(e.mul(e.add(e.mul(row, f.p.heads), head), f.plan.pBlocks), pb);
}

//===----------------------------------------------------------------------===//
// init and final: the initial states into their slots, the last slots out
//===----------------------------------------------------------------------===//

namespace {

struct StateItem {
  Value row, head, pb, p0;
};

StateItem decodeStateItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  Value pb = e.rem(index, e.idx(f.plan.pBlocks));
  Value rest = e.div(index, e.idx(f.plan.pBlocks));
  return {e.div(rest, e.idx(f.p.heads)), e.rem(rest, e.idx(f.p.heads)), pb,
          e.mul(pb, f.plan.pBlock)};
}

} // namespace

void emitInitItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  StateItem it = decodeStateItem(f, index);
  Value slots = f.arg("passed_states");
  forEachSequence(f, it.row, [&](Value seq, Value first, Value) {
    forEachStateElement(f, it.p0, [&](Value pp, Value nn) {
      Value v = f.has("initial_states")
                    ? e.loadF32(f.arg("initial_states"), {seq, it.head, pp, nn})
                    : e.f32(0.0);
      e.store(v, slots, {it.row, stateSlotIndex(f, first), it.head, pp, nn});
    });
  });
  blockRelease(e, f.arg("state_turn"), index, e.idx(1));
}

void emitFinalItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  StateItem it = decodeStateItem(f, index);
  // Every chain step of the row is done: turn = steps + 1, or with the
  // look-back the last chunk's end state published (the states before it
  // were published first, or folded into it).
  auto byTurns = [&] {
    blockAcquire(e, f.arg("state_turn"), index, e.add(f.chainSteps, 1));
  };
  auto byLookBack = [&] {
    // Without a chunk (L = 0) the init item's turn is the last publish.
    Value chunks = e.lt(e.idx(0), f.numChunks);
    e.ifThen(chunks, [&] {
      blockAcquire(e, f.arg("chain_status"),
                   chainStatusIndex(f, index, e.sub(f.numChunks, e.idx(1))),
                   e.idx(kEndStatePublished));
    });
    e.ifThen(e.eq(chunks, e.i1(false)), byTurns);
  };
  walkStateChain(f, byLookBack, byTurns);
  Value slots = f.arg("passed_states");
  forEachSequence(f, it.row, [&](Value seq, Value, Value last) {
    forEachStateElement(f, it.p0, [&](Value pp, Value nn) {
      e.store(e.loadF32(slots,
                        {it.row, stateSlotIndex(f, last), it.head, pp, nn}),
              f.arg("final_states"), {seq, it.head, pp, nn});
    });
  });
}

//===----------------------------------------------------------------------===//
// cumsum (b, c, slice): dt_out and dA_cumsum of one chunk, a slice of heads
//===----------------------------------------------------------------------===//

int64_t cumsumSliceItems(int64_t heads) {
  return (heads + kCumsumSliceHeads - 1) / kCumsumSliceHeads;
}

Value cumsumItems(FusedBuild &f) {
  return f.e.select(f.firstWaveSplit, f.e.idx(cumsumSliceItems(f.p.heads)),
                    f.e.idx(1));
}

void emitCumsumItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  // index = (row * nc + c) * items + slice; the slice's heads are
  // [h0, h1), ceil(heads / items) of them.
  Value items = cumsumItems(f);
  Value slice = e.rem(index, items), chunkIndex = e.div(index, items);
  Value c = e.rem(chunkIndex, f.numChunks),
        row = e.div(chunkIndex, f.numChunks);
  Value heads = e.idx(p.heads);
  Value perItem = e.div(e.add(heads, e.sub(items, e.idx(1))), items);
  Value h0 = e.mul(slice, perItem);
  Value h1 = e.min(e.add(h0, perItem), heads);
  ChunkRange r = placeChunk(f, c).range;
  Value dt = f.arg("dt"), dtOut = f.arg("dt_out"), dA = f.arg("dA_cumsum");
  // Warp w scans heads h0 + w, h0 + w + 8, ...: lane l holds positions l,
  // l + 32, ... of the chunk; every 32-position segment is a warp scan,
  // carried into the next. All of a head's dt loads are issued before its
  // scans.
  constexpr int64_t kWarpsPerBlock = kThreads / 32;
  int64_t segments = (p.chunk + 31) / 32;
  Value lane = e.laneId();
  Value warp = e.div(e.threadId(), e.idx(32));
  e.forLoop(e.add(h0, warp), h1, e.idx(kWarpsPerBlock), [&](Value h) {
    Value a = e.loadF32(f.arg("A"), {h});
    Value bias = f.has("dt_bias") ? e.loadF32(f.arg("dt_bias"), {h}) : Value();
    SmallVector<Value> pos, vals;
    for (int64_t s = 0; s < segments; ++s) {
      Value q = e.add(lane, e.idx(32 * s));
      Value v =
          processDt(e, p, e.loadF32(dt, {row, tokenAt(e, r, q), h}), bias);
      pos.push_back(q);
      vals.push_back(e.select(e.lt(q, r.len), v, e.f32(0.0)));
    }
    Value carry = e.f32(0.0);
    for (int64_t s = 0; s < segments; ++s) {
      Value sum = e.addf(carry, e.warpInclusiveScan(e.mulf(a, vals[s])));
      auto store = [&] {
        e.store(vals[s], dtOut, {row, h, c, pos[s]});
        e.store(sum, dA, {row, h, c, pos[s]});
      };
      if (32 * (s + 1) <= p.chunk)
        store();
      else
        e.ifThen(e.lt(pos[s], e.idx(p.chunk)), store);
      if (s + 1 < segments)
        carry = e.warpShuffle(sum, e.idx(31));
    }
  });
  // The chunk's counter counts heads: the chain items wait for all of them.
  blockReleaseAdd(e, f.arg("cumsum_ready"), chunkIndex,
                  e.max(e.sub(h1, h0), e.idx(0)));
}

//===----------------------------------------------------------------------===//
// bmm (b, c, g, tile): one tile of CB's lower triangle
//===----------------------------------------------------------------------===//

int64_t cbTileItems(int64_t chunk) {
  int64_t tiles = (chunk + tileEdge(chunk) - 1) / tileEdge(chunk);
  return tiles * (tiles + 1) / 2;
}

void emitBmmItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t edge = tileEdge(p.chunk);
  int64_t tiles = (p.chunk + edge - 1) / edge;
  int64_t depth = mmaElementType(p) ? tileDepth(p.state) : 16;
  static_assert(kThreads == 256, "TileMatmul runs on 256 threads");
  TileMatmul mm(e, f.k, edge, edge, depth, mmaElementType(p));
  // index = ((row * nc + c) * groups + group) * items + item; item k is
  // the k-th tile (ti, tj <= ti) of the lower triangle, row by row.
  int64_t items = cbTileItems(p.chunk);
  Value item = e.rem(index, e.idx(items));
  Value chunkGroup = e.div(index, e.idx(items));
  Value group = e.rem(chunkGroup, e.idx(p.groups));
  Value rest = e.div(chunkGroup, e.idx(p.groups));
  Value c = e.rem(rest, f.numChunks), row = e.div(rest, f.numChunks);
  Value ti = e.idx(0), tj = e.idx(0);
  for (int64_t i = 0, k = 0; i < tiles; ++i)
    for (int64_t j = 0; j <= i; ++j, ++k) {
      Value here = e.eq(item, e.idx(k));
      ti = e.select(here, e.idx(i), ti);
      tj = e.select(here, e.idx(j), tj);
    }
  CBTile t{row, group, c, placeChunk(f, c).range};
  Value i0 = e.mul(ti, edge), j0 = e.mul(tj, edge);
  SmallVector<Value> acc =
      mm.accumulate(mm.zero(), e.idx(0), e.idx(p.state),
                    cbRows(e, t, f.arg("C"), i0, /*vectors=*/false),
                    cbRows(e, t, f.arg("B"), j0, /*vectors=*/false));
  mm.epilogue(acc, [&](Value ri, Value cj, Value v) {
    Value i = e.add(i0, ri), j = e.add(j0, cj);
    e.ifThen(e.andi(e.lt(i, e.idx(p.chunk)), e.lt(j, e.idx(p.chunk))),
             [&] { storeCB(e, f.k, t, i, j, v); });
  });
  blockReleaseAdd(e, f.arg("cb_ready"), chunkGroup, e.idx(1));
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
