//===- FitChunkSize.cpp - layers of one chunk without the padding ---------===//
//
// The step ops compute every chunk at its full size Q, the last one padded:
// for a layer shorter than Q that padding is all there is, and the
// intra-chunk products cost Q^2 per chunk. A layer of L <= Q' < Q tokens is
// one chunk at Q' as it is at Q (with cu_seqlens every sequence is at most
// L long, so each stays one chunk), so computing it at the smallest such Q'
// is the same computation without the padding.
//
//===----------------------------------------------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "PassOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>

namespace ssd {
#define GEN_PASS_DEF_SSDFITCHUNKSIZE
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd;

namespace {

void setChunk(CombinedOp op, int64_t chunk) {
  op.setChunkSizeAttr(
      IntegerAttr::get(IntegerType::get(op.getContext(), 64), chunk));
}

/// The chunk sizes q / 2, q / 4, ... not below `minChunk`, at most
/// `maxVersions` of them, smallest first.
SmallVector<int64_t> smallerChunks(int64_t q, int64_t minChunk,
                                   int64_t maxVersions) {
  SmallVector<int64_t> sizes;
  for (int64_t c = q / 2;
       c >= minChunk && static_cast<int64_t>(sizes.size()) < maxVersions;
       c /= 2)
    sizes.push_back(c);
  std::reverse(sizes.begin(), sizes.end());
  return sizes;
}

/// `op` as a ladder of scf.if on its token count: a clone at chunk size
/// sizes[i] where the tokens fit in it (the smallest first), `op` itself at
/// its own chunk size otherwise.
void emitLadder(RewriterBase &rewriter, CombinedOp op,
                ArrayRef<int64_t> sizes) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value tokens = tensor::DimOp::create(rewriter, loc, op.getX(), 1);
  std::function<ValueRange(OpBuilder &, size_t)> rung =
      [&](OpBuilder &b, size_t i) -> ValueRange {
    if (i == sizes.size()) {
      Operation *whole = b.clone(*op);
      return whole->getResults();
    }
    Value fits =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, tokens,
                              arith::ConstantIndexOp::create(b, loc, sizes[i]));
    auto pick = scf::IfOp::create(
        b, loc, fits,
        [&](OpBuilder &tb, Location l) {
          auto small = cast<CombinedOp>(tb.clone(*op));
          setChunk(small, sizes[i]);
          scf::YieldOp::create(tb, l, small->getResults());
        },
        [&](OpBuilder &eb, Location l) {
          scf::YieldOp::create(eb, l, rung(eb, i + 1));
        });
    pick->setAttr(kFitRungAttr, b.getI64IntegerAttr(sizes[i]));
    return pick.getResults();
  };
  ValueRange results = rung(rewriter, 0);
  rewriter.replaceOp(op, results);
}

struct FitChunkSizePass : ssd::impl::SSDFitChunkSizeBase<FitChunkSizePass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkChunkSizeOption(root, getArgument(), chunkSize)))
      return signalPassFailure();
    if (minChunkSize <= 0 ||
        !llvm::isPowerOf2_64(static_cast<uint64_t>(minChunkSize))) {
      emitError(root->getLoc())
          << getArgument()
          << ": min-chunk-size must be a positive power of two, got "
          << minChunkSize.getValue();
      return signalPassFailure();
    }
    if (maxVersions < 0) {
      emitError(root->getLoc())
          << getArgument() << ": max-versions must not be negative, got "
          << maxVersions.getValue();
      return signalPassFailure();
    }
    // Each op once, as it was: the ladder's clones are not fitted again.
    SmallVector<CombinedOp> layers;
    root->walk([&](CombinedOp op) { layers.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (CombinedOp op : layers) {
      int64_t q = chunkSize > 0 ? chunkSize : op.getChunkSize();
      setChunk(op, q);
      int64_t tokens =
          cast<RankedTensorType>(op.getX().getType()).getDimSize(1);
      if (!ShapedType::isDynamic(tokens)) {
        // An empty layer keeps its chunk size: nothing is padded.
        if (tokens > 0 && tokens < q)
          setChunk(op,
                   std::min(q, std::max<int64_t>(minChunkSize,
                                                 llvm::PowerOf2Ceil(tokens))));
        continue;
      }
      SmallVector<int64_t> sizes = smallerChunks(q, minChunkSize, maxVersions);
      if (!sizes.empty())
        emitLadder(rewriter, op, sizes);
    }
  }
};

} // namespace
