//===- SplitSequence.cpp - ssd.combined as a loop over segments -----------===//
//
// The layer over tokens [0, L) is the layer over [0, t) followed by the
// layer over [t, L) started from the state at t. Cutting the sequence into
// segments of whole chunks keeps every intermediate the step ops produce
// (chunk states, passed states, scaled x: each as large as the input at the
// 2.7B layer) segment-sized, which is what lets the CPU backend run out of
// caches instead of faulting hundreds of MB in per call. With seq_idx a
// segment starts from zero in the batch rows where a sequence starts at its
// first token. A cu_seqlens layer becomes a loop over its sequences, each
// walked in segments from its own initial state.
//
//===----------------------------------------------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "PassOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace ssd {
#define GEN_PASS_DEF_SSDSPLITSEQUENCE
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd;

namespace {

/// Offsets (0 but the token dimension's) and unit strides of a token window.
struct TokenWindow {
  SmallVector<OpFoldResult> offsets, strides;
  TokenWindow(OpBuilder &b, int64_t rank, OpFoldResult offset)
      : offsets(rank, b.getIndexAttr(0)), strides(rank, b.getIndexAttr(1)) {
    offsets[1] = offset;
  }
};

/// Tokens [offset, offset + size) of a (b, L, ...) operand, or null.
Value tokenSlice(OpBuilder &b, Location loc, Value operand, OpFoldResult offset,
                 OpFoldResult size) {
  if (!operand)
    return Value();
  int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(d == 1 ? size : tensor::getMixedSize(b, loc, operand, d));
  TokenWindow w(b, sizes.size(), offset);
  return tensor::ExtractSliceOp::create(b, loc, operand, w.offsets, sizes,
                                        w.strides);
}

/// `slice` copied into a tensor of its own (null stays null). The lowering
/// reads seq_idx by gathers whose indices are not contiguous; LLVM 22's
/// vectorizer turns such gathers into vector.gather with an index
/// linearized over the tensor's shape, which reads the wrong row of a
/// strided slice once bufferized (the batch rows of a token window are
/// L elements apart, not the window's length). A copy is dense.
Value denseCopy(OpBuilder &b, Location loc, Value slice) {
  if (!slice)
    return slice;
  auto type = cast<RankedTensorType>(slice.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, slice), type.getElementType());
  return linalg::CopyOp::create(b, loc, slice, init).getResult(0);
}

/// The state a segment starting at token `offset` starts from: `from`, the
/// state after token offset - 1, or with seq_idx zero in the batch rows
/// where a sequence starts at `offset` (the layer resets the state where
/// seq_idx changes, and the segment's own op sees no token before its
/// first). At offset 0 the token compared with is itself.
Value continuedState(OpBuilder &b, Location loc, Value seqIdx,
                     OpFoldResult offset, Value from) {
  if (!seqIdx)
    return from;
  Value at = getValueOrCreateConstantIndexOp(b, loc, offset);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value before = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, at, one), zero);
  OpFoldResult rows = tensor::getMixedSize(b, loc, seqIdx, 0);
  auto column = [&](Value token) {
    return tensor::ExtractSliceOp::create(
        b, loc, seqIdx, {b.getIndexAttr(0), token}, {rows, b.getIndexAttr(1)},
        {b.getIndexAttr(1), b.getIndexAttr(1)});
  };
  Value previous = column(before), current = column(at);
  auto stateType = cast<RankedTensorType>(from.getType());
  int64_t rank = stateType.getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap rowMap = AffineMap::get(
      rank, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(0, ctx)}, ctx);
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, from), stateType.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{stateType}, ValueRange{previous, current, from},
             ValueRange{init},
             ArrayRef<AffineMap>{rowMap, rowMap, b.getMultiDimIdentityMap(rank),
                                 b.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value same = arith::CmpIOp::create(
                   nb, l, arith::CmpIPredicate::eq, args[0], args[1]);
               Value zeroState = arith::ConstantOp::create(
                   nb, l, nb.getZeroAttr(args[2].getType()));
               linalg::YieldOp::create(
                   nb, l,
                   arith::SelectOp::create(nb, l, same, args[2], zeroState)
                       .getResult());
             })
      .getResult(0);
}

