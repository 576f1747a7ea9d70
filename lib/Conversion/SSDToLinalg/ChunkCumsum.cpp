//===- ChunkCumsum.cpp - ssd.chunk_cumsum to linalg -----------------------===//
//
// dt_out = clamp(softplus?(dt + dt_bias)) on real tokens, 0 on padding, in
// chunk-major layout (b,h,nc,Q); dA_cumsum = the within-chunk inclusive
// cumulative sum of A*dt_out, written as a masked reduction over positions
// j <= i (Q^2 per chunk, negligible next to the matrix products, and it keeps
// everything in plain linalg).
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include <cmath>

using namespace mlir;

namespace ssd {
namespace lowering {
namespace {

/// The dt processing of one token: bias, softplus (identity above 20, where
/// log1p(exp(x)) == x in f32 anyway and exp would overflow), clamp.
Value processDt(OpBuilder &b, Location loc, Value dt, Value bias, bool softplus,
                std::pair<double, double> limit) {
  if (bias)
    dt = arith::AddFOp::create(b, loc, dt, bias);
  if (softplus) {
    Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, dt,
                                      f32Const(b, loc, 20.0));
    Value soft = math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, dt));
    dt = arith::SelectOp::create(b, loc, big, dt, soft);
  }
  dt = arith::MaximumFOp::create(b, loc, dt, f32Const(b, loc, limit.first));
  if (std::isfinite(limit.second))
    dt = arith::MinimumFOp::create(b, loc, dt, f32Const(b, loc, limit.second));
  return dt;
}

struct LowerChunkCumsum : OpConversionPattern<ChunkCumsumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ChunkCumsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto outType = cast<RankedTensorType>(op.getDtOut().getType());
    int64_t q = outType.getDimSize(3);
    Value dt = adaptor.getDt(), a = adaptor.getA(), bias = adaptor.getDtBias();
    Value seqLen = dimValue(rewriter, loc, dt, 1);
    Value nc = numChunksFor(rewriter, loc, outType, 2, seqLen, q,
                            adaptor.getCuSeqlens());
    ChunkMap map =
        ChunkMap::build(rewriter, loc, seqLen, nc, q, adaptor.getCuSeqlens());
    Type f32 = rewriter.getF32Type();
    SmallVector<OpFoldResult> shape = {
        dimFold(rewriter, loc, dt, 0),
        rewriter.getIndexAttr(outType.getDimSize(1)), nc,
        rewriter.getIndexAttr(q)};

    // dt_out over loops (b, h, c, q).
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(projectedMap(ctx, 4, {1}));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(4));
    bool softplus = op.getDtSoftplus();
    auto limit = op.getDtLimitOrDefault();
    Value dtInit = emptyTensor(rewriter, loc, shape, f32);
    Value dtOut =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{dtInit.getType()}, inputs,
            ValueRange{dtInit}, maps, iterators(4),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value batch = linalg::IndexOp::create(b, l, 0);
              Value head = linalg::IndexOp::create(b, l, 1);
              Value c = linalg::IndexOp::create(b, l, 2);
              Value pos = linalg::IndexOp::create(b, l, 3);
              auto [t, valid] = map.token(b, l, c, pos);
              Value v = tensor::ExtractOp::create(b, l, dt,
                                                  ValueRange{batch, t, head});
              v = processDt(b, l, v, bias ? args[0] : Value(), softplus, limit);
              v = arith::SelectOp::create(b, l, valid, v, f32Const(b, l, 0.0));
              linalg::YieldOp::create(b, l, v);
            })
            .getResult(0);

    // dA_cumsum[b,h,c,i] = sum_{j <= i} A[h] * dt_out[b,h,c,j], loops
    // (b, h, c, i, j) with j the reduction.
    Value acc = zeroTensor(rewriter, loc, shape, f32);
    Value cumsum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{acc.getType()}, ValueRange{a, dtOut},
            ValueRange{acc},
            ArrayRef<AffineMap>{projectedMap(ctx, 5, {1}),
                                projectedMap(ctx, 5, {0, 1, 2, 4}),
                                projectedMap(ctx, 5, {0, 1, 2, 3})},
            iterators(5, {4}),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value i = linalg::IndexOp::create(b, l, 3);
              Value j = linalg::IndexOp::create(b, l, 4);
              Value inPrefix =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule, j, i);
              Value term = arith::MulFOp::create(b, l, args[0], args[1]);
              Value sum = arith::AddFOp::create(b, l, args[2], term);
              linalg::YieldOp::create(
                  b, l,
                  arith::SelectOp::create(b, l, inPrefix, sum, args[2])
                      .getResult());
            })
            .getResult(0);

    rewriter.replaceOp(
        op, {castTo(rewriter, loc, dtOut, outType),
             castTo(rewriter, loc, cumsum, op.getDACumsum().getType())});
    return success();
  }
};

} // namespace

void populateChunkCumsumPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerChunkCumsum>(patterns.getContext());
}

} // namespace lowering
} // namespace ssd
