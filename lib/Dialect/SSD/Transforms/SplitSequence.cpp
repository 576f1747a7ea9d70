//===- SplitSequence.cpp - ssd.combined as a loop over segments -----------===//
//
// The layer over tokens [0, L) is the layer over [0, t) followed by the
// layer over [t, L) started from the state at t. Cutting the sequence into
// segments of whole chunks keeps every intermediate the step ops produce
// (chunk states, passed states, scaled x: each as large as the input at the
// 2.7B layer) segment-sized, which is what lets the CPU backend run out of
// caches instead of faulting hundreds of MB in per call.
//
//===----------------------------------------------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "PassOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// One segment's op: `layer` on tokens [offset, offset + size), started from
/// `from`. Returns `y` with the segment's output inserted, and its final
/// state.
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
      tokenSlice(b, loc, layer.getZ(), offset, size), layer.getDtBias(), from,
      /*seq_idx=*/Value(), /*cu_seqlens=*/Value(), b.getI64IntegerAttr(chunk),
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
  if (op.getSeqIdx() || op.getCuSeqlens())
    return rewriter.notifyMatchFailure(op, "seq_idx or cu_seqlens");
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
