//===- SplitSequence.cpp - ssd.combined as a loop over segments -----------===//
//
// The layer over tokens [0, L) is the layer over [0, t) followed by the
// layer over [t, L) started from the state at t. Cutting the sequence into
// segments of whole chunks keeps every intermediate the step ops produce
// (chunk states, passed states, scaled x: each as large as the input at the
// 2.7B layer) segment-sized, which is what lets the CPU backend run out of
// caches instead of faulting hundreds of MB in per call. With seq_idx a
// segment starts from zero in the batch rows where a sequence starts at its
// first token. A cu_seqlens layer becomes a loop over its sequences, and a
// layer whose batch is dynamic (the C API's) a loop over its batch rows:
// each is then a layer of one static batch row, walked in segments from its
// own initial state, which the CPU backend tiles and spreads over threads as
// it does a static layer.
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

/// The part of a layer one op computes: batch rows [rowOffset, rowOffset +
/// rows) (rows null: every row) and tokens [tokenOffset, tokenOffset +
/// tokens).
struct Window {
  OpFoldResult rowOffset, rows;
  OpFoldResult tokenOffset, tokens;

  /// Window `w`'s rows with tokens [offset, offset + size).
  Window withTokens(OpFoldResult offset, OpFoldResult size) const {
    return {rowOffset, rows, offset, size};
  }
};

/// The offsets, sizes and unit strides of window `w` in a (b, L, ...)
/// tensor `operand`.
struct SliceBounds {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SliceBounds() = default;
  SliceBounds(OpBuilder &b, Location loc, Value operand, const Window &w) {
    int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
    for (int64_t d = 0; d < rank; ++d) {
      offsets.push_back(d == 0 && w.rows ? w.rowOffset
                        : d == 1         ? w.tokenOffset
                                         : b.getIndexAttr(0));
      sizes.push_back(d == 0 && w.rows ? w.rows
                      : d == 1         ? w.tokens
                               : tensor::getMixedSize(b, loc, operand, d));
      strides.push_back(b.getIndexAttr(1));
    }
  }
};

/// Window `w` of a (b, L, ...) operand, or null.
Value windowSlice(OpBuilder &b, Location loc, Value operand, const Window &w) {
  if (!operand)
    return Value();
  SliceBounds s(b, loc, operand, w);
  return tensor::ExtractSliceOp::create(b, loc, operand, s.offsets, s.sizes,
                                        s.strides);
}

/// The state a segment starting at token `offset` of window `w`'s rows
/// starts from: `from`, the state after token offset - 1, or with seq_idx
/// zero in the batch rows where a sequence starts at `offset` (the layer
/// resets the state where seq_idx changes, and the segment's own op sees no
/// token before its first). At offset 0 the token compared with is itself.
Value continuedState(OpBuilder &b, Location loc, Value seqIdx, const Window &w,
                     OpFoldResult offset, Value from) {
  if (!seqIdx)
    return from;
  Value at = getValueOrCreateConstantIndexOp(b, loc, offset);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value before = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, at, one), zero);
  auto column = [&](Value token) {
    return windowSlice(b, loc, seqIdx, w.withTokens(token, b.getIndexAttr(1)));
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

/// continuedState for the segment `w`; where its size is dynamic (the
/// tokens after the whole segments of a dynamic L, possibly none) only when
/// it holds a token: an empty segment keeps `from`, and reads no seq_idx
/// past the sequence's end.
Value startState(OpBuilder &b, Location loc, Value seqIdx, const Window &w,
                 Value from) {
  if (!seqIdx || getConstantIntValue(w.tokens))
    return continuedState(b, loc, seqIdx, w, w.tokenOffset, from);
  Value tokens =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                            getValueOrCreateConstantIndexOp(b, loc, w.tokens),
                            arith::ConstantIndexOp::create(b, loc, 0));
  auto pick = scf::IfOp::create(
      b, loc, tokens,
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(
            nb, l, continuedState(nb, l, seqIdx, w, w.tokenOffset, from));
      },
      [&](OpBuilder &nb, Location l) { scf::YieldOp::create(nb, l, from); });
  return pick.getResult(0);
}

