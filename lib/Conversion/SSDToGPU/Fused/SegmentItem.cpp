//===- SegmentItem.cpp - a segment of chunks, the state carried on chip ---===//
//
// The segment item (b, k, h, pb) owns rows [p0, p0 + pBlock) of head h on
// chunks [c0, c1) = [k S, min((k + 1) S, nc)) of batch row b, S chunks a
// segment (chosen at run time, see FusedKernel.cpp). State passing becomes
// a scan in two levels:
//   A. the segment's own end state from zero, as ONE product over its
//      tokens: local = sum_l (x_l w_l) B_l^T with w_l the chunk-state
//      weight of token l times the decay of every later chunk of the
//      segment (zero across a seq_idx change), and the segment's decay
//      D = prod_c carry_c;
//   B. the chain step, under turn[b,h,pb]: waits until turn = k + 1, reads
//      slot k (the state at the segment start), writes slot k + 1 <-
//      D slot(k) + local and sets turn <- k + 2. Slot k stays on chip as
//      the running state (f32, and in the tensor-core type as the scan's
//      resident operand);
//   C. the chunks in order: chunk scan of chunk c from the running state,
//      then running <- carry_c running + S_c (S_c: chunk c's chunk-state
//      product), skipped after the last chunk.
// So the chain has nc / S steps instead of nc, no per-chunk state leaves
// the chip, and an item waits for the turn once. The price is the chunk
// states of a segment computed twice (A and C), a product as long as
// the chunk-state work itself. Measured on the H200 (bench/NOTES-fused-gpu.md)
// that price is larger than what the shorter chain saves while the products
// dominate, so `state-chain=chunk` stays the default.
//
//===----------------------------------------------------------------------===//
#include "ChainParts.h"
#include "Sync.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

/// Step A's shared inputs: every token's weight in the segment's end state
/// and the segment's decay.
struct SegmentWeights {
  Value sW;    // [KernelConfig::maxSegmentChunks * Q]
  Value decay; // D, f32
};

/// Stages the weights of the segment's tokens:
///   w_l = exp(dA_c[Q-1] - dA_c[q]) dt_c[q] prod_{c' > c} carry_c'
/// for token l = (c - c0) Q + q, zero past the segment and, with seq_idx,
/// for tokens of a sequence other than the last of their chunk.
SegmentWeights stageSegment(FusedBuild &f, const ChainItem &it, Value c0,
                            Value chunks, const ChunkRange &tokens) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  Type f32 = e.b.getF32Type();
  int64_t maxChunks = f.config.maxSegmentChunks;
  Value sCarry = f.k.sharedBuffer({maxChunks}, f32);
  Value sLater = f.k.sharedBuffer({maxChunks}, f32);
  SegmentWeights w;
  w.sW = f.k.sharedBuffer({maxChunks * p.chunk}, f32);
  Value dA = f.arg("dA_cumsum"), dt = f.arg("dt_out");
  Value lastQ = e.idx(p.chunk - 1);
  auto lastDA = [&](Value c) { return e.loadF32(dA, {it.row, it.head, c, lastQ}); };

  e.forLoop(e.threadId(), chunks, e.idx(kThreads), [&](Value t) {
    Value c = e.add(c0, t);
    e.store(carryAcross(f, it.row, c, lastDA(c)), sCarry, {t});
  });
  e.barrier();
  // The decay of the chunks after t, a product of at most maxChunks.
  e.forLoop(e.threadId(), chunks, e.idx(kThreads), [&](Value t) {
    SmallVector<Value> later =
        e.forLoop(e.add(t, 1), chunks, e.idx(1), ValueRange{e.f32(1.0)},
                  [&](Value u, ValueRange acc) -> SmallVector<Value> {
                    return {e.mulf(acc[0], e.load(sCarry, {u}))};
                  });
    e.store(later[0], sLater, {t});
  });
  e.barrier();
  w.decay = e.mulf(e.load(sCarry, {e.idx(0)}), e.load(sLater, {e.idx(0)}));

  Value segmentTokens = e.mul(chunks, p.chunk);
  e.forLoop(e.threadId(), segmentTokens, e.idx(kThreads), [&](Value l) {
    Value t = e.div(l, e.idx(p.chunk)), q = e.rem(l, e.idx(p.chunk));
    Value c = e.add(c0, t);
    Value v = e.mulf(
        e.mulf(e.decay(e.subf(lastDA(c), e.loadF32(dA, {it.row, it.head, c, q}))),
               e.loadF32(dt, {it.row, it.head, c, q})),
        e.load(sLater, {t}));
    Value keep = e.lt(l, tokens.len);
    if (f.has("seq_idx")) {
      Value si = f.arg("seq_idx");
      Value lastId = e.load(si, {it.row, lastTokenOf(e, p, c, f.seqLen)});
      keep = e.andi(keep,
                    e.eq(e.load(si, {it.row, tokenAt(e, tokens, l)}), lastId));
    }
    e.store(e.select(keep, v, e.f32(0.0)), w.sW, {l});
  });
  e.barrier();
  return w;
}