/// continuedState for a segment of `size` tokens at `offset`; where the size
/// is dynamic (the tokens after the whole segments of a dynamic L, possibly
/// none) only when it holds a token: an empty segment keeps `from`, and
/// reads no seq_idx past the sequence's end.
Value startState(OpBuilder &b, Location loc, Value seqIdx, OpFoldResult offset,
                 OpFoldResult size, Value from) {
  if (!seqIdx || getConstantIntValue(size))
    return continuedState(b, loc, seqIdx, offset, from);
  Value tokens =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                            getValueOrCreateConstantIndexOp(b, loc, size),
                            arith::ConstantIndexOp::create(b, loc, 0));
  auto pick = scf::IfOp::create(
      b, loc, tokens,
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l,
                             continuedState(nb, l, seqIdx, offset, from));
      },
      [&](OpBuilder &nb, Location l) { scf::YieldOp::create(nb, l, from); });
  return pick.getResult(0);
}

/// `layer` without cu_seqlens on tokens [offset, offset + size) of its batch
/// rows, started from `from` (null: zero), its final state of `finalType`.
CombinedOp emitPart(OpBuilder &b, Location loc, CombinedOp layer,
                    int64_t chunk, OpFoldResult offset, OpFoldResult size,
                    Value from, Type finalType) {
  Value x = tokenSlice(b, loc, layer.getX(), offset, size);
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(layer.getY().getType());
  return CombinedOp::create(
      b, loc, RankedTensorType::get(xType.getShape(), yType.getElementType()),
      finalType, x, tokenSlice(b, loc, layer.getDt(), offset, size),
      layer.getA(), tokenSlice(b, loc, layer.getB(), offset, size),
      tokenSlice(b, loc, layer.getC(), offset, size), layer.getD(),
      tokenSlice(b, loc, layer.getZ(), offset, size), layer.getDtBias(), from,
      denseCopy(b, loc, tokenSlice(b, loc, layer.getSeqIdx(), offset, size)),
      /*cu_seqlens=*/Value(), b.getI64IntegerAttr(chunk),
      layer.getDtSoftplusAttr(), layer.getDtLimitAttr(),
      layer.getStateTypeAttr());
}

/// `y` with `part`'s y inserted at token `offset`.
Value insertTokens(OpBuilder &b, Location loc, CombinedOp part, Value y,
                   OpFoldResult offset) {
  TokenWindow w(b, cast<RankedTensorType>(y.getType()).getRank(), offset);
  return tensor::InsertSliceOp::create(
      b, loc, part.getY(), y, w.offsets,
      tensor::getMixedSizes(b, loc, part.getY()), w.strides);
}

/// One segment's op: `layer` on tokens [offset, offset + size), started from
/// `from` (startState), its final state of `finalType`. Returns `y` with the
/// segment's output inserted, and its final state.
std::pair<Value, Value> emitSegment(OpBuilder &b, Location loc,
                                    CombinedOp layer, int64_t chunk,
                                    OpFoldResult offset, OpFoldResult size,
                                    Value y, Value from, Type finalType) {
  CombinedOp part = emitPart(
      b, loc, layer, chunk, offset, size,
      startState(b, loc, layer.getSeqIdx(), offset, size, from), finalType);
  return {insertTokens(b, loc, part, y, offset), part.getFinalStates()};
}

/// `a + b` on indices, folded where both are constants or one is zero.
OpFoldResult addIndex(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx + *cy);
  if (cx == 0)
    return y;
  if (cy == 0)
    return x;
  return arith::AddIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// `layer` on tokens [first, first + length) of its batch rows, from
/// `state`: a loop over the whole segments of `segment` tokens carrying the
/// state, then one op on the tokens after them (fewer than a segment; with a
/// dynamic length possibly none: an op over no tokens keeps its state).
/// Returns `y` with the outputs inserted, and the final state.
std::pair<Value, Value> emitSegments(OpBuilder &b, Location loc,
                                     CombinedOp layer, int64_t chunk,
                                     int64_t segment, OpFoldResult first,
                                     OpFoldResult length, Value y, Value state,
                                     Type finalType) {
  std::optional<int64_t> staticLength = getConstantIntValue(length);
  Value whole, wholeTokens;
  if (staticLength) {
    whole = arith::ConstantIndexOp::create(b, loc, *staticLength / segment);
  } else {
    Value tokens = getValueOrCreateConstantIndexOp(b, loc, length);
    Value size = arith::ConstantIndexOp::create(b, loc, segment);
    whole = arith::DivUIOp::create(b, loc, tokens, size);
    wholeTokens = arith::MulIOp::create(b, loc, whole, size);
  }
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0), whole,
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{y, state},
      [&](OpBuilder &nb, Location l, Value s, ValueRange carried) {
        OpFoldResult offset = addIndex(
            nb, l, first,
            arith::MulIOp::create(
                nb, l, s, arith::ConstantIndexOp::create(nb, l, segment))
                .getResult());
        auto [yNext, stateNext] =
            emitSegment(nb, l, layer, chunk, offset, nb.getIndexAttr(segment),
                        carried[0], carried[1], finalType);
        scf::YieldOp::create(nb, l, ValueRange{yNext, stateNext});
      });
  loop->setAttr(kSegmentLoopAttr, b.getUnitAttr());
  y = loop.getResult(0);
  state = loop.getResult(1);
  if (staticLength && *staticLength % segment == 0)
    return {y, state};
  OpFoldResult restStart, rest;
  if (staticLength) {
    restStart = addIndex(b, loc, first,
                         b.getIndexAttr(*staticLength / segment * segment));
    rest = b.getIndexAttr(*staticLength % segment);
  } else {
    restStart = addIndex(b, loc, first, wholeTokens);
    rest = arith::SubIOp::create(
               b, loc, getValueOrCreateConstantIndexOp(b, loc, length),
               wholeTokens)
               .getResult();
  }
  return emitSegment(b, loc, layer, chunk, restStart, rest, y, state,
                     finalType);
}

