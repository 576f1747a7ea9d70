//===- ChunkCumsum.cpp - ssd.chunk_cumsum to linalg -----------------------===//
//
// dt_out = clamp(softplus?(dt + dt_bias)) on real tokens, 0 on padding, in
// chunk-major layout (b,h,nc,Q); dA_cumsum = the within-chunk inclusive
// cumulative sum of A*dt_out, a scan over the Q positions (scf.for carrying
// the running sums of every (b, h, c)). A masked reduction over j <= i would
// be plain linalg too, but costs Q^2 / 2 scalar steps a row: at chunk 128 it
// took a sixth of the CPU backend's time.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

    // dA_cumsum[b,h,c,i] = dA_cumsum[b,h,c,i-1] + A[h] * dt_out[b,h,c,i]: a
    // scan over the chunk positions (scf.for), one elementwise op over
    // (b, h, c) a step. The terms are added in position order from 0, as a
    // reduction over j <= i would add them, in Q steps instead of Q^2 / 2.
    // Sizes known here stay static, so the slices' types match the tensors'.
    SmallVector<OpFoldResult> column;
    for (OpFoldResult size : ArrayRef(shape).drop_back())
      column.push_back(isa<Value>(size) ? getAsOpFoldResult(cast<Value>(size))
                                        : size);
    column.push_back(rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> unitStrides(4, rewriter.getIndexAttr(1));
    auto position = [&](Value i) {
      return SmallVector<OpFoldResult>{rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(0), i};
    };
    // No chunks (L = 0): nothing to sum, and no slice of an empty dimension.
    if (llvm::any_of(column, [](OpFoldResult size) {
          return getConstantIntValue(size) == std::optional<int64_t>(0);
        })) {
      rewriter.replaceOp(
          op, {castTo(rewriter, loc, dtOut, outType),
               castTo(rewriter, loc, emptyTensor(rewriter, loc, shape, f32),
                      op.getDACumsum().getType())});
      return success();
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value positions = arith::ConstantIndexOp::create(rewriter, loc, q);
    auto scan = scf::ForOp::create(
        rewriter, loc, zero, positions, one,
        ValueRange{zeroTensor(rewriter, loc, column, f32),
                   emptyTensor(rewriter, loc, shape, f32)},
        [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
          Value dtAt = tensor::ExtractSliceOp::create(b, l, dtOut, position(i),
                                                      column, unitStrides);
          Value sumsAt = tensor::ExtractSliceOp::create(
              b, l, carried[1], position(i), column, unitStrides);
          // Two outputs, the running sums and their column of dA_cumsum, so
          // that both are written in place (no strided copy per position).
          AffineMap id = b.getMultiDimIdentityMap(4);
          auto step = linalg::GenericOp::create(
              b, l, TypeRange{carried[0].getType(), sumsAt.getType()},
              ValueRange{a, dtAt}, ValueRange{carried[0], sumsAt},
              ArrayRef<AffineMap>{projectedMap(ctx, 4, {1}), id, id, id},
              iterators(4), [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value term = arith::MulFOp::create(nb, nl, args[0], args[1]);
                Value sum = arith::AddFOp::create(nb, nl, args[2], term);
                linalg::YieldOp::create(nb, nl, ValueRange{sum, sum});
              });
          Value running = step.getResult(0);
          Value stored =
              tensor::InsertSliceOp::create(b, l, step.getResult(1), carried[1],
                                            position(i), column, unitStrides);
          scf::YieldOp::create(b, l, ValueRange{running, stored});
        });
    Value cumsum = scan.getResult(1);

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
