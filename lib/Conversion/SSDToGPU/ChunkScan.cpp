//===- ChunkScan.cpp - the ssd_chunk_scan kernel ---------------------------===//
//
// y_i = exp(dA[i]) C_i s_c + sum_{j<=i} CB[i,j] exp(dA[i]-dA[j]) dt_j x_j
//       + D x_i, then z gating. Grid (Q/T, nc, b*h): a T x p tile of y per
// block (T = min(Q, 64)), one accumulator fed by two tile products:
//   1. inter-chunk: A(k=n, i) = C[i, n] * scale_i,  B(k=n, col) = s_c[col, n]
//   2. intra-chunk: A(k=j, i) = CB[i,j] exp(min(dA_i - dA_j, 0)) dt_j on
//      j <= i, B(k=j, col) = x[j, col], over j < min(i0 + T, len)
// The segsum matrix is never read: decays come from dA_cumsum, staged with
// dt in shared memory per chunk. The epilogue adds D x, applies z and stores
// valid tokens only.
//
//===----------------------------------------------------------------------===//
#include "KernelCommon.h"
#include "TileMatmul.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

namespace {

struct ScanBlock {
  Value batch, head, group, c, i0;
  ChunkRange r;
  Value sDA, sDt, sScale; // shared: dA[Q], dt[Q], scale[T]
};

/// Stages the chunk's dA_cumsum and dt, and the per-row scale of the state
/// term: exp(min(dA_i, 0)), zero for padding rows and (seq_idx) for tokens
/// of a sequence other than the one running at the chunk start.
void stageChunk(Emitter &e, const SSDProblem &p, KernelFunc &k, ScanBlock &s,
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

/// y = acc + D x, gated by z, for the valid tokens of the tile.
void storeOutput(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                 const ScanBlock &s, Value row, Value col, Value v) {
  Value i = e.add(s.i0, row);
  e.ifThen(e.andi(e.lt(i, s.r.len), e.lt(col, e.idx(p.headDim))), [&] {
    Value t = e.add(s.r.start, i);
    SmallVector<Value> at = {s.batch, t, s.head, col};
    if (k.has("D")) {
      Value d = p.perChannelD ? e.loadF32(k.arg("D"), {s.head, col})
                              : e.loadF32(k.arg("D"), {s.head});
      v = e.fma(d, e.loadF32(k.arg("x"), at), v);
    }
    if (k.has("z")) {
      // z * sigmoid(z) = z / (1 + exp(-z)).
      Value z = e.loadF32(k.arg("z"), at);
      Value gate = e.divf(z, e.addf(e.f32(1.0), e.exp(e.subf(e.f32(0.0), z))));
      v = e.mulf(v, gate);
    }
    e.store(v, k.arg("y"), at);
  });
}

/// As storeOutput for columns col..col+7 of one row (v a vector<8xf32>):
/// 16-byte loads of x and z, one 16-byte store of y.
void storeOutputVector(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                       const ScanBlock &s, Value row, Value col, Value v) {
  Value i = e.add(s.i0, row);
  e.ifThen(e.lt(i, s.r.len), [&] {
    Value t = e.add(s.r.start, i);
    SmallVector<Value> at = {s.batch, t, s.head, col};
    if (k.has("D")) {
      Value x = e.toF32Vector(e.loadVector(k.arg("x"), at, kVectorWidth));
      Value d = p.perChannelD
                    ? e.loadVector(k.arg("D"), {s.head, col}, kVectorWidth)
                    : e.splat(e.loadF32(k.arg("D"), {s.head}), kVectorWidth);
      v = math::FmaOp::create(e.b, d, x, v);
    }
    if (k.has("z")) {
      Value z = e.loadVector(k.arg("z"), at, kVectorWidth);
      Value gate = e.mapF32(z, [&](Value zt, int64_t) {
        return e.divf(zt, e.addf(e.f32(1.0), e.exp(e.subf(e.f32(0.0), zt))));
      });
      v = e.mulf(v, gate);
    }
    e.storeVector(v, k.arg("y"), at);
  });
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
  ScanBlock s;
  Value bh = e.blockId(gpu::Dimension::z);
  s.batch = e.div(bh, e.idx(p.heads));
  s.head = e.rem(bh, e.idx(p.heads));
  s.group = e.div(s.head, e.idx(p.heads / p.groups));
  s.c = e.blockId(gpu::Dimension::y);
  s.i0 = e.mul(e.blockId(gpu::Dimension::x), rows);
  s.r = blockChunk(e, p, k, s.c, k.arg("x"), k.arg("dA_cumsum"), 2);
  stageChunk(e, p, k, s, rows);
  Value cMat = k.arg("C"), states = k.arg("prev_states"), cb = k.arg("CB");
  Value x = k.arg("x");
  auto colIn = [&](Value col) { return e.lt(col, e.idx(p.headDim)); };
  auto colClamp = [&](Value col) {
    return e.min(col, e.idx(p.headDim - 1));
  };

  // 1. Inter-chunk term.
  TileOperand cScaled{[&](Value n, Value row) {
                        Value i = e.add(s.i0, row);
                        Value v = e.loadF32(
                            cMat, {s.batch, tokenAt(e, s.r, i), s.group, n});
                        return e.mulf(v, e.load(s.sScale, {row}));
                      },
                      /*kContiguous=*/true};
  TileOperand state{[&](Value n, Value col) {
                      Value v = e.loadF32(states, {s.batch, s.c, s.head,
                                                   colClamp(col), n});
                      return e.select(colIn(col), v, e.f32(0.0));
                    },
                    /*kContiguous=*/true};

  // 2. Intra-chunk term, causal: j < min(i0 + T, len).
  TileOperand weights{[&](Value j, Value row) {
                        Value i = e.add(s.i0, row);
                        Value iq = e.min(i, e.idx(p.chunk - 1));
                        Value v = e.loadF32(cb, {s.batch, s.c, s.group, iq, j});
                        Value decay = e.decay(e.subf(e.load(s.sDA, {iq}),
                                                     e.load(s.sDA, {j})));
                        v = e.mulf(e.mulf(v, decay), e.load(s.sDt, {j}));
                        return e.select(e.le(j, i), v, e.f32(0.0));
                      },
                      /*kContiguous=*/true};
  TileOperand xj{[&](Value j, Value col) {
                   Value v = e.loadF32(
                       x, {s.batch, tokenAt(e, s.r, j), s.head, colClamp(col)});
                   return e.select(colIn(col), v, e.f32(0.0));
                 },
                 /*kContiguous=*/false};
  // 16-byte fills: rows of x, C and the states are whole vectors, the
  // tile covers p exactly and CB rows hold whole vectors.
  bool vectors = mm.usesMma() && cols == p.headDim &&
                 p.state % kVectorWidth == 0 && p.chunk % kVectorWidth == 0;
  if (vectors) {
    cScaled.loadVector = [&](Value n, Value row) {
      Value i = e.add(s.i0, row);
      return e.loadVector(cMat, {s.batch, tokenAt(e, s.r, i), s.group, n},
                          kVectorWidth);
    };
    cScaled.convertVector = [&](Value raw, Value, Value row) {
      return e.mulf(e.toF32Vector(raw),
                    e.splat(e.load(s.sScale, {row}), kVectorWidth));
    };
    state.loadVector = [&](Value n, Value col) {
      return e.loadVector(states, {s.batch, s.c, s.head, col, n},
                          kVectorWidth);
    };
    weights.loadVector = [&](Value j, Value row) {
      Value iq = e.min(e.add(s.i0, row), e.idx(p.chunk - 1));
      return e.loadVector(cb, {s.batch, s.c, s.group, iq, j}, kVectorWidth);
    };
    // CB[i,j] exp(min(dA_i - dA_j, 0)) dt_j on j <= i: one exp per
    // element (a factored exp(dA_i) exp(-dA_j) can overflow).
    weights.convertVector = [&](Value raw, Value j, Value row) {
      Value i = e.add(s.i0, row);
      Value dAi = e.load(s.sDA, {e.min(i, e.idx(p.chunk - 1))});
      Value dAj = e.loadVector(s.sDA, {j}, kVectorWidth);
      Value dtj = e.loadVector(s.sDt, {j}, kVectorWidth);
      return e.mapF32(raw, [&](Value v, int64_t t) {
        Value at = vector::ExtractOp::create(e.b, dAj, ArrayRef<int64_t>{t});
        Value w = e.mulf(e.mulf(v, e.decay(e.subf(dAi, at))),
                         vector::ExtractOp::create(e.b, dtj,
                                                   ArrayRef<int64_t>{t}));
        return e.select(e.le(e.add(j, e.idx(t)), i), w, e.f32(0.0));
      });
    };
    xj.loadVector = [&](Value j, Value col) {
      return e.loadVector(x, {s.batch, tokenAt(e, s.r, j), s.head, col},
                          kVectorWidth);
    };
  }
  SmallVector<Value> acc =
      mm.accumulate(mm.zero(), e.idx(0), e.idx(p.state), cScaled, state);
  Value jEnd = e.min(e.add(s.i0, e.idx(rows)), s.r.len);
  acc = mm.accumulate(acc, e.idx(0), jEnd, weights, xj);

  if (vectors) {
    mm.epilogueVector(acc, [&](Value row, Value col, Value v) {
      storeOutputVector(e, p, k, s, row, col, v);
    });
    return info;
  }
  mm.epilogue(acc, [&](Value row, Value col, Value v) {
    storeOutput(e, p, k, s, row, col, v);
  });
  return info;
}

} // namespace gpu_lowering
} // namespace ssd