/// A zero f32 state of `sizes`.
Value zeroState(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  return tensor::SplatOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)), sizes);
}

/// The sizes of `layer`'s final state, with x's batch.
SmallVector<OpFoldResult> stateSizes(OpBuilder &b, Location loc,
                                     CombinedOp layer) {
  auto stateType = cast<RankedTensorType>(layer.getFinalStates().getType());
  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(b, loc, layer.getX(), 0)};
  for (int64_t d = 1; d < stateType.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(stateType.getDimSize(d)));
  return sizes;
}

/// Whether the op has a dimension of static size 0: nothing to compute, and
/// the lowering says what it makes of that.
bool hasEmptyDimension(CombinedOp op) {
  auto xType = cast<RankedTensorType>(op.getX().getType());
  auto bType = cast<RankedTensorType>(op.getB().getType());
  return llvm::is_contained(xType.getShape(), 0) ||
         llvm::is_contained(bType.getShape(), 0);
}

/// Row `i` of a (s, ...) tensor as a (1, ...) tensor of `rowType`.
Value extractRow(OpBuilder &b, Location loc, Value tensor, Value i,
                 RankedTensorType rowType) {
  int64_t rank = rowType.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets[0] = i;
  for (int64_t d : rowType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  return tensor::ExtractSliceOp::create(b, loc, rowType, tensor, offsets,
                                        sizes, strides);
}

/// `into` with `row` (1, ...) inserted as its row `i`.
Value insertRow(OpBuilder &b, Location loc, Value row, Value into, Value i) {
  auto rowType = cast<RankedTensorType>(row.getType());
  int64_t rank = rowType.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets[0] = i;
  for (int64_t d : rowType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  return tensor::InsertSliceOp::create(b, loc, row, into, offsets, sizes,
                                       strides);
}

/// A cu_seqlens layer as a loop over its sequences: sequence i is the layer
/// on tokens [cu[i], cu[i + 1]) started from initial_states[i] (or zero), its
/// final state row i. Chunks never straddle two sequences, so each sequence
/// is chunked as the packed layer chunks it, and the outputs are the packed
/// layer's. With an f32 state each sequence is walked in segments; an f16
/// state (rounded at every segment boundary) keeps one op per sequence.
LogicalResult splitPackedSequences(RewriterBase &rewriter, CombinedOp op,
                                   int64_t chunk, int64_t segment) {
  if (hasEmptyDimension(op))
    return rewriter.notifyMatchFailure(op, "an empty dimension");
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  Value cu = op.getCuSeqlens();
  Value count = arith::SubIOp::create(
      rewriter, loc, tensor::DimOp::create(rewriter, loc, cu, 0), idx(1));
  Value length = tensor::DimOp::create(rewriter, loc, op.getX(), 1);

  // (s, h, p, n), every row written by its sequence; a sequence's is (1, ...).
  auto finalType = cast<RankedTensorType>(op.getFinalStates().getType());
  int64_t entries = cast<RankedTensorType>(cu.getType()).getDimSize(0);
  SmallVector<OpFoldResult> finalSizes = {
      ShapedType::isDynamic(entries) ? OpFoldResult(count)
                                     : rewriter.getIndexAttr(entries - 1)};
  for (int64_t d = 1; d < finalType.getRank(); ++d)
    finalSizes.push_back(rewriter.getIndexAttr(finalType.getDimSize(d)));
  Value finals = tensor::EmptyOp::create(rewriter, loc, finalSizes,
                                         finalType.getElementType());
  SmallVector<int64_t> rowShape(finalType.getShape());
  rowShape[0] = 1;
  auto rowType = RankedTensorType::get(rowShape, finalType.getElementType());
  auto yType = cast<RankedTensorType>(op.getY().getType());
  Value y = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getX()),
      yType.getElementType());
  bool segments = op.getStateElementType().isF32();
  Value zero;
  if (segments && !op.getInitialStates())
    zero = zeroState(rewriter, loc,
                     getAsIndexOpFoldResult(rewriter.getContext(), rowShape));

  auto loop = scf::ForOp::create(
      rewriter, loc, idx(0), count, idx(1), ValueRange{y, finals},
      [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
        Value lower = arith::ConstantIndexOp::create(b, l, 0);
        auto entry = [&](Value at) -> Value {
          return arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              tensor::ExtractOp::create(b, l, cu, ValueRange{at}));
        };
        // Clamped into [0, L] and non-decreasing, so that values no caller
        // checked never index past the tokens.
        Value first = arith::MinSIOp::create(
            b, l, arith::MaxSIOp::create(b, l, entry(i), lower), length);
        Value next = arith::AddIOp::create(
            b, l, i, arith::ConstantIndexOp::create(b, l, 1));
        Value end = arith::MinSIOp::create(
            b, l, arith::MaxSIOp::create(b, l, entry(next), first), length);
        Value size = arith::SubIOp::create(b, l, end, first);
        Value from;
        if (Value initial = op.getInitialStates())
          from = extractRow(b, l, initial, i, rowType);
        Value yNext, final;
        if (segments) {
          std::tie(yNext, final) =
              emitSegments(b, l, op, chunk, segment, first, size, carried[0],
                           from ? from : zero, rowType);
        } else {
          CombinedOp part =
              emitPart(b, l, op, chunk, first, size, from, rowType);
          yNext = insertTokens(b, l, part, carried[0], first);
          final = part.getFinalStates();
        }
        scf::YieldOp::create(
            b, l, ValueRange{yNext, insertRow(b, l, final, carried[1], i)});
      });
  loop->setAttr(kSequenceLoopAttr, rewriter.getUnitAttr());
  rewriter.replaceOp(op, loop.getResults());
  return success();
}

} // namespace

