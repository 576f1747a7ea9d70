//===- ScanTile.cpp - one tile of chunk-scan output -----------------------===//
#include "ScanTile.h"
#include "KernelCommon.h"
#include "TmaCopy.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

namespace {
/// The absolute headdim column of tile column `col`.
Value absoluteColumn(Emitter &e, const ScanTile &s, Value col) {
  return s.p0 ? e.add(s.p0, col) : col;
}
} // namespace

/// CB[i,j] exp(dA_i - dA_j) dt_j on j <= i for the consecutive j.. of `raw`
/// (CB's row i = i0 + row): one exp per element (a factored
/// exp(dA_i) exp(-dA_j) can overflow; causalBlockFactors factors it only
/// within a chunk that decays, and only below a 16-row block). The staged and
/// the register weights share it, so they round alike; both feed the tensor
/// cores, which take the weights in 16 bits, so the exp is the fast one.
static Value weightsOfCB(Emitter &e, const SSDProblem &p, const ScanTile &s,
                         Value raw, Value j, Value row) {
  int64_t width = cast<VectorType>(raw.getType()).getNumElements();
  Value i = e.add(s.i0, row);
  Value dAi = e.load(s.sDA, {e.min(i, e.idx(p.chunk - 1))});
  Value dAj = e.loadVector(s.sDA, {j}, width);
  Value dtj = e.loadVector(s.sDt, {j}, width);
  return e.mapF32(raw, [&](Value v, int64_t t) {
    Value at = vector::ExtractOp::create(e.b, dAj, ArrayRef<int64_t>{t});
    Value w = e.mulf(e.mulf(v, e.expRoundedTo16Bits(e.subf(dAi, at))),
                     vector::ExtractOp::create(e.b, dtj, ArrayRef<int64_t>{t}));
    return e.select(e.le(e.add(j, e.idx(t)), i), w, e.f32(0.0));
  });
}

ScanOperands scanOperands(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                          const ScanTile &s, bool vectors) {
  Value cMat = k.arg("C"), cb = k.arg("CB"), x = k.arg("x");
  // Columns past the tile's valid ones read its last column and are zeroed.
  auto colIn = [&s, &e](Value col) { return e.lt(col, e.idx(s.cols)); };
  auto colClamped = [&s, &e](Value col) {
    return absoluteColumn(e, s, e.min(col, e.idx(s.cols - 1)));
  };

  ScanOperands o;
  o.cScaled = {[&s, &e, cMat](Value n, Value row) {
                 Value i = e.add(s.i0, row);
                 Value v = e.loadF32(
                     cMat, {s.batch, tokenAt(e, s.r, i), s.group, n});
                 return e.mulf(v, e.load(s.sScale, {row}));
               },
               /*kContiguous=*/true};
  o.state = {[&s, &e, colIn, colClamped](Value n, Value col) {
               Value v = e.loadF32(s.states, s.stateAt(colClamped(col), n));
               return e.select(colIn(col), v, e.f32(0.0));
             },
             /*kContiguous=*/true};
  o.weights = {[&s, &e, &p, cb](Value j, Value row) {
                 Value i = e.add(s.i0, row);
                 Value iq = e.min(i, e.idx(p.chunk - 1));
                 Value v = e.loadF32(cb, {s.batch, s.c, s.group, iq, j});
                 Value decay = e.decay(
                     e.subf(e.load(s.sDA, {iq}), e.load(s.sDA, {j})));
                 v = e.mulf(e.mulf(v, decay), e.load(s.sDt, {j}));
                 return e.select(e.le(j, i), v, e.f32(0.0));
               },
               /*kContiguous=*/true};
  o.xj = {[&s, &e, x, colIn, colClamped](Value j, Value col) {
            Value v =
                e.loadF32(x, {s.batch, tokenAt(e, s.r, j), s.head,
                              colClamped(col)});
            return e.select(colIn(col), v, e.f32(0.0));
          },
          /*kContiguous=*/false};
  if (!vectors)
    return o;

  o.cScaled.loadVector = [&s, &e, cMat](Value n, Value row) {
    Value i = e.add(s.i0, row);
    return e.loadVector(cMat, {s.batch, tokenAt(e, s.r, i), s.group, n},
                        kVectorWidth);
  };
  o.cScaled.convertVector = [&s, &e](Value raw, Value, Value row) {
    return e.mulf(e.toF32Vector(raw),
                  e.splat(e.load(s.sScale, {row}), kVectorWidth));
  };
  o.state.loadVector = [&s, &e](Value n, Value col) {
    return e.loadVector(s.states, s.stateAt(absoluteColumn(e, s, col), n),
                        kVectorWidth);
  };
  o.weights.loadVector = [&s, &e, &p, cb](Value j, Value row) {
    Value iq = e.min(e.add(s.i0, row), e.idx(p.chunk - 1));
    return e.loadVector(cb, {s.batch, s.c, s.group, iq, j}, kVectorWidth);
  };
  o.weights.convertVector = [&s, &e, &p](Value raw, Value j, Value row) {
    return weightsOfCB(e, p, s, raw, j, row);
  };
  o.xj.loadVector = [&s, &e, x](Value j, Value col) {
    return e.loadVector(x,
                        {s.batch, tokenAt(e, s.r, j), s.head,
                         absoluteColumn(e, s, col)},
                        kVectorWidth);
  };
  return o;
}

