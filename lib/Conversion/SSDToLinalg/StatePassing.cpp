//===- StatePassing.cpp - ssd.state_passing to scf + linalg ---------------===//
//
// The recurrence over chunks is sequential, so it is an scf.for carrying the
// running f32 state (b,h,p,n) and the result tensor. Each step stores the
// state at the chunk start (narrowed to the state precision), then
//   s = carry[b,h] * s + states[c],   carry = exp(dA_cumsum[c,Q-1]),
// with carry = 0 where the state resets (seq_idx changes inside chunk c).
// Varlen runs one such loop per sequence, over that sequence's chunks, from
// its own initial state, and stores its final state after the last chunk.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

using namespace mlir;

namespace ssd {
namespace lowering {
namespace {

/// Sizes shared by the helpers below.
struct StateShape {
  OpFoldResult batch;
  int64_t heads, headDim, state, chunkSize;
};

/// The (rows, 1, h, p, n) window of chunk `c` in a (b, nc, h, p, n) tensor.
struct ChunkWindow {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
ChunkWindow chunkWindow(OpBuilder &b, Value c, OpFoldResult rows,
                        const StateShape &s) {
  return {{b.getIndexAttr(0), c, b.getIndexAttr(0), b.getIndexAttr(0),
           b.getIndexAttr(0)},
          {rows, b.getIndexAttr(1), b.getIndexAttr(s.heads),
           b.getIndexAttr(s.headDim), b.getIndexAttr(s.state)},
          SmallVector<OpFoldResult>(5, b.getIndexAttr(1))};
}

/// states[:, c] as an f32 tensor (rows, h, p, n), `rows` batch rows from 0.
/// Slices keep their unit dimension and are reshaped explicitly: a
/// rank-reducing slice is ambiguous when other dimensions are 1 too.
Value chunkSlice(OpBuilder &b, Location loc, Value chunked, Value c,
                 OpFoldResult rows, const StateShape &s) {
  auto type = cast<RankedTensorType>(chunked.getType());
  auto sliceType = RankedTensorType::get(
      {getConstantIntValue(rows).value_or(ShapedType::kDynamic), 1, s.heads,
       s.headDim, s.state},
      type.getElementType());
  ChunkWindow w = chunkWindow(b, c, rows, s);
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, chunked,
                                               w.offsets, w.sizes, w.strides);
  slice = tensor::CollapseShapeOp::create(
      b, loc, slice, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  return convertElements(b, loc, slice, b.getF32Type());
}

/// Stores `value` (rows, h, p, n) into `chunked` at chunk `c`.
Value storeChunk(OpBuilder &b, Location loc, Value value, Value chunked,
                 Value c, OpFoldResult rows, const StateShape &s) {
  auto type = cast<RankedTensorType>(chunked.getType());
  value = convertElements(b, loc, value, type.getElementType());
  auto valueType = cast<RankedTensorType>(value.getType());
  auto expandedType = RankedTensorType::get(
      {valueType.getDimSize(0), 1, s.heads, s.headDim, s.state},
      valueType.getElementType());
  value = tensor::ExpandShapeOp::create(
      b, loc, expandedType, value,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}},
      SmallVector<OpFoldResult>{
          rows, b.getIndexAttr(1), b.getIndexAttr(s.heads),
          b.getIndexAttr(s.headDim), b.getIndexAttr(s.state)});
  ChunkWindow w = chunkWindow(b, c, rows, s);
  return tensor::InsertSliceOp::create(b, loc, value, chunked, w.offsets,
                                       w.sizes, w.strides);
}

/// carry[b,h] = exp(dA_cumsum[b,h,c,Q-1]), or 0 where `reset[b]` (i8) is 1.
Value carryFactors(OpBuilder &b, Location loc, Value dA, Value c,
                   OpFoldResult rows, const StateShape &s, Value reset) {
  MLIRContext *ctx = b.getContext();
  auto sliceType = RankedTensorType::get(
      {getConstantIntValue(rows).value_or(ShapedType::kDynamic), s.heads, 1, 1},
      b.getF32Type());
  Value last = indexConst(b, loc, s.chunkSize - 1);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0), c,
                                       last};
  SmallVector<OpFoldResult> sizes = {rows, b.getIndexAttr(s.heads),
                                     b.getIndexAttr(1), b.getIndexAttr(1)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  Value ends = tensor::ExtractSliceOp::create(b, loc, sliceType, dA, offsets,
                                              sizes, strides);
  SmallVector<Value> inputs = {ends};
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(
      2, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx), zero, zero},
      ctx)};
  if (reset) {
    inputs.push_back(reset);
    maps.push_back(projectedMap(ctx, 2, {0}));
  }
  maps.push_back(b.getMultiDimIdentityMap(2));
  Value init =
      emptyTensor(b, loc, {rows, b.getIndexAttr(s.heads)}, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators(2),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value carry = decayExp(nb, l, args[0]);
               if (reset) {
                 Value none = arith::ConstantIntOp::create(nb, l, 0, 8);
                 Value resets = arith::CmpIOp::create(
                     nb, l, arith::CmpIPredicate::ne, args[1], none);
                 carry = arith::SelectOp::create(nb, l, resets,
                                                 f32Const(nb, l, 0.0), carry);
               }
               linalg::YieldOp::create(nb, l, carry);
             })
      .getResult(0);
}

