//===- ChunkState.cpp - ssd.chunk_state to linalg -------------------------===//
//
// states[b,c,h,p,n] = sum_l x[l,h,p] w[b,h,c,l] B[l,g(h),n] with the token
// weight w = exp(dA[Q-1] - dA[l]) dt[l] (zero for tokens of an
// earlier sequence with seq_idx). Built as:
//   1. w over (b,h,nc,Q);
//   2. x gathered into chunk-major f32 tiles (b,nc,g,h/g,Q,p) and scaled by w;
//   3. one contraction over the chunk positions with B tiles (b,nc,g,Q,n).
// Splitting heads into (g, h/g) keeps every indexing map a projection, so the
// contraction can be tiled and vectorized as a matmul.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

using namespace mlir;

namespace ssd {
namespace lowering {
namespace {

/// w[b,h,c,l]: the decay from token l to the chunk end, times dt, masked to
/// the chunk's last sequence when `seqIdx` is given.
Value tokenWeights(OpBuilder &rewriter, Location loc, const ChunkMap &map,
                   Value dt, Value dA, Value seqIdx) {
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(dA.getType());
  int64_t q = type.getDimSize(3);
  SmallVector<OpFoldResult> shape;
  for (int64_t i = 0; i < 4; ++i)
    shape.push_back(dimFold(rewriter, loc, dA, i));
  Value init = emptyTensor(rewriter, loc, shape, rewriter.getF32Type());
  AffineMap id = rewriter.getMultiDimIdentityMap(4);
  // dA_cumsum at the chunk end: the last position of the loop's chunk.
  AffineMap last = AffineMap::get(
      4, 0,
      {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
       getAffineDimExpr(2, ctx), getAffineConstantExpr(q - 1, ctx)},
      ctx);
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{init.getType()}, ValueRange{dt, dA, dA},
             ValueRange{init}, ArrayRef<AffineMap>{id, id, last, id},
             iterators(4),
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value diff = arith::SubFOp::create(b, l, args[2], args[1]);
               Value w =
                   arith::MulFOp::create(b, l, decayExp(b, l, diff), args[0]);
               if (seqIdx)
                 w = map.keepSameSequence(b, l, seqIdx, w, [&](Value c) {
                   return map.lastToken(b, l, c);
                 });
               linalg::YieldOp::create(b, l, w);
             })
      .getResult(0);
}

struct LowerChunkState : OpConversionPattern<ChunkStateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ChunkStateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = adaptor.getX(), bMat = adaptor.getB(), dt = adaptor.getDt(),
          dA = adaptor.getDACumsum();
    auto resultType = cast<RankedTensorType>(op.getStates().getType());
    int64_t q = cast<RankedTensorType>(dA.getType()).getDimSize(3);
    int64_t groups = cast<RankedTensorType>(bMat.getType()).getDimSize(2);
    Value seqLen = dimValue(rewriter, loc, x, 1);
    Value nc = numChunksOf(rewriter, loc, dA, 2);
    ChunkMap map =
        ChunkMap::build(rewriter, loc, seqLen, nc, q, adaptor.getCuSeqlens());

    // 1. (b,g,h/g,nc,Q) token weights.
    Value w = splitHeads(
        rewriter, loc,
        tokenWeights(rewriter, loc, map, dt, dA, adaptor.getSeqIdx()), 1,
        groups);

    // 2. x tiles (b,nc,g,h/g,Q,p), scaled by w into a tile of their own:
    //    the chunk scan's gather of the same tiles (one op after CSE) reads
    //    them unscaled, so scaling in place would copy them first.
    Value xTiles = gatherChunks(rewriter, loc, map,
                                splitHeads(rewriter, loc, x, 2, groups),
                                {kBatch, kChunk, 2, 3, kPos, 4});
    xTiles = scaledTokenRows(rewriter, loc, w, xTiles);

    // 3. Loops (b, c, g, hh, p, n, l):
    //    S[b,c,g,hh,p,n] += xw[b,c,g,hh,l,p] * B[b,c,g,l,n].
    Value bTiles =
        gatherChunks(rewriter, loc, map, bMat, {kBatch, kChunk, 2, kPos, 3});
    auto xType = cast<RankedTensorType>(xTiles.getType());
    SmallVector<OpFoldResult> shape = {
        dimFold(rewriter, loc, x, 0),
        nc,
        rewriter.getIndexAttr(groups),
        rewriter.getIndexAttr(xType.getDimSize(3)),
        rewriter.getIndexAttr(xType.getDimSize(5)),
        dimFold(rewriter, loc, bMat, 3)};
    Value acc = zeroTensor(rewriter, loc, shape, rewriter.getF32Type());
    Value states =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{acc.getType()}, ValueRange{xTiles, bTiles},
            ValueRange{acc},
            ArrayRef<AffineMap>{projectedMap(ctx, 7, {0, 1, 2, 3, 6, 4}),
                                projectedMap(ctx, 7, {0, 1, 2, 6, 5}),
                                projectedMap(ctx, 7, {0, 1, 2, 3, 4, 5})},
            iterators(7, {6}),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value prod = arith::MulFOp::create(b, l, args[0], args[1]);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], prod).getResult());
            })
            .getResult(0);

    states = mergeDims(rewriter, loc, states, 2);
    states =
        convertElements(rewriter, loc, states, resultType.getElementType());
    rewriter.replaceOp(op, castTo(rewriter, loc, states, resultType));
    return success();
  }
};

} // namespace

void populateChunkStatePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerChunkState>(patterns.getContext());
}

} // namespace lowering
} // namespace ssd
