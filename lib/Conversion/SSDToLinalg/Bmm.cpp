//===- Bmm.cpp - ssd.bmm to linalg ----------------------------------------===//
//
// C and B are gathered into chunk-major f32 tiles (b,nc,g,Q,n) with zero
// padding, which makes CB = C B^T per (batch, chunk, group) a plain
// contraction and zeroes the rows and columns of padding tokens for free.
// With seq_idx a second elementwise op clears pairs of different sequences.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

using namespace mlir;

namespace ssd {
namespace lowering {
namespace {

struct LowerBmm : OpConversionPattern<BmmOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BmmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto cbType = cast<RankedTensorType>(op.getCB().getType());
    int64_t q = cbType.getDimSize(3);
    Value c = adaptor.getC(), bMat = adaptor.getB();
    Value seqLen = dimValue(rewriter, loc, c, 1);
    Value nc = numChunksFor(rewriter, loc, cbType, 1, seqLen, q,
                            adaptor.getCuSeqlens());
    ChunkMap map =
        ChunkMap::build(rewriter, loc, seqLen, nc, q, adaptor.getCuSeqlens());

    // (b, nc, g, n, Q) tiles of C and B: the reduction dimension outermost
    // in both operands, so each step of the product reads contiguous rows.
    SmallVector<int64_t> tileDims = {kBatch, kChunk, 2, 3, kPos};
    Value cTiles = gatherChunks(rewriter, loc, map, c, tileDims);
    Value bTiles = gatherChunks(rewriter, loc, map, bMat, tileDims);

    SmallVector<OpFoldResult> shape = {
        dimFold(rewriter, loc, c, 0), nc, dimFold(rewriter, loc, c, 2),
        rewriter.getIndexAttr(q), rewriter.getIndexAttr(q)};
    Type f32 = rewriter.getF32Type();
    Value acc = zeroTensor(rewriter, loc, shape, f32);
    // Loops (b, c, g, i, j, k): CB[b,c,g,i,j] += C[b,c,g,k,i] * B[b,c,g,k,j].
    Value cb =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{acc.getType()}, ValueRange{cTiles, bTiles},
            ValueRange{acc},
            ArrayRef<AffineMap>{projectedMap(ctx, 6, {0, 1, 2, 5, 3}),
                                projectedMap(ctx, 6, {0, 1, 2, 5, 4}),
                                projectedMap(ctx, 6, {0, 1, 2, 3, 4})},
            iterators(6, {5}),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value prod = arith::MulFOp::create(b, l, args[0], args[1]);
              linalg::YieldOp::create(
                  b, l, arith::AddFOp::create(b, l, args[2], prod).getResult());
            })
            .getResult(0);

    if (Value seqIdx = adaptor.getSeqIdx()) {
      Value ids =
          gatherChunks(rewriter, loc, map, seqIdx, {kBatch, kChunk, kPos});
      cb = linalg::GenericOp::create(
               rewriter, loc, TypeRange{cb.getType()}, ValueRange{ids, ids},
               ValueRange{cb},
               ArrayRef<AffineMap>{projectedMap(ctx, 5, {0, 1, 3}),
                                   projectedMap(ctx, 5, {0, 1, 4}),
                                   rewriter.getMultiDimIdentityMap(5)},
               iterators(5),
               [&](OpBuilder &b, Location l, ValueRange args) {
                 Value same = arith::CmpIOp::create(
                     b, l, arith::CmpIPredicate::eq, args[0], args[1]);
                 linalg::YieldOp::create(
                     b, l,
                     arith::SelectOp::create(b, l, same, args[2],
                                             f32Const(b, l, 0.0))
                         .getResult());
               })
               .getResult(0);
    }
    rewriter.replaceOp(op, castTo(rewriter, loc, cb, cbType));
    return success();
  }
};

} // namespace

void populateBmmPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerBmm>(patterns.getContext());
}

} // namespace lowering
} // namespace ssd