/// s' = carry[b,h] * s + add, all (rows, h, p, n) f32.
Value stepState(OpBuilder &b, Location loc, Value state, Value carry,
                Value add) {
  MLIRContext *ctx = b.getContext();
  AffineMap id = b.getMultiDimIdentityMap(4);
  return linalg::GenericOp::create(
             b, loc, TypeRange{state.getType()}, ValueRange{carry, add},
             ValueRange{state},
             ArrayRef<AffineMap>{projectedMap(ctx, 4, {0, 1}), id, id},
             iterators(4),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value decayed = arith::MulFOp::create(nb, l, args[0], args[2]);
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, decayed, args[1]).getResult());
             })
      .getResult(0);
}

/// reset[b]: 1 where seq_idx of chunk c's last real token differs from that
/// of the token before the chunk (token 0 for chunk 0), else 0. Bytes, not
/// i1: a vector<Nxi1> store packs bits while a memref of i1 is read a byte
/// an element, so a flags tensor the vectorizer writes whole (as a folded
/// constant, with a one-token sequence) read back garbage past element 0.
Value resetFlags(OpBuilder &b, Location loc, const ChunkMap &map, Value seqIdx,
                 Value c, OpFoldResult rows) {
  Value init = emptyTensor(b, loc, {rows}, b.getI8Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(1)}, iterators(1),
             [&](OpBuilder &nb, Location l, ValueRange) {
               Value batch = linalg::IndexOp::create(nb, l, 0);
               Value now = tensor::ExtractOp::create(
                   nb, l, seqIdx, ValueRange{batch, map.lastToken(nb, l, c)});
               Value before = tensor::ExtractOp::create(
                   nb, l, seqIdx, ValueRange{batch, map.tokenBefore(nb, l, c)});
               Value changed = arith::CmpIOp::create(
                   nb, l, arith::CmpIPredicate::ne, now, before);
               linalg::YieldOp::create(
                   nb, l,
                   arith::ExtUIOp::create(nb, l, nb.getI8Type(), changed)
                       .getResult());
             })
      .getResult(0);
}

