//===- ChainItem.cpp - chunk_state -> state_passing -> chunk_scan ---------===//
//
// The chain item (b, c, h, pb) owns rows [p0, p0 + pBlock) of head h's
// state and output on chunk c:
//   1. waits for the chunk's cumsum and CB (acquire), stages dA_cumsum and
//      dt of (b, h, c) and the chunk-state weights in shared memory;
//   2. chunk state: S = sum_l (x_l w_l) B_l^T on the tensor cores, one
//      dstate tile at a time;
//   3. state passing: waits until turn[b,h,pb] = c + 1, then
//      slot(c) + 1 <- carry * slot(c) + S in fp32, and turn <- c + 2;
//   4. chunk scan: y = exp(dA) C slot(c) + (CB o decay o dt) x + D x, gated
//      by z, one row tile of the chunk at a time.
// The serial part (3) is a load, an FMA and a store per element; the scan
// (4) of this item overlaps the next chunk's chain step.
//
// On tensor cores the products take TileMatmul's vector path (16-byte
// fills one K slice ahead into two shared stages, 16-byte stores through
// shared memory), as the unfused chunk_state and chunk_scan do; the chunk
// state is then one pBlock x dstate tile, whole before the turn wait, so
// that only the fold into the slot runs under the turn. Both products run
// in one shared buffer; the fold also leaves slot(c), which it reads, in
// shared memory as the chunk scan's state operand.
//
//===----------------------------------------------------------------------===//
#include "../ScanTile.h"
#include "FusedKernel.h"
#include "Sync.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

struct ChainItem {
  Value row, c, head, group, pb, p0;
  ChunkPlace place;
  Value sDA, sDt, sW; // shared, chunk-length: dA_cumsum, dt, state weights
  /// Shared, optional: slot(c) in the tensor-core type as the chunk scan's
  /// resident B operand, written by the fold that reads slot(c) anyway.
  Value sState;
};

/// Tile depth of a product: the unfused choice on the tensor cores, 16 for
/// the f32 path so that the three products' shared slices fit together.
int64_t depthFor(const SSDProblem &p, int64_t k) {
  return mmaElementType(p) ? tileDepth(k) : 16;
}

/// K slice depth of the chunk-state product: 64 on the tensor cores when
/// the chunk allows (two slices at chunk 128; measured 2-4% faster on the
/// H200 than 32, see bench/NOTES-fused-gpu.md).
int64_t stateDepth(const SSDProblem &p) {
  return p.chunk >= 64 ? 64 : tileDepth(p.chunk);
}

/// K slice depth of the chunk-scan products.
int64_t scanDepth(const SSDProblem &p) {
  return depthFor(p, std::min(p.state, p.chunk));
}

/// Output rows of one chunk-scan tile (64-row tiles measured no slower than
/// whole-chunk ones, and they skip the upper triangle of CB).
int64_t scanRows(const SSDProblem &p) { return tileEdge(p.chunk); }

/// The chunk-state product of the vector path: one pBlock x dstate tile.
TileMatmul stateProduct(FusedBuild &f) {
  return TileMatmul(f.e, f.k, f.plan.pBlock, f.p.state, stateDepth(f.p),
                    mmaElementType(f.p));
}

/// The chunk-scan product: scanRows output rows by the item's columns.
TileMatmul scanProduct(FusedBuild &f) {
  return TileMatmul(f.e, f.k, scanRows(f.p), roundUp(f.plan.pBlock, 16),
                    scanDepth(f.p), mmaElementType(f.p));
}

/// The vector path of the chunk state: one pBlock x dstate tile on the
/// tensor cores (x rows and B rows are whole 16-byte vectors).
bool stateVectors(FusedBuild &f) {
  const SSDProblem &p = f.p;
  int64_t pBlock = f.plan.pBlock;
  return pBlock % 16 == 0 && p.state % 16 == 0 && p.state <= 128 &&
         p.chunk % kVectorWidth == 0 && stateProduct(f).usesMma();
}

/// The vector path of the chunk scan: rows of C, CB, x and the state slot
/// are whole vectors and the tile covers the item's columns exactly.
bool scanVectors(FusedBuild &f) {
  const SSDProblem &p = f.p;
  int64_t pBlock = f.plan.pBlock;
  return pBlock % 16 == 0 && p.state % kVectorWidth == 0 &&
         p.chunk % kVectorWidth == 0 && scanProduct(f).usesMma();
}

