//===- SplitSequence.cpp - ssd.combined as a loop over segments -----------===//
//
// The layer over tokens [0, L) is the layer over [0, t) followed by the
// layer over [t, L) started from the state at t. Cutting the sequence into
// segments of whole chunks keeps every intermediate the step ops produce
// (chunk states, passed states, scaled x: each as large as the input at the
// 2.7B layer) segment-sized, which is what lets the CPU backend run out of
// caches instead of faulting hundreds of MB in per call. With seq_idx a
// segment starts from zero in the batch rows where a sequence starts at its
// first token.
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

/// One segment's op: `layer` on tokens [offset, offset + size), started from
/// `from` (startState). Returns `y` with the segment's output inserted,
/// and its final state.
std::pair<Value, Value> emitSegment(OpBuilder &b, Location loc,
                                    CombinedOp layer, int64_t chunk,
                                    OpFoldResult offset, OpFoldResult size,
                                    Value y, Value from) {
  Value x = tokenSlice(b, loc, layer.getX(), offset, size);
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(layer.getY().getType());
  auto part = CombinedOp::create(
      b, loc, RankedTensorType::get(xType.getShape(), yType.getElementType()),
      layer.getFinalStates().getType(), x,
      tokenSlice(b, loc, layer.getDt(), offset, size), layer.getA(),
      tokenSlice(b, loc, layer.getB(), offset, size),
      tokenSlice(b, loc, layer.getC(), offset, size), layer.getD(),
      tokenSlice(b, loc, layer.getZ(), offset, size), layer.getDtBias(),
      startState(b, loc, layer.getSeqIdx(), offset, size, from),
      denseCopy(b, loc, tokenSlice(b, loc, layer.getSeqIdx(), offset, size)),
      /*cu_seqlens=*/Value(), b.getI64IntegerAttr(chunk),
      layer.getDtSoftplusAttr(), layer.getDtLimitAttr(),
      layer.getStateTypeAttr());
  TokenWindow w(b, yType.getRank(), offset);
  Value inserted = tensor::InsertSliceOp::create(
      b, loc, part.getY(), y, w.offsets,
      tensor::getMixedSizes(b, loc, part.getY()), w.strides);
  return {inserted, part.getFinalStates()};
}

} // namespace

LogicalResult ssd::splitSequence(RewriterBase &rewriter, CombinedOp op,
                                 int64_t chunkSize, int64_t segmentChunks) {
  if (op.getCuSeqlens())
    return rewriter.notifyMatchFailure(op, "cu_seqlens");
  if (!op.getStateElementType().isF32())
    return rewriter.notifyMatchFailure(op, "state precision is not f32");
  // Nothing to compute: the lowering says what it makes of that.
  auto xType = cast<RankedTensorType>(op.getX().getType());
  auto bType = cast<RankedTensorType>(op.getB().getType());
  if (llvm::is_contained(xType.getShape(), 0) ||
      llvm::is_contained(bType.getShape(), 0))
    return rewriter.notifyMatchFailure(op, "an empty dimension");
  int64_t chunk = chunkSize > 0 ? chunkSize : op.getChunkSize();
  int64_t segment = segmentChunks * chunk;
  int64_t seqLen = xType.getDimSize(1);
  bool staticLength = !ShapedType::isDynamic(seqLen);
  if (staticLength && seqLen <= segment)
    return rewriter.notifyMatchFailure(op, "one segment");

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  // Whole segments, and where the rest starts: static when L is.
  Value length, whole, restStart;
  if (staticLength) {
    whole = idx(seqLen / segment);
    restStart = idx(seqLen / segment * segment);
  } else {
    length = tensor::DimOp::create(rewriter, loc, op.getX(), 1);
    whole = arith::DivUIOp::create(rewriter, loc, length, idx(segment));
    restStart = arith::MulIOp::create(rewriter, loc, whole, idx(segment));
  }

  Value state = op.getInitialStates();
  if (!state) {
    // Zero, shaped like the final state: (b, h, p, n) with x's batch.
    auto stateType = cast<RankedTensorType>(op.getFinalStates().getType());
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(rewriter, loc, op.getX(), 0)};
    for (int64_t d = 1; d < stateType.getRank(); ++d)
      sizes.push_back(rewriter.getIndexAttr(stateType.getDimSize(d)));
    state = tensor::SplatOp::create(
        rewriter, loc,
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0)),
        sizes);
  }
  auto yType = cast<RankedTensorType>(op.getY().getType());
  Value y = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getX()),
      yType.getElementType());
  auto loop = scf::ForOp::create(
      rewriter, loc, idx(0), whole, idx(1), ValueRange{y, state},
      [&](OpBuilder &b, Location l, Value s, ValueRange carried) {
        Value offset = arith::MulIOp::create(
            b, l, s, arith::ConstantIndexOp::create(b, l, segment));
        auto [yNext, stateNext] =
            emitSegment(b, l, op, chunk, offset, b.getIndexAttr(segment),
                        carried[0], carried[1]);
        scf::YieldOp::create(b, l, ValueRange{yNext, stateNext});
      });
  loop->setAttr(kSegmentLoopAttr, rewriter.getUnitAttr());
  y = loop.getResult(0);
  state = loop.getResult(1);
  // The tokens after the whole segments: fewer than a segment, and with a
  // dynamic L possibly none (an op over no tokens keeps its state).
  if (!staticLength || seqLen % segment != 0) {
    OpFoldResult rest =
        staticLength ? OpFoldResult(rewriter.getIndexAttr(seqLen % segment))
                     : OpFoldResult(arith::SubIOp::create(rewriter, loc, length,
                                                          restStart)
                                        .getResult());
    std::tie(y, state) =
        emitSegment(rewriter, loc, op, chunk, restStart, rest, y, state);
  }
  rewriter.replaceOp(op, ValueRange{y, state});
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
