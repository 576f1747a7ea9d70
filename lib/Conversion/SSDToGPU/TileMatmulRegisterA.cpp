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