/// Thread 0 waits for the chunk's cumsum and CB; then the block reads them.
void waitForChunkInputs(FusedBuild &f, const ChainItem &it) {
  Emitter &e = f.e;
  Value chunkIndex = e.add(e.mul(it.row, f.numChunks), it.c);
  Value cbIndex = e.add(e.mul(chunkIndex, f.p.groups), it.group);
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    spinUntilAtLeast(e, counterPointer(e, f.arg("cumsum_ready"), chunkIndex),
                     e.idx(1));
    spinUntilAtLeast(e, counterPointer(e, f.arg("cb_ready"), cbIndex),
                     e.idx(1));
  });
  e.barrier();
  fenceDevice(e);
}

/// Shared dA_cumsum, dt and the chunk-state weights
/// w_l = exp(min(dA[Q-1] - dA[l], 0)) dt_l (zero past the chunk and, with
/// seq_idx, for tokens of a sequence other than the chunk's last one).
void stageChunk(FusedBuild &f, ChainItem &it) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  Type f32 = e.b.getF32Type();
  it.sDA = f.k.sharedBuffer({p.chunk}, f32);
  it.sDt = f.k.sharedBuffer({p.chunk}, f32);
  it.sW = f.k.sharedBuffer({p.chunk}, f32);
  Value dA = f.arg("dA_cumsum"), dt = f.arg("dt_out");
  e.forLoop(e.threadId(), e.idx(p.chunk), e.idx(kThreads), [&](Value l) {
    e.store(e.loadF32(dA, {it.row, it.head, it.c, l}), it.sDA, {l});
    e.store(e.loadF32(dt, {it.row, it.head, it.c, l}), it.sDt, {l});
  });
  e.barrier();
  Value last = e.load(it.sDA, {e.idx(p.chunk - 1)});
  Value lastId;
  if (f.has("seq_idx"))
    lastId =
        e.load(f.arg("seq_idx"), {it.row, lastTokenOf(e, p, it.c, f.seqLen)});
  const ChunkRange &r = it.place.range;
  e.forLoop(e.threadId(), e.idx(p.chunk), e.idx(kThreads), [&](Value l) {
    Value w =
        e.mulf(e.decay(e.subf(last, e.load(it.sDA, {l}))), e.load(it.sDt, {l}));
    Value keep = e.lt(l, r.len);
    if (lastId)
      keep = e.andi(
          keep,
          e.eq(e.load(f.arg("seq_idx"), {it.row, tokenAt(e, r, l)}), lastId));
    e.store(e.select(keep, w, e.f32(0.0)), it.sW, {l});
  });
  e.barrier();
}

/// The decay carried from slot(c) to slot(c) + 1: exp(min(dA[Q-1], 0)), or
/// zero where seq_idx changes inside the chunk.
Value stateCarry(FusedBuild &f, const ChainItem &it) {
  Emitter &e = f.e;
  Value carry = e.decay(e.load(it.sDA, {e.idx(f.p.chunk - 1)}));
  if (!f.has("seq_idx"))
    return carry;
  Value si = f.arg("seq_idx");
  Value reset = e.ne(e.load(si, {it.row, lastTokenOf(e, f.p, it.c, f.seqLen)}),
                     e.load(si, {it.row, tokenBefore(e, f.p, it.c)}));
  return e.select(reset, e.f32(0.0), carry);
}

/// What step 3 folds with: the slots, the turn counter of (row, head, pb),
/// the carried decay, and the slot read (slot(c)) and written (+1).
struct StateFold {
  Value slots, turns, turn, carry, slot, nextSlot;
};
StateFold stateFold(FusedBuild &f, const ChainItem &it) {
  Emitter &e = f.e;
  StateFold s;
  s.slots = f.arg("passed_states");
  s.turns = f.arg("state_turn");
  s.turn = turnIndex(f, it.row, it.head, it.pb);
  s.carry = stateCarry(f, it);
  s.slot = it.place.slot;
  s.nextSlot = e.add(it.place.slot, 1);
  return s;
}

