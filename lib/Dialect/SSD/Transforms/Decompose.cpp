//===- Decompose.cpp - ssd.combined into the six step ops -----------------===//
//
// The data flow of the five-kernel reference implementation:
//   chunk_cumsum -> chunk_state -> state_passing -> bmm -> chunk_scan,
// with segsum made explicit where chunk_scan applies the decay matrix.
//
//===----------------------------------------------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "PassOptions.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace ssd {
#define GEN_PASS_DEF_SSDDECOMPOSE
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd;

namespace {

/// Static sizes of one combined op; dynamic ones are ShapedType::kDynamic.
struct SSDSizes {
  int64_t batch, seqLen, heads, headDim, groups, state, chunkSize, numChunks;

  static SSDSizes get(CombinedOp op, int64_t chunkSize) {
    auto x = cast<RankedTensorType>(op.getX().getType());
    auto b = cast<RankedTensorType>(op.getB().getType());
    SSDSizes s;
    s.batch = x.getDimSize(0);
    s.seqLen = x.getDimSize(1);
    s.heads = x.getDimSize(2);
    s.headDim = x.getDimSize(3);
    s.groups = b.getDimSize(2);
    s.state = b.getDimSize(3);
    s.chunkSize = chunkSize;
    s.numChunks = ShapedType::kDynamic;
    std::optional<int64_t> numSeqs;
    if (Value cu = op.getCuSeqlens()) {
      int64_t entries = cast<RankedTensorType>(cu.getType()).getDimSize(0);
      if (!ShapedType::isDynamic(entries))
        numSeqs = entries - 1;
    }
    bool knowSeqs = !op.getCuSeqlens() || numSeqs;
    if (!ShapedType::isDynamic(s.seqLen) && knowSeqs) {
      s.numChunks = llvm::divideCeil(s.seqLen, chunkSize);
      if (numSeqs)
        s.numChunks += *numSeqs - 1;
    }
    return s;
  }
};

struct DecomposeCombined : OpRewritePattern<CombinedOp> {
  DecomposeCombined(MLIRContext *ctx, int64_t chunkSize)
      : OpRewritePattern(ctx), chunkSizeOverride(chunkSize) {}

  LogicalResult matchAndRewrite(CombinedOp op,
                                PatternRewriter &rewriter) const override {
    int64_t chunkSize =
        chunkSizeOverride > 0 ? chunkSizeOverride : op.getChunkSize();
    SSDSizes s = SSDSizes::get(op, chunkSize);
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Type stateType = op.getStateElementType();
    auto tensor = [](ArrayRef<int64_t> shape, Type elementType) {
      return RankedTensorType::get(shape, elementType);
    };
    auto chunkVector =
        tensor({s.batch, s.heads, s.numChunks, s.chunkSize}, f32);
    auto chunkMatrix =
        tensor({s.batch, s.heads, s.numChunks, s.chunkSize, s.chunkSize}, f32);
    auto groupMatrix =
        tensor({s.batch, s.numChunks, s.groups, s.chunkSize, s.chunkSize}, f32);
    auto chunkStates = [&](Type elementType) {
      return tensor({s.batch, s.numChunks, s.heads, s.headDim, s.state},
                    elementType);
    };
    Value seqIdx = op.getSeqIdx(), cuSeqlens = op.getCuSeqlens();

    auto cumsum = ChunkCumsumOp::create(
        rewriter, loc, chunkVector, chunkVector, op.getDt(), op.getA(),
        op.getDtBias(), cuSeqlens, op.getDtSoftplusAttr(), op.getDtLimitAttr());
    auto states = ChunkStateOp::create(rewriter, loc, chunkStates(f32),
                                       op.getX(), op.getB(), cumsum.getDtOut(),
                                       cumsum.getDACumsum(), seqIdx, cuSeqlens);
    auto passed = StatePassingOp::create(
        rewriter, loc, chunkStates(stateType), op.getFinalStates().getType(),
        states.getStates(), cumsum.getDACumsum(), op.getInitialStates(), seqIdx,
        cuSeqlens);
    auto cb = BmmOp::create(rewriter, loc, groupMatrix, op.getC(), op.getB(),
                            seqIdx, cuSeqlens);
    auto segsum =
        SegsumOp::create(rewriter, loc, chunkMatrix, cumsum.getDACumsum());
    auto scan = ChunkScanOp::create(
        rewriter, loc, op.getY().getType(), op.getX(), cumsum.getDtOut(),
        cumsum.getDACumsum(), segsum.getSegsum(), op.getC(), cb.getCB(),
        passed.getOut(), op.getD(), op.getZ(), seqIdx, cuSeqlens);
    rewriter.replaceOp(op, {scan.getY(), passed.getFinalStates()});
    return success();
  }

  int64_t chunkSizeOverride;
};

struct SSDDecomposePass : ssd::impl::SSDDecomposeBase<SSDDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t q = chunkSize;
    if (failed(checkChunkSizeOption(getOperation(), getArgument(), q)))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateSSDDecomposePatterns(patterns, q);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void ssd::populateSSDDecomposePatterns(RewritePatternSet &patterns,
                                       int64_t chunkSize) {
  patterns.add<DecomposeCombined>(patterns.getContext(), chunkSize);
}
