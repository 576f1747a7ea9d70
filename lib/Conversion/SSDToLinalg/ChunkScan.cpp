//===- ChunkScan.cpp - ssd.chunk_scan to linalg ---------------------------===//
//
// y_i = exp(dA[i]) C_i s_c + sum_{j<=i} CB[i,j] exp(segsum[i,j]) dt_j x_j
//       + D x_i, then z gating. Built in chunk-major f32 tiles, heads split
// into (g, h/g) so that C and CB are shared by the heads of a group:
//   1. Y  = C_tiles . states^T            (contraction over n)
//   2. Y *= exp(dA) * [token of the sequence running at chunk start]
//   3. W  = CB * exp(segsum) * dt_j on j <= i, else 0
//   4. Y += W . x_tiles                    (contraction over j)
//   5. scatter back to (b,L,h,p): + D x, z gating, narrow to y's type.
// Both products read their operands with the reduction dimension outermost
// (C tiles (n,Q), states (n,p), W stored as (j,i), x tiles (j,p)), which is
// the layout an outer-product (FMA) matmul kernel streams through.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ssd/Conversion/SSDToLinalg.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

using namespace mlir;

namespace ssd {
namespace lowering {
namespace {

Value mulAddBody(OpBuilder &b, Location l, ValueRange args) {
  Value prod =
      arith::MulFOp::create(b, l, toF32(b, l, args[0]), toF32(b, l, args[1]));
  return arith::AddFOp::create(b, l, args[2], prod);
}

/// (b,nc,g,hh,p,n) states as f32 (b,nc,g,hh,n,p).
Value transposeStates(OpBuilder &b, Location loc, Value states) {
  SmallVector<OpFoldResult> shape;
  for (int64_t i : {0, 1, 2, 3, 5, 4})
    shape.push_back(dimFold(b, loc, states, i));
  Value init = emptyTensor(b, loc, shape, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{states},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 projectedMap(b.getContext(), 6, {0, 1, 2, 3, 5, 4}),
                 b.getMultiDimIdentityMap(6)},
             iterators(6),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, toF32(nb, l, args[0]));
             })
      .getResult(0);
}

/// scale[b,h,c,i] = exp(dA), zero with seq_idx for tokens of a
/// sequence other than the one running just before the chunk.
Value stateScale(OpBuilder &rewriter, Location loc, const ChunkMap &map,
                 Value dA, Value seqIdx) {
  SmallVector<OpFoldResult> shape;
  for (int64_t i = 0; i < 4; ++i)
    shape.push_back(dimFold(rewriter, loc, dA, i));
  Value init = emptyTensor(rewriter, loc, shape, rewriter.getF32Type());
  AffineMap id = rewriter.getMultiDimIdentityMap(4);
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{init.getType()}, ValueRange{dA},
             ValueRange{init}, ArrayRef<AffineMap>{id, id}, iterators(4),
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value scale = decayExp(b, l, args[0]);
               if (seqIdx)
                 scale =
                     map.keepSameSequence(b, l, seqIdx, scale, [&](Value c) {
                       return map.tokenBefore(b, l, c);
                     });
               linalg::YieldOp::create(b, l, scale);
             })
      .getResult(0);
}