/// Steps 2 and 3 on the vector path: the whole chunk state in registers,
/// then, under the turn, slot(c) + 1 <- carry * slot(c) + S with 16-byte
/// loads and stores.
void chunkStateAndPassVector(FusedBuild &f, const ChainItem &it, Value shared) {
  Emitter &e = f.e;
  TileMatmul mm = stateProduct(f);
  mm.shareVectorBuffer(shared);
  const ChunkRange &r = it.place.range;
  Value x = f.arg("x"), bMat = f.arg("B");
  StateFold fold = stateFold(f, it);

  // A(l, pp) = x[l, p0 + pp] w_l,  B(l, nn) = B[l, nn]; token-major both.
  TileOperand xw{[&](Value l, Value rr) {
                   Value v = e.loadF32(x, {it.row, tokenAt(e, r, l), it.head,
                                           e.add(it.p0, rr)});
                   return e.mulf(v, e.load(it.sW, {l}));
                 },
                 /*kContiguous=*/false};
  xw.loadVector = [&](Value l, Value rr) {
    return e.loadVector(
        x, {it.row, tokenAt(e, r, l), it.head, e.add(it.p0, rr)}, kVectorWidth);
  };
  xw.convertVector = [&](Value raw, Value l, Value) {
    return e.mulf(e.toF32Vector(raw),
                  e.splat(e.load(it.sW, {l}), kVectorWidth));
  };
  TileOperand bl{
      [&](Value l, Value nn) {
        return e.loadF32(bMat, {it.row, tokenAt(e, r, l), it.group, nn});
      },
      /*kContiguous=*/false};
  bl.loadVector = [&](Value l, Value nn) {
    return e.loadVector(bMat, {it.row, tokenAt(e, r, l), it.group, nn},
                        kVectorWidth);
  };
  SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), r.len, xw, bl);
  blockAcquire(e, fold.turns, fold.turn, e.add(it.c, 1));
  Value carries = e.splat(fold.carry, kVectorWidth);
  mm.epilogueVector(acc, [&](Value rr, Value nn, Value v) {
    e.ifThen(it.place.used, [&] {
      Value pp = e.add(it.p0, rr);
      Value prev = e.toF32Vector(
          e.loadVector(fold.slots, {it.row, fold.slot, it.head, pp, nn},
                       kVectorWidth));
      e.storeVector(math::FmaOp::create(e.b, carries, prev, v), fold.slots,
                    {it.row, fold.nextSlot, it.head, pp, nn});
      if (it.sState)
        e.storeVector(prev, it.sState, {e.idx(0), rr, nn});
    });
  });
  blockRelease(e, fold.turns, fold.turn, e.add(it.c, 2));
}

/// Steps 2 and 3: the chunk state tile by tile, folded into the passed
/// state under the turn counter.
void chunkStateAndPass(FusedBuild &f, const ChainItem &it) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t pBlock = f.plan.pBlock;
  int64_t tileP = roundUp(pBlock, 16), tileN = tileEdge(p.state);
  int64_t tilesN = (p.state + tileN - 1) / tileN;
  TileMatmul mm(e, f.k, tileP, tileN, depthFor(p, p.chunk), mmaElementType(p));
  const ChunkRange &r = it.place.range;
  Value x = f.arg("x"), bMat = f.arg("B");
  StateFold fold = stateFold(f, it);

  // A(l, pp) = x[l, p0 + pp] w_l,  B(l, nn) = B[l, n0 + nn].
  TileOperand xw{
      [&](Value l, Value rr) {
        Value in = e.lt(rr, e.idx(pBlock));
        Value col = e.add(it.p0, e.min(rr, e.idx(pBlock - 1)));
        Value v = e.loadF32(x, {it.row, tokenAt(e, r, l), it.head, col});
        return e.select(in, e.mulf(v, e.load(it.sW, {l})), e.f32(0.0));
      },
      /*kContiguous=*/false};
  for (int64_t nt = 0; nt < tilesN; ++nt) {
    int64_t n0 = nt * tileN;
    TileOperand bl{[&](Value l, Value cc) {
                     Value nn = e.add(e.idx(n0), cc);
                     Value in = e.lt(nn, e.idx(p.state));
                     Value v =
                         e.loadF32(bMat, {it.row, tokenAt(e, r, l), it.group,
                                          e.min(nn, e.idx(p.state - 1))});
                     return e.select(in, v, e.f32(0.0));
                   },
                   /*kContiguous=*/false};
    SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), r.len, xw, bl);
    if (nt == 0)
      blockAcquire(e, fold.turns, fold.turn, e.add(it.c, 1));
    mm.epilogue(acc, [&](Value rr, Value cc, Value v) {
      Value nn = e.add(e.idx(n0), cc);
      Value in =
          e.andi(e.andi(e.lt(rr, e.idx(pBlock)), e.lt(nn, e.idx(p.state))),
                 it.place.used);
      e.ifThen(in, [&] {
        Value pp = e.add(it.p0, rr);
        Value prev = e.loadF32(fold.slots, {it.row, fold.slot, it.head, pp, nn});
        e.store(e.fma(fold.carry, prev, v), fold.slots,
                {it.row, fold.nextSlot, it.head, pp, nn});
      });
    });
  }
  blockRelease(e, fold.turns, fold.turn, e.add(it.c, 2));
}