struct LowerStatePassing : OpConversionPattern<StatePassingOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StatePassingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value states = adaptor.getStates();
    auto statesType = cast<RankedTensorType>(states.getType());
    auto outType = cast<RankedTensorType>(op.getOut().getType());
    StateShape s{
        dimFold(rewriter, loc, states, 0), statesType.getDimSize(2),
        statesType.getDimSize(3), statesType.getDimSize(4),
        cast<RankedTensorType>(adaptor.getDACumsum().getType()).getDimSize(3)};
    Value nc = numChunksOf(rewriter, loc, states, 1);
    SmallVector<OpFoldResult> outShape = {
        s.batch, nc, rewriter.getIndexAttr(s.heads),
        rewriter.getIndexAttr(s.headDim), rewriter.getIndexAttr(s.state)};
    // Zero, so that the unused trailing chunks of varlen are defined.
    Value out = zeroTensor(rewriter, loc, outShape, outType.getElementType());
    auto [outFinal, finalStates] =
        adaptor.getCuSeqlens()
            ? lowerVarlen(rewriter, loc, adaptor, s, nc, out)
            : lowerRegular(rewriter, loc, adaptor, s, nc, out);
    rewriter.replaceOp(op, {castTo(rewriter, loc, outFinal, outType),
                            castTo(rewriter, loc, finalStates,
                                   op.getFinalStates().getType())});
    return success();
  }

  /// One chain over all chunks of every batch row.
  std::pair<Value, Value> lowerRegular(OpBuilder &b, Location loc,
                                       OpAdaptor adaptor, const StateShape &s,
                                       Value nc, Value out) const {
    Value seqIdx = adaptor.getSeqIdx();
    ChunkMap map;
    if (seqIdx)
      map = ChunkMap::build(b, loc, dimValue(b, loc, seqIdx, 1), nc,
                            s.chunkSize, Value());
    SmallVector<OpFoldResult> stateShape = {s.batch, b.getIndexAttr(s.heads),
                                            b.getIndexAttr(s.headDim),
                                            b.getIndexAttr(s.state)};
    Value init = adaptor.getInitialStates()
                     ? convertElements(b, loc, adaptor.getInitialStates(),
                                       b.getF32Type())
                     : zeroTensor(b, loc, stateShape, b.getF32Type());
    Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, zero, nc, one, ValueRange{init, out},
        [&](OpBuilder &nb, Location l, Value c, ValueRange args) {
          Value stored = storeChunk(nb, l, args[0], args[1], c, s.batch, s);
          Value reset =
              seqIdx ? resetFlags(nb, l, map, seqIdx, c, s.batch) : Value();
          Value carry =
              carryFactors(nb, l, adaptor.getDACumsum(), c, s.batch, s, reset);
          Value add = chunkSlice(nb, l, adaptor.getStates(), c, s.batch, s);
          Value next = stepState(nb, l, args[0], carry, add);
          scf::YieldOp::create(nb, l, ValueRange{next, stored});
        });
    auto outType = cast<RankedTensorType>(out.getType());
    Value finalStates =
        convertElements(b, loc, loop.getResult(0), outType.getElementType());
    return {loop.getResult(1), finalStates};
  }

  /// One chain per sequence (batch 1), from its own initial state.
  std::pair<Value, Value> lowerVarlen(OpBuilder &b, Location loc,
                                      OpAdaptor adaptor, const StateShape &s,
                                      Value nc, Value out) const {
    Value cu = adaptor.getCuSeqlens();
    Value one = indexConst(b, loc, 1), zero = indexConst(b, loc, 0);
    Value numSeqs = arith::SubIOp::create(b, loc, dimValue(b, loc, cu, 0), one);
    // The op has no token operand; the largest L consistent with nc bounds
    // the token offsets (nc = ceil(L/Q) + s - 1).
    Value maxLen = arith::MulIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc,
                              arith::SubIOp::create(b, loc, nc, numSeqs), one),
        indexConst(b, loc, s.chunkSize));
    ChunkMap map = ChunkMap::build(b, loc, maxLen, nc, s.chunkSize, cu);
    auto outType = cast<RankedTensorType>(out.getType());
    Type stateType = outType.getElementType();
    OpFoldResult row = b.getIndexAttr(1);
    SmallVector<OpFoldResult> seqStates = {numSeqs, b.getIndexAttr(s.heads),
                                           b.getIndexAttr(s.headDim),
                                           b.getIndexAttr(s.state)};
    // Sequences without chunks keep their initial state (or zero).
    Value initial = adaptor.getInitialStates();
    Value finals = initial ? initial : zeroTensor(b, loc, seqStates, stateType);
    SmallVector<OpFoldResult> oneState = {row, b.getIndexAttr(s.heads),
                                          b.getIndexAttr(s.headDim),
                                          b.getIndexAttr(s.state)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    auto stateSliceType =
        RankedTensorType::get({1, s.heads, s.headDim, s.state}, stateType);

    auto seqLoop = scf::ForOp::create(
        b, loc, zero, numSeqs, one, ValueRange{out, finals},
        [&](OpBuilder &sb, Location l, Value i, ValueRange args) {
          SmallVector<OpFoldResult> at = {
              i, sb.getIndexAttr(0), sb.getIndexAttr(0), sb.getIndexAttr(0)};
          Value start =
              initial ? convertElements(sb, l,
                                        tensor::ExtractSliceOp::create(
                                            sb, l, stateSliceType, initial, at,
                                            oneState, strides),
                                        sb.getF32Type())
                      : zeroTensor(sb, l, oneState, sb.getF32Type());
          Value first = tensor::ExtractOp::create(sb, l, map.seqFirstChunk,
                                                  ValueRange{i});
          Value count =
              tensor::ExtractOp::create(sb, l, map.seqNumChunks, ValueRange{i});
          auto chunkLoop = scf::ForOp::create(
              sb, l, zero, count, one, ValueRange{start, args[0]},
              [&](OpBuilder &nb, Location nl, Value j, ValueRange cargs) {
                Value k = arith::AddIOp::create(nb, nl, first, j);
                Value stored =
                    storeChunk(nb, nl, cargs[0], cargs[1], k, row, s);
                Value carry = carryFactors(nb, nl, adaptor.getDACumsum(), k,
                                           row, s, Value());
                Value add = chunkSlice(nb, nl, adaptor.getStates(), k, row, s);
                Value next = stepState(nb, nl, cargs[0], carry, add);
                scf::YieldOp::create(nb, nl, ValueRange{next, stored});
              });
          Value last =
              convertElements(sb, l, chunkLoop.getResult(0), stateType);
          Value newFinals = tensor::InsertSliceOp::create(
              sb, l, last, args[1], at, oneState, strides);
          scf::YieldOp::create(sb, l,
                               ValueRange{chunkLoop.getResult(1), newFinals});
        });
    return {seqLoop.getResult(0), seqLoop.getResult(1)};
  }
};

} // namespace

void populateStatePassingPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerStatePassing>(patterns.getContext());
}

} // namespace lowering
} // namespace ssd
