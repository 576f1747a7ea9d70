//===- ChunkScan.cpp - the ssd_chunk_scan kernel ---------------------------===//
//
// y_i = exp(dA[i]) C_i s_c + sum_{j<=i} CB[i,j] exp(dA[i]-dA[j]) dt_j x_j
//       + D x_i, then z gating. Grid (Q/T, nc, b*h): a T x p tile of y per
// block (T = min(Q, 64)), computed by the ScanTile building block from
// prev_states. The segsum matrix is never read: decays come from
// dA_cumsum, staged with dt in shared memory per chunk.
//
//===----------------------------------------------------------------------===//
#include "KernelCommon.h"
#include "ScanTile.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

namespace {

/// Stages the chunk's dA_cumsum and dt, and the per-row scale of the state
/// term: exp(dA_i), zero for padding rows and (seq_idx) for tokens
/// of a sequence other than the one running at the chunk start.
void stageChunk(Emitter &e, const SSDProblem &p, KernelFunc &k, ScanTile &s,
                int64_t rows) {
  Type f32 = e.b.getF32Type();
  s.sDA = k.sharedBuffer({p.chunk}, f32);
  s.sDt = k.sharedBuffer({p.chunk}, f32);
  s.sScale = k.sharedBuffer({rows}, f32);
  Value dA = k.arg("dA_cumsum"), dt = k.arg("dt_out");
  e.forLoop(e.threadId(), e.idx(p.chunk), e.idx(256), [&](Value l) {
    e.store(e.loadF32(dA, {s.batch, s.head, s.c, l}), s.sDA, {l});
    e.store(e.loadF32(dt, {s.batch, s.head, s.c, l}), s.sDt, {l});
  });
  Value startId;
  if (k.has("seq_idx"))
    startId = e.load(k.arg("seq_idx"), {s.batch, tokenBefore(e, p, s.c)});
  e.forLoop(e.threadId(), e.idx(rows), e.idx(256), [&](Value row) {
    Value i = e.add(s.i0, row);
    Value inChunk = e.lt(i, s.r.len);
    Value iq = e.min(i, e.idx(p.chunk - 1));
    Value scale =
        e.decay(e.loadF32(dA, {s.batch, s.head, s.c, iq}));
    Value keep = inChunk;
    if (startId)
      keep = e.andi(keep, e.eq(e.load(k.arg("seq_idx"),
                                      {s.batch, tokenAt(e, s.r, i)}),
                               startId));
    e.store(e.select(keep, scale, e.f32(0.0)), s.sScale, {row});
  });
  e.barrier();
}

} // namespace

KernelInfo buildChunkScanKernel(ImplicitLocOpBuilder &b,
                                gpu::GPUModuleOp module, const SSDProblem &p) {
  int64_t rows = tileEdge(p.chunk), cols = roundUp(p.headDim, 16);
  KernelInfo info;
  info.name = "ssd_chunk_scan";
  info.grid = {std::to_string(p.chunk / rows), p.chunksExpr,
               p.batchExpr + " * " + std::to_string(p.heads)};
  info.params.push_back({"x", false});
  info.params.push_back({"dt_out", true});
  info.params.push_back({"dA_cumsum", true});
  info.params.push_back({"C", false});
  info.params.push_back({"CB", true});
  info.params.push_back({"prev_states", true});
  addParams(info, p, {"D", "z", "seq_idx", "cu_seqlens"}, false);
  info.params.push_back({"y", false});

  KernelFunc k = createKernel(b, module, p, info);
  Emitter e(b);
  TileMatmul mm(e, k, rows, cols, tileDepth(std::min(p.state, p.chunk)),
                mmaElementType(p));
  ScanTile s;
  Value bh = e.blockId(gpu::Dimension::z);
  s.batch = e.div(bh, e.idx(p.heads));
  s.head = e.rem(bh, e.idx(p.heads));
  s.group = e.div(s.head, e.idx(p.heads / p.groups));
  s.c = e.blockId(gpu::Dimension::y);
  s.i0 = e.mul(e.blockId(gpu::Dimension::x), rows);
  s.cols = p.headDim;
  s.r = blockChunk(e, p, k, s.c, k.arg("x"), k.arg("dA_cumsum"), 2);
  s.states = k.arg("prev_states");
  s.stateAt = [&](Value pp, Value n) -> SmallVector<Value> {
    return {s.batch, s.c, s.head, pp, n};
  };
  stageChunk(e, p, k, s, rows);
  loadHeadD(e, p, k, s);
  // 16-byte fills: rows of x, C and the states are whole vectors, the
  // tile covers p exactly and CB rows hold whole vectors.
  bool vectors = mm.usesMma() && cols == p.headDim &&
                 p.state % kVectorWidth == 0 && p.chunk % kVectorWidth == 0;
  ScanOperands o = scanOperands(e, p, k, s, vectors);
  SmallVector<Value> acc = mm.accumulate(mm.zero(), e.idx(0), e.idx(p.state),
                                         o.cScaled, o.state);
  Value jEnd = e.min(e.add(s.i0, e.idx(rows)), s.r.len);
  acc = mm.accumulate(acc, e.idx(0), jEnd, o.weights, o.xj);

  if (vectors) {
    mm.epilogueVector(acc, [&](Value row, Value col, Value v) {
      storeScanOutputVector(e, p, k, s, row, col, v);
    });
    return info;
  }
  mm.epilogue(acc, [&](Value row, Value col, Value v) {
    storeScanOutput(e, p, k, s, row, col, v);
  });
  return info;
}

} // namespace gpu_lowering
} // namespace ssd