/// Step 4: the chunk's output rows, T at a time.
void chunkScan(FusedBuild &f, const ChainItem &it, Value shared) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  int64_t pBlock = f.plan.pBlock;
  int64_t rows = scanRows(p), cols = roundUp(pBlock, 16);
  TileMatmul mm = scanProduct(f);
  bool vectors = shared && cols == pBlock;
  if (vectors)
    mm.shareVectorBuffer(shared);
  Value sScale = f.k.sharedBuffer({rows}, e.b.getF32Type());
  const ChunkRange &r = it.place.range;
  ScanTile tile;
  tile.batch = it.row;
  tile.head = it.head;
  tile.group = it.group;
  tile.c = it.c;
  tile.p0 = it.p0;
  tile.cols = pBlock;
  tile.r = r;
  tile.sDA = it.sDA;
  tile.sDt = it.sDt;
  tile.sScale = sScale;
  tile.states = f.arg("passed_states");
  tile.stateAt = [&](Value pp, Value n) -> SmallVector<Value> {
    return {it.row, it.place.slot, it.head, pp, n};
  };
  Value startId;
  if (f.has("seq_idx"))
    startId = e.load(f.arg("seq_idx"), {it.row, tokenBefore(e, p, it.c)});

  e.forLoop(e.idx(0), r.len, e.idx(rows), [&](Value i0) {
    // exp(min(dA_i, 0)) per row, zero past the chunk and (seq_idx) for
    // tokens of a sequence other than the one running at the chunk start.
    e.forLoop(e.threadId(), e.idx(rows), e.idx(kThreads), [&](Value rr) {
      Value i = e.add(i0, rr);
      Value iq = e.min(i, e.idx(p.chunk - 1));
      Value keep = e.lt(i, r.len);
      if (startId)
        keep = e.andi(keep,
                      e.eq(e.load(f.arg("seq_idx"), {it.row, tokenAt(e, r, i)}),
                           startId));
      e.store(e.select(keep, e.decay(e.load(it.sDA, {iq})), e.f32(0.0)), sScale,
              {rr});
    });
    e.barrier();

    tile.i0 = i0;
    ScanOperands o = scanOperands(e, p, f.k, tile, vectors);
    // The fold left slot(c) in shared memory: no second read of the slot.
    if (vectors)
      o.state.resident = it.sState;
    SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), e.idx(p.state),
                                           o.cScaled, o.state);
    Value jEnd = e.min(e.add(i0, e.idx(rows)), r.len);
    acc = mm.accumulate(acc, e.idx(0), jEnd, o.weights, o.xj);
    if (vectors) {
      mm.epilogueVector(acc, [&](Value rr, Value col, Value v) {
        storeScanOutputVector(e, p, f.k, tile, rr, col, v);
      });
      return;
    }
    mm.epilogue(acc, [&](Value rr, Value col, Value v) {
      storeScanOutput(e, p, f.k, tile, rr, col, v);
    });
  });
}

} // namespace

void emitChainItem(FusedBuild &f, Value index) {
  Emitter &e = f.e;
  const SSDProblem &p = f.p;
  ChainItem it;
  it.pb = e.rem(index, e.idx(f.plan.pBlocks));
  Value rest = e.div(index, e.idx(f.plan.pBlocks));
  it.head = e.rem(rest, e.idx(p.heads));
  rest = e.div(rest, e.idx(p.heads));
  it.c = e.rem(rest, f.numChunks);
  it.row = e.div(rest, f.numChunks);
  it.group = e.div(it.head, e.idx(p.heads / p.groups));
  it.p0 = e.mul(it.pb, f.plan.pBlock);
  waitForChunkInputs(f, it);
  it.place = placeChunk(f, it.c);
  stageChunk(f, it);
  // One buffer for the vector paths of both products.
  bool stateVec = stateVectors(f), scanVec = scanVectors(f);
  Value shared;
  if (stateVec || scanVec) {
    int64_t bytes = 0;
    if (stateVec)
      bytes = stateProduct(f).vectorBytes();
    if (scanVec)
      bytes = std::max(bytes, scanProduct(f).vectorBytes());
    shared = f.k.sharedBuffer({bytes}, e.b.getI8Type());
  }
  if (stateVec && scanVec && p.state % scanDepth(p) == 0)
    it.sState = f.k.sharedBuffer({1, f.plan.pBlock, p.state + kResidentPad},
                                 mmaElementType(p));
  if (stateVec)
    chunkStateAndPassVector(f, it, shared);
  else
    chunkStateAndPass(f, it);
  chunkScan(f, it, scanVec ? shared : Value());
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
