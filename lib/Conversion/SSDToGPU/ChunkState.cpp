//===- ChunkState.cpp - the ssd_chunk_state kernel -------------------------===//
//
// states[b,c,h] (p x n) = sum_l (x_l w_l) B_l^T over the chunk's tokens, with
// w_l = exp(dA[Q-1] - dA[l]) dt_l (zero for tokens of an earlier
// sequence with seq_idx). Grid (p-tiles * n-tiles, nc, b*h); the block first
// stages w for the whole chunk in shared memory, then runs the tile product
// with k = token.
//
//===----------------------------------------------------------------------===//
#include "KernelCommon.h"
#include "TileMatmul.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

/// Shared w[Q]: the weight of every position of the chunk (0 on padding).
static Value stageTokenWeights(Emitter &e, const SSDProblem &p, KernelFunc &k,
                               const ChunkRange &r, Value batch, Value head,
                               Value c) {
  Value w = k.sharedBuffer({p.chunk}, e.b.getF32Type());
  Value dA = k.arg("dA_cumsum"), dt = k.arg("dt_out");
  Value last = e.loadF32(dA, {batch, head, c, e.idx(p.chunk - 1)});
  Value lastId;
  if (k.has("seq_idx"))
    lastId = e.load(k.arg("seq_idx"),
                    {batch, lastTokenOf(e, p, c, e.dim(k.arg("x"), 1))});
  e.forLoop(e.threadId(), e.idx(p.chunk), e.idx(256), [&](Value l) {
    Value v = e.mulf(e.decay(e.subf(last, e.loadF32(dA, {batch, head, c, l}))),
                     e.loadF32(dt, {batch, head, c, l}));
    Value keep = e.lt(l, r.len);
    if (lastId)
      keep = e.andi(keep, e.eq(e.load(k.arg("seq_idx"),
                                      {batch, tokenAt(e, r, l)}),
                               lastId));
    e.store(e.select(keep, v, e.f32(0.0)), w, {l});
  });
  e.barrier();
  return w;
}

KernelInfo buildChunkStateKernel(ImplicitLocOpBuilder &b,
                                 gpu::GPUModuleOp module,
                                 const SSDProblem &p) {
  int64_t tileP = tileEdge(p.headDim), tileN = tileEdge(p.state);
  // Tensor cores with 16-byte fills: one block covers all of n (up to
  // 128) so that x is read once per chunk and head.
  bool vectors = mmaElementType(p) && p.headDim % tileP == 0 &&
                 p.state % kVectorWidth == 0 && p.state <= 128 &&
                 TileMatmul::mmaFits(tileP, roundUp(p.state, 16),
                                     tileDepth(p.chunk));
  vectors = vectors && roundUp(p.state, 16) == p.state;
  if (vectors)
    tileN = p.state;
  int64_t tilesP = (p.headDim + tileP - 1) / tileP;
  int64_t tilesN = (p.state + tileN - 1) / tileN;
  KernelInfo info;
  info.name = "ssd_chunk_state";
  info.grid = {std::to_string(tilesP * tilesN), p.chunksExpr,
               p.batchExpr + " * " + std::to_string(p.heads)};
  addParams(info, p, {"x", "B"}, false);
  info.params.push_back({"dt_out", true});
  info.params.push_back({"dA_cumsum", true});
  addParams(info, p, {"seq_idx", "cu_seqlens"}, false);
  info.params.push_back({"states", true});

  KernelFunc k = createKernel(b, module, p, info);
  Emitter e(b);
  Value x = k.arg("x"), bMat = k.arg("B"), states = k.arg("states");
  TileMatmul mm(e, k, tileP, tileN, tileDepth(p.chunk), mmaElementType(p));
  Value tile = e.blockId(gpu::Dimension::x);
  Value c = e.blockId(gpu::Dimension::y);
  Value bh = e.blockId(gpu::Dimension::z);
  Value batch = e.div(bh, e.idx(p.heads)), head = e.rem(bh, e.idx(p.heads));
  Value group = e.div(head, e.idx(p.heads / p.groups));
  Value p0 = e.mul(e.div(tile, e.idx(tilesN)), tileP);
  Value n0 = e.mul(e.rem(tile, e.idx(tilesN)), tileN);
  ChunkRange r = blockChunk(e, p, k, c, x, k.arg("dA_cumsum"), 2);
  Value w = stageTokenWeights(e, p, k, r, batch, head, c);

  // A(l, pp) = x[l, p0+pp] w[l];  B(l, nn) = B[l, n0+nn].
  TileOperand xw{[&](Value l, Value row) {
                   Value col = e.add(p0, row);
                   Value in = e.lt(col, e.idx(p.headDim));
                   Value v = e.loadF32(x, {batch, tokenAt(e, r, l), head,
                                           e.min(col, e.idx(p.headDim - 1))});
                   v = e.mulf(v, e.load(w, {l}));
                   return e.select(in, v, e.f32(0.0));
                 },
                 /*kContiguous=*/false};
  TileOperand bl{[&](Value l, Value row) {
                   Value col = e.add(n0, row);
                   Value in = e.lt(col, e.idx(p.state));
                   Value v = e.loadF32(bMat, {batch, tokenAt(e, r, l), group,
                                              e.min(col, e.idx(p.state - 1))});
                   return e.select(in, v, e.f32(0.0));
                 },
                 /*kContiguous=*/false};
  if (vectors) {
    xw.loadVector = [&](Value l, Value row) {
      return e.loadVector(x, {batch, tokenAt(e, r, l), head, e.add(p0, row)},
                          kVectorWidth);
    };
    xw.convertVector = [&](Value raw, Value l, Value) {
      return e.mulf(e.toF32Vector(raw),
                    e.splat(e.load(w, {l}), kVectorWidth));
    };
    bl.loadVector = [&](Value l, Value row) {
      return e.loadVector(bMat,
                          {batch, tokenAt(e, r, l), group, e.add(n0, row)},
                          kVectorWidth);
    };
  }
  SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), r.len, xw, bl);
  if (vectors) {
    mm.epilogueVector(acc, [&](Value row, Value col, Value v) {
      e.storeVector(v, states, {batch, c, head, e.add(p0, row), e.add(n0, col)});
    });
    return info;
  }
  mm.epilogue(acc, [&](Value row, Value col, Value v) {
    Value pp = e.add(p0, row), nn = e.add(n0, col);
    e.ifThen(e.andi(e.lt(pp, e.idx(p.headDim)), e.lt(nn, e.idx(p.state))),
             [&] { e.store(v, states, {batch, c, head, pp, nn}); });
  });
  return info;
}

} // namespace gpu_lowering
} // namespace ssd