/// `layer` without cu_seqlens on window `w`, started from `from` (null:
/// zero), its final state of `finalType`.
CombinedOp emitPart(OpBuilder &b, Location loc, CombinedOp layer, int64_t chunk,
                    const Window &w, Value from, Type finalType) {
  Value x = windowSlice(b, loc, layer.getX(), w);
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(layer.getY().getType());
  return CombinedOp::create(
      b, loc, RankedTensorType::get(xType.getShape(), yType.getElementType()),
      finalType, x, windowSlice(b, loc, layer.getDt(), w), layer.getA(),
      windowSlice(b, loc, layer.getB(), w),
      windowSlice(b, loc, layer.getC(), w), layer.getD(),
      windowSlice(b, loc, layer.getZ(), w), layer.getDtBias(), from,
      windowSlice(b, loc, layer.getSeqIdx(), w),
      /*cu_seqlens=*/Value(), b.getI64IntegerAttr(chunk),
      layer.getDtSoftplusAttr(), layer.getDtLimitAttr(),
      layer.getStateTypeAttr());
}

/// `y` with `part`'s y inserted at window `w`.
Value insertWindow(OpBuilder &b, Location loc, CombinedOp part, Value y,
                   const Window &w) {
  SliceBounds s(b, loc, y, w);
  return tensor::InsertSliceOp::create(
      b, loc, part.getY(), y, s.offsets,
      tensor::getMixedSizes(b, loc, part.getY()), s.strides);
}

/// One segment's op: `layer` on window `w`, started from `from`
/// (startState), its final state of `finalType`. Returns `y` with the
/// segment's output inserted, and its final state.
std::pair<Value, Value> emitSegment(OpBuilder &b, Location loc,
                                    CombinedOp layer, int64_t chunk,
                                    const Window &w, Value y, Value from,
                                    Type finalType) {
  CombinedOp part =
      emitPart(b, loc, layer, chunk, w,
               startState(b, loc, layer.getSeqIdx(), w, from), finalType);
  return {insertWindow(b, loc, part, y, w), part.getFinalStates()};
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
  return arith::AddIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// `layer` on window `w`, from `state`: a loop over the whole segments of
/// `segment` tokens carrying the state, then one op on the tokens after
/// them (fewer than a segment; with a dynamic length possibly none: an op
/// over no tokens keeps its state). Returns `y` with the outputs inserted,
/// and the final state.
std::pair<Value, Value> emitSegments(OpBuilder &b, Location loc,
                                     CombinedOp layer, int64_t chunk,
                                     int64_t segment, const Window &w, Value y,
                                     Value state, Type finalType) {
  std::optional<int64_t> staticLength = getConstantIntValue(w.tokens);
  Value whole, wholeTokens;
  if (staticLength) {
    whole = arith::ConstantIndexOp::create(b, loc, *staticLength / segment);
  } else {
    Value size = arith::ConstantIndexOp::create(b, loc, segment);
    whole = arith::DivUIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, w.tokens), size);
    wholeTokens = arith::MulIOp::create(b, loc, whole, size);
  }
  if (!staticLength || *staticLength >= segment) {
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0), whole,
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{y, state},
        [&](OpBuilder &nb, Location l, Value s, ValueRange carried) {
          OpFoldResult offset = addIndex(
              nb, l, w.tokenOffset,
              arith::MulIOp::create(
                  nb, l, s, arith::ConstantIndexOp::create(nb, l, segment))
                  .getResult());
          auto [yNext, stateNext] =
              emitSegment(nb, l, layer, chunk,
                          w.withTokens(offset, nb.getIndexAttr(segment)),
                          carried[0], carried[1], finalType);
          scf::YieldOp::create(nb, l, ValueRange{yNext, stateNext});
        });
    loop->setAttr(kSegmentLoopAttr, b.getUnitAttr());
    y = loop.getResult(0);
    state = loop.getResult(1);
  }
  if (staticLength && *staticLength % segment == 0)
    return {y, state};
  OpFoldResult restStart, rest;
  if (staticLength) {
    restStart = addIndex(b, loc, w.tokenOffset,
                         b.getIndexAttr(*staticLength / segment * segment));
    rest = b.getIndexAttr(*staticLength % segment);
  } else {
    restStart = addIndex(b, loc, w.tokenOffset, wholeTokens);
    rest = arith::SubIOp::create(
               b, loc, getValueOrCreateConstantIndexOp(b, loc, w.tokens),
               wholeTokens)
               .getResult();
  }
  return emitSegment(b, loc, layer, chunk, w.withTokens(restStart, rest), y,
                     state, finalType);
}