LogicalResult ssd::splitSequence(RewriterBase &rewriter, CombinedOp op,
                                 int64_t chunkSize, int64_t segmentChunks) {
  int64_t chunk = chunkSize > 0 ? chunkSize : op.getChunkSize();
  int64_t segment = segmentChunks * chunk;
  if (op.getCuSeqlens())
    return splitPackedSequences(rewriter, op, chunk, segment);
  if (!op.getStateElementType().isF32())
    return rewriter.notifyMatchFailure(op, "state precision is not f32");
  if (hasEmptyDimension(op))
    return rewriter.notifyMatchFailure(op, "an empty dimension");
  int64_t seqLen = cast<RankedTensorType>(op.getX().getType()).getDimSize(1);
  if (!ShapedType::isDynamic(seqLen) && seqLen <= segment)
    return rewriter.notifyMatchFailure(op, "one segment");

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value state = op.getInitialStates();
  if (!state)
    state = zeroState(rewriter, loc, stateSizes(rewriter, loc, op));
  auto yType = cast<RankedTensorType>(op.getY().getType());
  Value y = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getX()),
      yType.getElementType());
  auto [yOut, final] = emitSegments(
      rewriter, loc, op, chunk, segment, rewriter.getIndexAttr(0),
      tensor::getMixedSize(rewriter, loc, op.getX(), 1), y, state,
      op.getFinalStates().getType());
  rewriter.replaceOp(op, ValueRange{yOut, final});
  return success();
}

namespace {

struct SplitSequencePass : ssd::impl::SSDSplitSequenceBase<SplitSequencePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t q = chunkSize;
    if (failed(checkChunkSizeOption(getOperation(), getArgument(), q)))
      return signalPassFailure();
    int64_t chunks = segmentChunks;
    if (chunks <= 0) {
      emitError(getOperation()->getLoc())
          << "ssd-split-sequence: segment-chunks must be positive, got "
          << chunks;
      return signalPassFailure();
    }
    // Each op once, as it was: the segment ops are not split again.
    SmallVector<CombinedOp> layers;
    getOperation()->walk([&](CombinedOp op) { layers.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (CombinedOp op : layers)
      (void)splitSequence(rewriter, op, q, chunks);
  }
};

} // namespace
