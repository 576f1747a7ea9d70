//===- Vectorize.cpp - register tiling and vectorization for the CPU ------===//
//
// The heavy work of the SSD on the CPU is four batched matrix products that
// convert-ssd-to-linalg emits as linalg.generic contractions. Each is tiled
// to an M x N register tile (batch dimensions to 1) with a K step, and the
// tile is vectorized into one vector.contract; after bufferization the
// accumulator transfers are hoisted out of the K loop so the tile lives in
// registers, and vector.contract becomes a chain of FMAs (outer products).
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace ssd {
#define GEN_PASS_DEF_SSDCPUTILEANDVECTORIZE
#define GEN_PASS_DEF_SSDCPULOWERVECTORS
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

namespace {

/// Tile sizes for one contraction: 1 on batch and outer dimensions, the
/// register tile on the innermost M, N and K dimensions, clamped to the
/// dimension. Fails when a static size is not a multiple of its tile (the
/// op then stays scalar rather than needing masks).
FailureOr<SmallVector<int64_t>> registerTile(linalg::LinalgOp op, int64_t m,
                                             int64_t n, int64_t k) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tiles(ranges.size(), 1);
  auto setInnermost = [&](ArrayRef<unsigned> group, int64_t size) {
    unsigned d = *llvm::max_element(group);
    int64_t range = ranges[d];
    if (ShapedType::isDynamic(range))
      return false;
    tiles[d] = std::min(size, range);
    return range % tiles[d] == 0;
  };
  if (!setInnermost(dims->m, m) || !setInnermost(dims->n, n) ||
      !setInnermost(dims->k, k))
    return failure();
  return tiles;
}

struct TileAndVectorizePass
    : ssd::impl::SSDCPUTileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && linalg::isaContractionOpInterface(op))
        contractions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : contractions) {
      FailureOr<SmallVector<int64_t>> tiles =
          registerTile(op, tileM, tileN, tileK);
      if (failed(tiles))
        continue;
      rewriter.setInsertionPoint(op);
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), *tiles));
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      rewriter.replaceOp(op, tiled->replacements);
      for (Operation *tile : tiled->tiledOps) {
        rewriter.setInsertionPoint(tile);
        // Emit vector.contract directly (not broadcast + multi_reduction),
        // which the contract lowering turns into outer-product FMAs.
        FailureOr<linalg::VectorizationResult> vec = linalg::vectorize(
            rewriter, tile, /*inputVectorSizes=*/{},
            /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
            /*flatten1DDepthwiseConv=*/false,
            /*assumeDynamicDimsMatchVecSizes=*/false,
            /*createNamedContraction=*/true);
        if (succeeded(vec))
          rewriter.replaceOp(tile, vec->replacements);
      }
    }
    // Fold the unit dimensions the tiling left on the vectors so the
    // contractions are plain 2-D matmul tiles.
    RewritePatternSet patterns(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

struct LowerVectorsPass
    : ssd::impl::SSDCPULowerVectorsBase<LowerVectorsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    linalg::hoistRedundantVectorTransfers(func);
    RewritePatternSet patterns(&getContext());
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