/// CB[i, j], CB[i, j + 1] of tile row `row` (i = i0 + row, clamped into
/// the chunk), raw.
static Value cbPair(Emitter &e, const SSDProblem &p, const ScanTile &s,
                    Value cb, Value j, Value row) {
  Value iq = e.min(e.add(s.i0, row), e.idx(p.chunk - 1));
  return e.loadVector(cb, {s.batch, s.c, s.group, iq, j}, 2);
}

std::function<Value(Value, Value)> weightPairs(Emitter &e,
                                               const SSDProblem &p,
                                               const KernelFunc &k,
                                               const ScanTile &s) {
  Value cb = k.arg("CB");
  return [&e, &p, &s, cb](Value j, Value row) {
    return weightsOfCB(e, p, s, cbPair(e, p, s, cb, j, row), j, row);
  };
}

Value decaysNonIncreasing(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                          const ScanTile &s) {
  // dA is the cumsum of A dt over the chunk: A dt <= 0 for every token in
  // range keeps it non-increasing, up to the cumsum's rounding.
  Value a = e.loadF32(k.arg("A"), {s.head});
  Value lane = e.laneId(), all = e.i1(true);
  for (int64_t t0 = 0; t0 < p.chunk; t0 += 32) {
    Value t = e.add(lane, e.idx(t0));
    Value tq = e.min(t, e.idx(p.chunk - 1));
    Value decays =
        arith::CmpFOp::create(e.b, arith::CmpFPredicate::OLE,
                              e.mulf(a, e.load(s.sDt, {tq})), e.f32(0.0));
    all = e.andi(all, e.ori(e.le(s.r.len, t), decays));
  }
  return e.warpAll(all);
}

/// The chunk row of row `row`'s 16-row block start.
static Value blockStart(Emitter &e, const SSDProblem &p, const ScanTile &s,
                        Value row) {
  Value b = e.add(s.i0, e.mul(e.div(row, e.idx(16)), 16));
  return e.min(b, e.idx(p.chunk - 1));
}

Value stateDecayRow(Emitter &e, const SSDProblem &p, const ScanTile &s,
                    Value row) {
  Value i = e.min(e.add(s.i0, row), e.idx(p.chunk - 1));
  if (!s.blockFactored)
    return i;
  return e.select(s.blockFactored, blockStart(e, p, s, row), i);
}

