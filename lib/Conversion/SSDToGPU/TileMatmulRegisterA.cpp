//===- TileMatmulRegisterA.cpp - A fragments made in registers ------------===//
//
// An mma.sync A operand that needs a transform (a scale along k, or values
// computed from several inputs) goes to the tensor cores as register
// fragments instead of being staged: no 16-byte stores into a slice, no
// barrier per slice and no ldmatrix for it. Thread `lane` of a warp holds,
// in register r of the m16k16 fragment, rows g + 8 (r % 2) and k columns
// 2 t + 8 (r / 2) + {0, 1} (g = lane / 4, t = lane % 4): the layout ldmatrix
// produces, so the two kinds of fragment mix freely.
//
// A causal A that factors across 16-row blocks (TileOperand::BlockFactors)
// takes the k16 steps below a warp's rows as raw * column factor, two
// multiplies per element instead of its whole transform, then the row
// factors on the accumulators, then its one diagonal step as above.
//
//===----------------------------------------------------------------------===//
#include "TileMatmulParts.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

namespace {
/// This lane's first row and first k column in an m16k16 fragment.
struct FragmentLane {
  Value row, k;
};
FragmentLane fragmentLane(Emitter &e) {
  Value lane = e.laneId();
  return {e.div(lane, e.idx(4)), e.mul(e.rem(lane, e.idx(4)), 2)};
}
} // namespace

Value TileMatmul::computeFragmentA(const TileOperand &a, Value m0, Value kAbs,
                                   Value kEnd) {
  FragmentLane at = fragmentLane(e);
  auto fragType = VectorType::get({4, 2}, mmaType);
  auto pairType = VectorType::get({2}, mmaType);
  auto f32Pair = VectorType::get({2}, e.b.getF32Type());
  Value frag = arith::ConstantOp::create(
      e.b, fragType, DenseElementsAttr::get(fragType, e.b.getZeroAttr(mmaType)));
  Value zeros = arith::ConstantOp::create(
      e.b, f32Pair, DenseElementsAttr::get(f32Pair, e.b.getF32FloatAttr(0.0)));
  for (int64_t r = 0; r < 4; ++r) {
    Value row = e.add(e.add(m0, at.row), e.idx(8 * (r % 2)));
    Value k = e.add(e.add(kAbs, at.k), e.idx(8 * (r / 2)));
    Value pair = a.fragmentPair(k, row);
    // Elements at k >= kEnd are zero, as a staged slice's are.
    SmallVector<Value> in = {e.lt(k, kEnd), e.lt(e.add(k, e.idx(1)), kEnd)};
    Value mask = vector::FromElementsOp::create(
        e.b, VectorType::get({2}, e.b.getI1Type()), in);
    pair = arith::SelectOp::create(e.b, mask, pair, zeros);
    Value narrow = arith::TruncFOp::create(e.b, pairType, pair);
    frag = vector::InsertOp::create(e.b, narrow, frag, ArrayRef<int64_t>{r});
  }
  return frag;
}

Value TileMatmul::blockFactoredFragmentA(const TileOperand &a, Value m0,
                                         Value kAbs, Value b) {
  const TileOperand::BlockFactors &f = *a.blockFactors;
  FragmentLane at = fragmentLane(e);
  auto fragType = VectorType::get({4, 2}, mmaType);
  auto pairType = VectorType::get({2}, mmaType);
  Value frag = arith::ConstantOp::create(
      e.b, fragType,
      DenseElementsAttr::get(fragType, e.b.getZeroAttr(mmaType)));
  // Registers r and r + 1 share their k columns: one column factor each.
  Value k0 = e.add(kAbs, at.k);
  Value columns[2] = {f.column(k0, b), f.column(e.add(k0, e.idx(8)), b)};
  for (int64_t r = 0; r < 4; ++r) {
    Value row = e.add(e.add(m0, at.row), e.idx(8 * (r % 2)));
    Value k = r / 2 ? e.add(k0, e.idx(8)) : k0;
    Value pair = e.mulf(f.raw(k, row), columns[r / 2]);
    frag = vector::InsertOp::create(
        e.b, arith::TruncFOp::create(e.b, pairType, pair), frag,
        ArrayRef<int64_t>{r});
  }
  return frag;
}

