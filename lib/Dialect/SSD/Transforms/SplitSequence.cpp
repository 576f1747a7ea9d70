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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace ssd {
#define GEN_PASS_DEF_SSDSPLITSEQUENCE
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd;

namespace {

/// Tokens [offset, offset + size) of a (b, L, ...) operand, or null.
Value tokenSlice(OpBuilder &b, Location loc, Value operand, Value offset,
                 int64_t size) {
  if (!operand)
    return Value();
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets[1] = offset;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(d == 1 ? size : type.getDimSize(d)));
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = size;
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, operand, offsets,
                                        sizes, strides);
}

struct SplitCombined : OpRewritePattern<CombinedOp> {
  SplitCombined(MLIRContext *ctx, int64_t chunkSize, int64_t segmentChunks)
      : OpRewritePattern(ctx), chunkSizeOverride(chunkSize),
        segmentChunks(segmentChunks) {}

  LogicalResult matchAndRewrite(CombinedOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSeqIdx() || op.getCuSeqlens())
      return rewriter.notifyMatchFailure(op, "seq_idx or cu_seqlens");
    if (!op.getStateElementType().isF32())
      return rewriter.notifyMatchFailure(op, "state precision is not f32");
    auto xType = cast<RankedTensorType>(op.getX().getType());
    int64_t batch = xType.getDimSize(0), seqLen = xType.getDimSize(1);
    if (ShapedType::isDynamic(batch) || ShapedType::isDynamic(seqLen))
      return rewriter.notifyMatchFailure(op, "dynamic batch or length");
    // Nothing to compute: the lowering says what it makes of that.
    auto bType = cast<RankedTensorType>(op.getB().getType());
    if (llvm::is_contained(xType.getShape(), 0) ||
        llvm::is_contained(bType.getShape(), 0))
      return rewriter.notifyMatchFailure(op, "an empty dimension");
    int64_t chunk =
        chunkSizeOverride > 0 ? chunkSizeOverride : op.getChunkSize();
    int64_t segment = segmentChunks * chunk;
    int64_t whole = seqLen / segment, rest = seqLen % segment;
    // Also what stops the segment ops themselves from being split again.
    if (whole == 0 || (whole == 1 && rest == 0))
      return rewriter.notifyMatchFailure(op, "one segment");

    Location loc = op.getLoc();
    auto stateType = cast<RankedTensorType>(op.getFinalStates().getType());
    Value state = op.getInitialStates();
    if (!state)
      state = arith::ConstantOp::create(
          rewriter, loc, stateType,
          DenseElementsAttr::get(stateType, rewriter.getF32FloatAttr(0.0f)));
    auto yType = cast<RankedTensorType>(op.getY().getType());
    Value y = tensor::EmptyOp::create(rewriter, loc, yType.getShape(),
                                      yType.getElementType());

    // One segment's op: the slices at `offset`, started from `from`; returns
    // y with the segment inserted, and the segment's final state.
    auto emitSegment = [&](OpBuilder &b, Value offset, int64_t size, Value yAcc,
                           Value from) -> std::pair<Value, Value> {
      SmallVector<int64_t> yShape(yType.getShape());
      yShape[1] = size;
      auto part = CombinedOp::create(
          b, loc, RankedTensorType::get(yShape, yType.getElementType()),
          stateType, tokenSlice(b, loc, op.getX(), offset, size),
          tokenSlice(b, loc, op.getDt(), offset, size), op.getA(),
          tokenSlice(b, loc, op.getB(), offset, size),
          tokenSlice(b, loc, op.getC(), offset, size), op.getD(),
          tokenSlice(b, loc, op.getZ(), offset, size), op.getDtBias(), from,
          /*seq_idx=*/Value(), /*cu_seqlens=*/Value(),
          b.getI64IntegerAttr(chunk), op.getDtSoftplusAttr(),
          op.getDtLimitAttr(), op.getStateTypeAttr());
      int64_t rank = yType.getRank();
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
          strides(rank, b.getIndexAttr(1));
      offsets[1] = offset;
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(b.getIndexAttr(yShape[d]));
      Value inserted = tensor::InsertSliceOp::create(b, loc, part.getY(), yAcc,
                                                     offsets, sizes, strides);
      return {inserted, part.getFinalStates()};
    };

    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
    };
    auto loop = scf::ForOp::create(
        rewriter, loc, idx(0), idx(whole), idx(1), ValueRange{y, state},
        [&](OpBuilder &b, Location l, Value s, ValueRange carried) {
          Value offset = arith::MulIOp::create(
              b, l, s, arith::ConstantIndexOp::create(b, l, segment));
          auto [yNext, stateNext] =
              emitSegment(b, offset, segment, carried[0], carried[1]);
          scf::YieldOp::create(b, l, ValueRange{yNext, stateNext});
        });
    loop->setAttr(kSegmentLoopAttr, rewriter.getUnitAttr());
    y = loop.getResult(0);
    state = loop.getResult(1);
    if (rest > 0)
      std::tie(y, state) =
          emitSegment(rewriter, idx(whole * segment), rest, y, state);
    rewriter.replaceOp(op, ValueRange{y, state});
    return success();
  }

  int64_t chunkSizeOverride, segmentChunks;
};

struct SplitSequencePass : ssd::impl::SSDSplitSequenceBase<SplitSequencePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t q = chunkSize;
    // Reported at the location alone: the options are wrong, not the IR.
    if (q != 0 && (q < 0 || !llvm::isPowerOf2_64(static_cast<uint64_t>(q)))) {
      emitError(getOperation()->getLoc())
          << "ssd-split-sequence: chunk-size must be a positive power of two "
             "or 0, got "
          << q;
      return signalPassFailure();
    }
    int64_t chunks = segmentChunks;
    if (chunks <= 0) {
      emitError(getOperation()->getLoc())
          << "ssd-split-sequence: segment-chunks must be positive, got "
          << chunks;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateSSDSplitSequencePatterns(patterns, q, chunks);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void ssd::populateSSDSplitSequencePatterns(RewritePatternSet &patterns,
                                           int64_t chunkSize,
                                           int64_t segmentChunks) {
  patterns.add<SplitCombined>(patterns.getContext(), chunkSize, segmentChunks);
}