TileOperand::BlockFactors causalBlockFactors(Emitter &e, const SSDProblem &p,
                                             const KernelFunc &k,
                                             const ScanTile &s) {
  assert(s.blockFactored && "the tile's factored form is enabled at run time");
  Value cb = k.arg("CB");
  TileOperand::BlockFactors f;
  f.enabled = s.blockFactored;
  f.raw = [&e, &p, &s, cb](Value j, Value row) {
    return e.toF32Vector(cbPair(e, p, s, cb, j, row));
  };
  // exp(dA_b - dA_j) dt_j: at most dt_j below the block (j < b).
  f.column = [&e, &p, &s](Value j, Value b) {
    Value dAb = e.load(s.sDA, {e.min(b, e.idx(p.chunk - 1))});
    Value dAj = e.loadVector(s.sDA, {j}, 2);
    Value dtj = e.loadVector(s.sDt, {j}, 2);
    return e.mapF32(dAj, [&](Value at, int64_t t) {
      Value dt = vector::ExtractOp::create(e.b, dtj, ArrayRef<int64_t>{t});
      return e.mulf(e.expRoundedTo16Bits(e.subf(dAb, at)), dt);
    });
  };
  // exp(dA_i - dA_b), on the f32 accumulators: the accurate exp.
  f.row = [&e, &p, &s](Value row) {
    Value i = e.min(e.add(s.i0, row), e.idx(p.chunk - 1));
    return e.decay(
        e.subf(e.load(s.sDA, {i}), e.load(s.sDA, {blockStart(e, p, s, row)})));
  };
  return f;
}

/// z * sigmoid(z) = z / (1 + exp(-z)).
static Value gate(Emitter &e, Value z) {
  return e.divf(z, e.addf(e.f32(1.0), e.exp(e.subf(e.f32(0.0), z))));
}

void loadHeadD(Emitter &e, const SSDProblem &p, const KernelFunc &k,
               ScanTile &s) {
  if (k.has("D") && !p.perChannelD)
    s.dHead = e.loadF32(k.arg("D"), {s.head});
}

/// D at column pp of the tile's head: an f32, or with `width` > 0 a
/// vector<width x f32> of columns pp.. (per-channel D) or of the head's D.
static Value dAt(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                 const ScanTile &s, Value pp, int64_t width = 0) {
  if (p.perChannelD)
    return width ? e.toF32Vector(e.loadVector(k.arg("D"), {s.head, pp}, width))
                 : e.loadF32(k.arg("D"), {s.head, pp});
  Value d = s.dHead ? s.dHead : e.loadF32(k.arg("D"), {s.head});
  return width ? e.splat(d, width) : d;
}

void storeScanOutput(Emitter &e, const SSDProblem &p, const KernelFunc &k,
                     const ScanTile &s, Value row, Value col, Value v) {
  Value i = e.add(s.i0, row);
  e.ifThen(e.andi(e.lt(i, s.r.len), e.lt(col, e.idx(s.cols))), [&] {
    Value pp = absoluteColumn(e, s, col);
    Value t = e.add(s.r.start, i);
    SmallVector<Value> at = {s.batch, t, s.head, pp};
    if (k.has("D")) {
      v = e.fma(dAt(e, p, k, s, pp), e.loadF32(k.arg("x"), at), v);
    }
    if (k.has("z"))
      v = e.mulf(v, gate(e, e.loadF32(k.arg("z"), at)));
    e.store(v, k.arg("y"), at);
  });
}

void storeScanOutputVector(Emitter &e, const SSDProblem &p,
                           const KernelFunc &k, const ScanTile &s, Value row,
                           Value col, Value v) {
  Value i = e.add(s.i0, row);
  int64_t width = cast<VectorType>(v.getType()).getNumElements();
  e.ifThen(e.lt(i, s.r.len), [&] {
    Value pp = absoluteColumn(e, s, col);
    Value t = e.add(s.r.start, i);
    SmallVector<Value> at = {s.batch, t, s.head, pp};
    if (k.has("D")) {
      Value xv;
      if (!s.xRows)
        xv = e.loadVector(k.arg("x"), at, width);
      else if (s.xRowsSwizzled)
        xv = e.loadVector(s.xRows, swizzled128At(e, i, col), width);
      else
        xv = e.loadVector(s.xRows, {e.idx(0), i, col}, width);
      Value x = e.toF32Vector(xv);
      v = math::FmaOp::create(e.b, dAt(e, p, k, s, pp, width), x, v);
    }
    if (k.has("z")) {
      Value z = e.loadVector(k.arg("z"), at, width);
      v = e.mulf(v, e.mapF32(z, [&](Value zt, int64_t) { return gate(e, zt); }));
    }
    e.storeVector(v, k.arg("y"), at);
  });
}

} // namespace gpu_lowering
} // namespace ssd