/// W[b,c,g,hh,j,i] = CB[i,j] * exp(segsum[i,j]) * dt[j] for j <= i,
/// else 0, over loops (b,c,g,hh,j,i) so that W is written contiguously in
/// the (j, i) layout the second product streams through. When segsum is
/// ssd.segsum of this op's dA_cumsum, the difference dA[i] - dA[j] is taken
/// here instead, so the (b,h,nc,Q,Q) segsum tensor is never materialized.
Value decayWeights(OpBuilder &rewriter, Location loc, ChunkScanOp op,
                   ChunkScanOp::Adaptor adaptor, int64_t groups,
                   ArrayRef<OpFoldResult> yShape, int64_t q) {
  MLIRContext *ctx = op.getContext();
  auto segsumOp = op.getSegsum().getDefiningOp<SegsumOp>();
  bool fromCumsum = segsumOp && segsumOp.getDACumsum() == op.getDACumsum();
  Value dt = splitHeads(rewriter, loc, adaptor.getDt(), 1, groups);
  // CB^T, once per chunk and group: W's rows then read CB along its rows
  // (contiguous) for every head, instead of gathering a column per row.
  Value cb = adaptor.getCB();
  auto cbType = cast<RankedTensorType>(cb.getType());
  SmallVector<OpFoldResult> cbShape;
  for (int64_t d = 0; d < cbType.getRank(); ++d)
    cbShape.push_back(dimFold(rewriter, loc, cb, d));
  Value cbT = linalg::TransposeOp::create(
                  rewriter, loc, cb,
                  emptyTensor(rewriter, loc, cbShape, cbType.getElementType()),
                  ArrayRef<int64_t>{0, 1, 2, 4, 3})
                  ->getResult(0);
  SmallVector<Value> inputs = {cbT, dt};
  // Loops (b, c, g, hh, j, i).
  SmallVector<AffineMap> maps = {projectedMap(ctx, 6, {0, 1, 2, 4, 5}),
                                 projectedMap(ctx, 6, {0, 2, 3, 1, 4})};
  if (fromCumsum) {
    Value dA = splitHeads(rewriter, loc, adaptor.getDACumsum(), 1, groups);
    inputs.append({dA, dA});
    maps.append({projectedMap(ctx, 6, {0, 2, 3, 1, 5}),
                 projectedMap(ctx, 6, {0, 2, 3, 1, 4})});
  } else {
    inputs.push_back(splitHeads(rewriter, loc, adaptor.getSegsum(), 1, groups));
    maps.push_back(projectedMap(ctx, 6, {0, 2, 3, 1, 5, 4}));
  }
  maps.push_back(rewriter.getMultiDimIdentityMap(6));
  SmallVector<OpFoldResult> wShape(yShape.begin(), yShape.end());
  wShape.back() = rewriter.getIndexAttr(q);
  Value init = emptyTensor(rewriter, loc, wShape, rewriter.getF32Type());
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             maps, iterators(6),
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value j = linalg::IndexOp::create(b, l, 4);
               Value i = linalg::IndexOp::create(b, l, 5);
               Value causal =
                   arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule, j, i);
               Value seg = fromCumsum
                               ? arith::SubFOp::create(b, l, args[2], args[3])
                               : args[2];
               Value v =
                   arith::MulFOp::create(b, l, args[0], decayExp(b, l, seg));
               v = arith::MulFOp::create(b, l, v, args[1]);
               linalg::YieldOp::create(
                   b, l,
                   arith::SelectOp::create(b, l, causal, v, f32Const(b, l, 0.0))
                       .getResult());
             })
      .getResult(0);
}