/// An empty tensor for `layer`'s y, shaped like its x.
Value emptyOutput(OpBuilder &b, Location loc, CombinedOp layer) {
  return tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, layer.getX()),
      cast<RankedTensorType>(layer.getY().getType()).getElementType());
}

/// A zero f32 state of `sizes`.
Value zeroState(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  return tensor::SplatOp::create(
      b, loc, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)), sizes);
}

/// Whether the op has a dimension of static size 0: nothing to compute, and
/// the lowering says what it makes of that.
bool hasEmptyDimension(CombinedOp op) {
  auto xType = cast<RankedTensorType>(op.getX().getType());
  auto bType = cast<RankedTensorType>(op.getB().getType());
  return llvm::is_contained(xType.getShape(), 0) ||
         llvm::is_contained(bType.getShape(), 0);
}

/// The bounds of row `i` of a (s, ...) tensor whose rows are `rowType`
/// (1, ...), for extractRow and insertRow.
SliceBounds rowBounds(OpBuilder &b, RankedTensorType rowType, Value i) {
  SliceBounds s;
  for (int64_t d = 0; d < rowType.getRank(); ++d) {
    s.offsets.push_back(d == 0 ? OpFoldResult(i) : b.getIndexAttr(0));
    s.sizes.push_back(b.getIndexAttr(rowType.getDimSize(d)));
    s.strides.push_back(b.getIndexAttr(1));
  }
  return s;
}

/// Row `i` of a (s, ...) tensor, as a tensor of `rowType`.
Value extractRow(OpBuilder &b, Location loc, Value tensor, Value i,
                 RankedTensorType rowType) {
  SliceBounds s = rowBounds(b, rowType, i);
  return tensor::ExtractSliceOp::create(b, loc, rowType, tensor, s.offsets,
                                        s.sizes, s.strides);
}

/// `into` with `row` (1, ...) inserted as its row `i`.
Value insertRow(OpBuilder &b, Location loc, Value row, Value into, Value i) {
  SliceBounds s = rowBounds(b, cast<RankedTensorType>(row.getType()), i);
  return tensor::InsertSliceOp::create(b, loc, row, into, s.offsets, s.sizes,
                                       s.strides);
}

/// `op` as an scf.for over `count` sequences (ssd.sequence_loop): sequence
/// i is the layer on `windowOf(i)`, one batch row and its own tokens,
/// started from row i of the initial states (or zero), its final state row
/// i. With an f32 state each sequence is walked in segments; an f16 state
/// (rounded at every segment boundary) keeps one op per sequence.
void emitSequenceLoop(
    RewriterBase &rewriter, CombinedOp op, int64_t chunk, int64_t segment,
    Value count, OpFoldResult staticCount,
    function_ref<Window(OpBuilder &, Location, Value)> windowOf) {
  Location loc = op.getLoc();
  auto finalType = cast<RankedTensorType>(op.getFinalStates().getType());
  SmallVector<OpFoldResult> finalSizes = {staticCount};
  for (int64_t d = 1; d < finalType.getRank(); ++d)
    finalSizes.push_back(rewriter.getIndexAttr(finalType.getDimSize(d)));
  Value finals = tensor::EmptyOp::create(rewriter, loc, finalSizes,
                                         finalType.getElementType());
  SmallVector<int64_t> rowShape(finalType.getShape());
  rowShape[0] = 1;
  auto rowType = RankedTensorType::get(rowShape, finalType.getElementType());
  Value y = emptyOutput(rewriter, loc, op);
  bool segments = op.getStateElementType().isF32();
  Value zero;
  if (segments && !op.getInitialStates())
    zero = zeroState(rewriter, loc,
                     getAsIndexOpFoldResult(rewriter.getContext(), rowShape));

  auto loop = scf::ForOp::create(
      rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, 0), count,
      arith::ConstantIndexOp::create(rewriter, loc, 1), ValueRange{y, finals},
      [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
        Window w = windowOf(b, l, i);
        Value from;
        if (Value initial = op.getInitialStates())
          from = extractRow(b, l, initial, i, rowType);
        Value yNext, final;
        if (segments) {
          std::tie(yNext, final) =
              emitSegments(b, l, op, chunk, segment, w, carried[0],
                           from ? from : zero, rowType);
        } else {
          CombinedOp part = emitPart(b, l, op, chunk, w, from, rowType);
          yNext = insertWindow(b, l, part, carried[0], w);
          final = part.getFinalStates();
        }
        scf::YieldOp::create(
            b, l, ValueRange{yNext, insertRow(b, l, final, carried[1], i)});
      });
  loop->setAttr(kSequenceLoopAttr, rewriter.getUnitAttr());
  rewriter.replaceOp(op, loop.getResults());
}