SmallVector<Value> TileMatmul::accumulateBlockFactored(ValueRange acc,
                                                       Value kBegin, Value kEnd,
                                                       const TileOperand &a,
                                                       Value viewB, bool bTrans,
                                                       SliceAt bAt) {
  const TileOperand::BlockFactors &f = *a.blockFactors;
  Value warp = e.div(e.threadId(), e.idx(32));
  Value m0 = e.mul(e.rem(warp, e.idx(warpsM)), 16);
  // The warp's block in k's terms, and the end of its diagonal step.
  Value block = e.add(m0, a.diagonal);
  Value step16 = e.idx(16);
  Value kDown = e.mul(e.div(kEnd, step16), 16);
  Value kUp = e.mul(e.div(e.add(kEnd, e.idx(15)), step16), 16);
  Value kStop = e.min(e.add(block, step16), kUp);
  // Steps wholly below the block and before kEnd (no element to mask) go
  // factored; the rest from fragmentPair, masked.
  Value belowEnd =
      e.select(f.enabled, e.max(kBegin, e.min(block, kDown)), kBegin);
  auto loadB = fragmentsB(viewB, bTrans, bAt);
  auto run = [&](ValueRange from, Value lb, Value ub, auto fragmentAt) {
    return e.forLoop(lb, ub, step16, from,
                     [&](Value k, ValueRange cur) -> SmallVector<Value> {
                       Value frag = fragmentAt(k);
                       return mmaFragments(cur, {frag}, loadB(k));
                     });
  };
  // Two factored steps an iteration, both fragments before the products,
  // so that the second step's loads overlap the first's.
  Value pairsEnd = e.sub(belowEnd, e.rem(e.sub(belowEnd, kBegin), e.idx(32)));
  SmallVector<Value> out =
      e.forLoop(kBegin, pairsEnd, e.idx(32), acc,
                [&](Value k, ValueRange cur) -> SmallVector<Value> {
                  Value k1 = e.add(k, step16);
                  Value f0 = blockFactoredFragmentA(a, m0, k, block);
                  Value f1 = blockFactoredFragmentA(a, m0, k1, block);
                  SmallVector<Value> next = mmaFragments(cur, {f0}, loadB(k));
                  return mmaFragments(next, {f1}, loadB(k1));
                });
  out = run(out, pairsEnd, belowEnd,
            [&](Value k) { return blockFactoredFragmentA(a, m0, k, block); });
  out = scaleRows(out, [&](Value row) {
    return e.select(f.enabled, f.row(row), e.f32(1.0));
  });
  return run(out, belowEnd, kStop,
             [&](Value k) { return computeFragmentA(a, m0, k, kEnd); });
}

Value TileMatmul::scaleFragmentA(const TileOperand &a, Value frag,
                                 Value kAbs) {
  FragmentLane at = fragmentLane(e);
  auto pairType = VectorType::get({2}, mmaType);
  auto f32Pair = VectorType::get({2}, e.b.getF32Type());
  Value k = e.add(kAbs, at.k);
  Value scales[2] = {a.kScalePair(k), a.kScalePair(e.add(k, e.idx(8)))};
  for (int64_t r = 0; r < 4; ++r) {
    Value pair = vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
    Value wide = arith::ExtFOp::create(e.b, f32Pair, pair);
    Value scaled = e.mulf(wide, scales[r / 2]);
    frag = vector::InsertOp::create(
        e.b, arith::TruncFOp::create(e.b, pairType, scaled), frag,
        ArrayRef<int64_t>{r});
  }
  return frag;
}

} // namespace gpu_lowering
} // namespace ssd