struct LowerChunkScan : OpConversionPattern<ChunkScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ChunkScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = adaptor.getX(), c = adaptor.getC(), dA = adaptor.getDACumsum();
    auto xType = cast<RankedTensorType>(x.getType());
    auto cbType = cast<RankedTensorType>(adaptor.getCB().getType());
    int64_t heads = xType.getDimSize(2), headDim = xType.getDimSize(3);
    int64_t groups = cbType.getDimSize(2), q = cbType.getDimSize(3);
    int64_t perGroup = heads / groups;
    Type f32 = rewriter.getF32Type();
    Value seqLen = dimValue(rewriter, loc, x, 1);
    Value nc = numChunksOf(rewriter, loc, dA, 2);
    ChunkMap map =
        ChunkMap::build(rewriter, loc, seqLen, nc, q, adaptor.getCuSeqlens());

    // 1. Y[b,c,g,hh,i,p] = sum_n C[b,c,g,n,i] * s[b,c,g,hh,n,p].
    Value cTiles =
        gatherChunks(rewriter, loc, map, c, {kBatch, kChunk, 2, 3, kPos});
    Value states = transposeStates(
        rewriter, loc,
        splitHeads(rewriter, loc, adaptor.getStates(), 2, groups));
    SmallVector<OpFoldResult> yShape = {
        dimFold(rewriter, loc, x, 0),  nc,
        rewriter.getIndexAttr(groups), rewriter.getIndexAttr(perGroup),
        rewriter.getIndexAttr(q),      rewriter.getIndexAttr(headDim)};
    Value y = zeroTensor(rewriter, loc, yShape, f32);
    y = linalg::GenericOp::create(
            rewriter, loc, TypeRange{y.getType()}, ValueRange{cTiles, states},
            ValueRange{y},
            ArrayRef<AffineMap>{projectedMap(ctx, 7, {0, 1, 2, 6, 4}),
                                projectedMap(ctx, 7, {0, 1, 2, 3, 6, 5}),
                                projectedMap(ctx, 7, {0, 1, 2, 3, 4, 5})},
            iterators(7, {6}),
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l, mulAddBody(b, l, args));
            })
            .getResult(0);

    // 2. Scale each row by the decay from the chunk start.
    Value scale = splitHeads(
        rewriter, loc, stateScale(rewriter, loc, map, dA, adaptor.getSeqIdx()),
        1, groups);
    y = scaleTokenRows(rewriter, loc, scale, y);

    // 3. W[b,c,g,hh,j,i] = CB * exp(segsum) * dt_j on j <= i.
    Value w = decayWeights(rewriter, loc, op, adaptor, groups, yShape, q);

    // 4. Y[b,c,g,hh,i,p] += sum_j W[b,c,g,hh,j,i] * x[b,c,g,hh,j,p].
    Value xTiles = gatherChunks(rewriter, loc, map,
                                splitHeads(rewriter, loc, x, 2, groups),
                                {kBatch, kChunk, 2, 3, kPos, 4});
    auto intra = linalg::GenericOp::create(
        rewriter, loc, TypeRange{y.getType()}, ValueRange{w, xTiles},
        ValueRange{y},
        ArrayRef<AffineMap>{projectedMap(ctx, 7, {0, 1, 2, 3, 6, 4}),
                            projectedMap(ctx, 7, {0, 1, 2, 3, 6, 5}),
                            projectedMap(ctx, 7, {0, 1, 2, 3, 4, 5})},
        iterators(7, {6}), [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, mulAddBody(b, l, args));
        });
    // W is causal: the CPU tiling may stop the reduction at the tile's last i.
    intra->setAttr(kLowerTriangularAttr, rewriter.getUnitAttr());
    y = intra.getResult(0);

    // 5. Back to tokens.
    Value result = scatterTokens(rewriter, loc, op, adaptor, map, y, perGroup);
    rewriter.replaceOp(op, castTo(rewriter, loc, result, op.getY().getType()));
    return success();
  }

  /// y[b,t,h,p] = Y[b, chunk(t), h/(h/g), h%(h/g), pos(t), p] + D x, gated by
  /// z, in y's element type.
  Value scatterTokens(OpBuilder &rewriter, Location loc, ChunkScanOp op,
                      OpAdaptor adaptor, const ChunkMap &map, Value tiles,
                      int64_t perGroup) const {
    MLIRContext *ctx = op.getContext();
    Value x = adaptor.getX(), d = adaptor.getD(), z = adaptor.getZ();
    Type yElement =
        cast<RankedTensorType>(op.getY().getType()).getElementType();
    SmallVector<OpFoldResult> shape;
    for (int64_t i = 0; i < 4; ++i)
      shape.push_back(dimFold(rewriter, loc, x, i));
    Value init = emptyTensor(rewriter, loc, shape, yElement);
    AffineMap id = rewriter.getMultiDimIdentityMap(4);
    SmallVector<Value> inputs = {x};
    SmallVector<AffineMap> maps = {id};
    if (d) {
      inputs.push_back(d);
      bool perChannel = cast<RankedTensorType>(d.getType()).getRank() == 2;
      maps.push_back(perChannel ? projectedMap(ctx, 4, {2, 3})
                                : projectedMap(ctx, 4, {2}));
    }
    if (z) {
      inputs.push_back(z);
      maps.push_back(id);
    }
    maps.push_back(id);
    return linalg::GenericOp::create(
               rewriter, loc, TypeRange{init.getType()}, inputs,
               ValueRange{init}, maps, iterators(4),
               [&](OpBuilder &b, Location l, ValueRange args) {
                 Value batch = linalg::IndexOp::create(b, l, 0);
                 Value t = linalg::IndexOp::create(b, l, 1);
                 Value head = linalg::IndexOp::create(b, l, 2);
                 Value chan = linalg::IndexOp::create(b, l, 3);
                 auto [chunk, pos, valid] = map.chunkOf(b, l, t);
                 Value per = indexConst(b, l, perGroup);
                 Value group = arith::DivUIOp::create(b, l, head, per);
                 Value inGroup = arith::RemUIOp::create(b, l, head, per);
                 Value v = tensor::ExtractOp::create(
                     b, l, tiles,
                     ValueRange{batch, chunk, group, inGroup, pos, chan});
                 v = arith::SelectOp::create(b, l, valid, v,
                                             f32Const(b, l, 0.0));
                 Value xv = toF32(b, l, args[0]);
                 unsigned next = 1;
                 if (d)
                   v = arith::AddFOp::create(
                       b, l, v, arith::MulFOp::create(b, l, args[next++], xv));
                 if (z) {
                   Value zv = toF32(b, l, args[next++]);
                   // z * sigmoid(z) = z / (1 + exp(-z)).
                   Value e = math::ExpOp::create(
                       b, l, arith::NegFOp::create(b, l, zv));
                   Value denom =
                       arith::AddFOp::create(b, l, f32Const(b, l, 1.0), e);
                   Value gate = arith::DivFOp::create(b, l, zv, denom);
                   v = arith::MulFOp::create(b, l, v, gate);
                 }
                 linalg::YieldOp::create(b, l, fromF32(b, l, v, yElement));
               })
        .getResult(0);
  }
};

} // namespace

void populateChunkScanPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerChunkScan>(patterns.getContext());
}

} // namespace lowering
} // namespace ssd