/// Stores the running state's element(s) at (rr, nn): f32 into sRun and,
/// where the scan reads it in place, in the tensor-core type into sState.
void keepOnChip(FusedBuild &f, const ChainItem &it, Value rr, Value nn,
                Value v, bool vectors) {
  Emitter &e = f.e;
  if (vectors) {
    e.storeVector(v, it.sRun, {rr, nn});
    if (it.sState)
      e.storeVector(v, it.sState, residentStateAt(f, rr, nn));
    return;
  }
  e.store(v, it.sRun, {rr, nn});
  if (it.sState)
    e.store(v, it.sState, residentStateAt(f, rr, nn));
}

/// The chunks [c0, c1) of segment k.
struct Segment {
  Value k, c0, c1, chunks;
};

/// A and B: the segment's end state from zero, folded into the chain under
/// the turn; slot k stays on chip as the running state.
void foldSegment(FusedBuild &f, ChainItem &it, const Segment &s, Value shared,
                 bool vectors) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t mark = f.k.sharedMark();
  waitForChunks(f, it.row, s.c0, s.c1, /*cumsum=*/true, Value());
  ChainItem segment = it;
  Value tokenStart = e.mul(s.c0, p.chunk);
  segment.place.range = {
      tokenStart, e.sub(e.min(e.mul(s.c1, p.chunk), f.seqLen), tokenStart)};
  SegmentWeights w =
      stageSegment(f, it, s.c0, s.chunks, segment.place.range);
  segment.sW = w.sW;
  Value slots = f.arg("passed_states"), turns = f.arg("state_turn");
  Value turn = turnIndex(f, it.row, it.head, it.pb);
  Value decays = vectors ? e.splat(w.decay, kVectorWidth) : w.decay;
  chunkStateProduct(
      f, segment, shared, [&] { blockAcquire(e, turns, turn, e.add(s.k, 1)); },
      [&](Value rr, Value nn, Value local) {
        SmallVector<Value> at = {it.row, stateSlotIndex(f, s.k), it.head,
                                 e.add(it.p0, rr), nn};
        SmallVector<Value> next = {it.row, stateSlotIndex(f, e.add(s.k, 1)),
                                   it.head, e.add(it.p0, rr), nn};
        Value prev =
            vectors ? e.toF32Vector(e.loadVector(slots, at, kVectorWidth))
                    : e.loadF32(slots, at);
        if (vectors)
          e.storeVector(math::FmaOp::create(e.b, decays, prev, local), slots,
                        next);
        else
          e.store(e.fma(w.decay, prev, local), slots, next);
        keepOnChip(f, it, rr, nn, prev, vectors);
      });
  blockRelease(e, turns, turn, e.add(s.k, 2));
  f.k.sharedRelease(mark);
}

/// C: the chunks in order, each scanned from the running state, which then
/// takes the chunk's state (but after the last chunk).
void scanSegment(FusedBuild &f, ChainItem &it, const Segment &s, Value shared,
                 bool vectors) {
  Emitter &e = f.e;
  waitForChunks(f, it.row, s.c0, s.c1, /*cumsum=*/false, it.group);
  e.forLoop(s.c0, s.c1, e.idx(1), [&](Value c) {
    it.c = c;
    it.place = placeChunk(f, c);
    stageChunk(f, it);
    chunkScan(f, it, shared);
    e.ifThen(e.lt(e.add(c, 1), s.c1), [&] {
      Value carry = stateCarry(f, it);
      Value carries = vectors ? e.splat(carry, kVectorWidth) : carry;
      chunkStateProduct(
          f, it, shared, [&] { e.barrier(); },
          [&](Value rr, Value nn, Value v) {
            Value next;
            if (vectors)
              next = math::FmaOp::create(
                  e.b, carries, e.loadVector(it.sRun, {rr, nn}, kVectorWidth),
                  v);
            else
              next = e.fma(carry, e.load(it.sRun, {rr, nn}), v);
            keepOnChip(f, it, rr, nn, next, vectors);
          });
    });
    // The next chunk restages dA, dt and the weights.
    e.barrier();
  });
}

} // namespace

void emitSegmentItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  ChainItem it;
  Segment s;
  s.k = decodeChainIndex(f, index, it);
  s.c0 = e.mul(s.k, f.segmentChunks);
  s.c1 = e.min(e.add(s.c0, f.segmentChunks), f.numChunks);
  s.chunks = e.sub(s.c1, s.c0);

  Value shared;
  const KernelConfig &config = f.config;
  if (int64_t bytes = config.productBufferBytes)
    shared = f.k.sharedBuffer({bytes}, e.b.getI8Type());
  if (config.residentState)
    it.sState = allocateResidentState(f);
  it.sRun = f.k.sharedBuffer({f.plan.pBlock, p.state}, e.b.getF32Type());
  bool vectors = config.stateVectors;
  foldSegment(f, it, s, shared, vectors);
  scanSegment(f, it, s, shared, vectors);
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