/// A cu_seqlens layer as a loop over its sequences: sequence i is the
/// layer's batch row on tokens [cu[i], cu[i + 1]). Chunks never straddle two
/// sequences, so each sequence is chunked as the packed layer chunks it, and
/// the outputs are the packed layer's.
void splitPackedSequences(RewriterBase &rewriter, CombinedOp op, int64_t chunk,
                          int64_t segment) {
  Location loc = op.getLoc();
  Value cu = op.getCuSeqlens();
  Value count = arith::SubIOp::create(
      rewriter, loc, tensor::DimOp::create(rewriter, loc, cu, 0),
      arith::ConstantIndexOp::create(rewriter, loc, 1));
  int64_t entries = cast<RankedTensorType>(cu.getType()).getDimSize(0);
  OpFoldResult staticCount = ShapedType::isDynamic(entries)
                                 ? OpFoldResult(count)
                                 : rewriter.getIndexAttr(entries - 1);
  Value length = tensor::DimOp::create(rewriter, loc, op.getX(), 1);
  emitSequenceLoop(
      rewriter, op, chunk, segment, count, staticCount,
      [&](OpBuilder &b, Location l, Value i) {
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
        return Window{b.getIndexAttr(0), b.getIndexAttr(1), first, size};
      });
}

/// A layer with a dynamic batch (the C API's) as a loop over its batch
/// rows, each a layer of one static row: the CPU backend's chunk loops then
/// run over chunks and heads of a row, and its threads take them, where a
/// dynamic batch loop of one row would run on one thread. Rows are
/// independent, so the outputs are the whole batch's.
void splitBatchRows(RewriterBase &rewriter, CombinedOp op, int64_t chunk,
                    int64_t segment) {
  Location loc = op.getLoc();
  Value rows = tensor::DimOp::create(rewriter, loc, op.getX(), 0);
  OpFoldResult length = tensor::getMixedSize(rewriter, loc, op.getX(), 1);
  emitSequenceLoop(
      rewriter, op, chunk, segment, rows, rows,
      [&](OpBuilder &b, Location l, Value i) {
        return Window{i, b.getIndexAttr(1), b.getIndexAttr(0), length};
      });
}

} // namespace

LogicalResult ssd::splitSequence(RewriterBase &rewriter, CombinedOp op,
                                 int64_t chunkSize, int64_t segmentChunks) {
  if (hasEmptyDimension(op))
    return rewriter.notifyMatchFailure(op, "an empty dimension");
  int64_t chunk = chunkSize > 0 ? chunkSize : op.getChunkSize();
  int64_t segment = segmentChunks * chunk;
  rewriter.setInsertionPoint(op);
  if (op.getCuSeqlens()) {
    splitPackedSequences(rewriter, op, chunk, segment);
    return success();
  }
  auto xType = cast<RankedTensorType>(op.getX().getType());
  if (xType.isDynamicDim(0)) {
    splitBatchRows(rewriter, op, chunk, segment);
    return success();
  }
  if (!op.getStateElementType().isF32())
    return rewriter.notifyMatchFailure(op, "state precision is not f32");
  int64_t seqLen = xType.getDimSize(1);
  if (!ShapedType::isDynamic(seqLen) && seqLen <= segment)
    return rewriter.notifyMatchFailure(op, "one segment");

  Location loc = op.getLoc();
  Value state = op.getInitialStates();
  if (!state) {
    // Shaped like the final state, with x's batch.
    auto stateType = cast<RankedTensorType>(op.getFinalStates().getType());
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(rewriter, loc, op.getX(), 0)};
    for (int64_t d = 1; d < stateType.getRank(); ++d)
      sizes.push_back(rewriter.getIndexAttr(stateType.getDimSize(d)));
    state = zeroState(rewriter, loc, sizes);
  }
  Value y = emptyOutput(rewriter, loc, op);
  Window all = {OpFoldResult(), OpFoldResult(), rewriter.getIndexAttr(0),
                tensor::getMixedSize(rewriter, loc, op.getX(), 1)};
  auto [yOut, final] = emitSegments(rewriter, loc, op, chunk, segment, all, y,
                                    state, op.getFinalStates().getType());
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
