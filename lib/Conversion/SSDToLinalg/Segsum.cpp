//===- Segsum.cpp - ssd.segsum to linalg ----------------------------------===//
//
// segsum[b,h,c,i,j] = dA_cumsum[i] - dA_cumsum[j] for i >= j, -inf above the
// diagonal: one elementwise linalg.generic reading dA_cumsum twice through
// two projections of the loop space.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include <limits>

using namespace mlir;

namespace ssd {
namespace lowering {
namespace {

struct LowerSegsum : OpConversionPattern<SegsumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SegsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value da = adaptor.getDACumsum();
    auto daType = cast<RankedTensorType>(da.getType());
    int64_t q = daType.getDimSize(3);
    SmallVector<OpFoldResult> shape;
    for (int64_t i = 0; i < 4; ++i)
      shape.push_back(dimFold(rewriter, loc, da, i));
    shape.push_back(rewriter.getIndexAttr(q));
    Type f32 = rewriter.getF32Type();
    Value init = emptyTensor(rewriter, loc, shape, f32);
    Value segsum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{init.getType()}, ValueRange{da, da},
            ValueRange{init},
            ArrayRef<AffineMap>{projectedMap(ctx, 5, {0, 1, 2, 3}),
                                projectedMap(ctx, 5, {0, 1, 2, 4}),
                                rewriter.getMultiDimIdentityMap(5)},
            iterators(5),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value i = linalg::IndexOp::create(b, l, 3);
              Value j = linalg::IndexOp::create(b, l, 4);
              Value causal =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, i, j);
              Value diff = arith::SubFOp::create(b, l, args[0], args[1]);
              Value negInf =
                  f32Const(b, l, -std::numeric_limits<double>::infinity());
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, causal, diff, negInf)
                      .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op,
                       castTo(rewriter, loc, segsum, op.getSegsum().getType()));
    return success();
  }
};

} // namespace

void populateSegsumPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerSegsum>(patterns.getContext());
}

} // namespace lowering
} // namespace ssd
