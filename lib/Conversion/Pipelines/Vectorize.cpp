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
#include "ssd/Conversion/SSDToLinalg.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
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
    if (ShapedType::isDynamic(range) || size <= 0)
      return false;
    tiles[d] = std::min(size, range);
    return range % tiles[d] == 0;
  };
  if (!setInnermost(dims->m, m) || !setInnermost(dims->n, n) ||
      !setInnermost(dims->k, k))
    return failure();
  return tiles;
}

/// Rewrites a tiled contraction whose loops are all 1 except the innermost
/// M, N and K dimensions into a 3-loop contraction over collapsed 2-D tiles
/// (collapse_shape drops the unit dimensions unambiguously). Vectorizing that
/// gives a plain 2-D vector.contract, which lowers to outer-product FMAs;
/// vectorizing the original keeps unit dimensions that the contract lowering
/// handles only element by element.
FailureOr<linalg::GenericOp> collapseToMatmul(RewriterBase &rewriter,
                                              linalg::GenericOp op,
                                              ArrayRef<unsigned> keep) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  // Loop position in the new op of each kept loop dimension.
  DenseMap<unsigned, unsigned> newDim;
  for (auto [i, d] : llvm::enumerate(keep))
    newDim[d] = i;

  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<ReassociationIndices>> reassocs;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      return failure();
    SmallVector<AffineExpr> exprs;
    SmallVector<ReassociationIndices> reassoc;
    ReassociationIndices pending;
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      pending.push_back(pos);
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        return failure();
      if (!newDim.count(dim.getPosition())) {
        if (type.getDimSize(pos) != 1)
          return failure();
        continue;
      }
      exprs.push_back(getAffineDimExpr(newDim[dim.getPosition()], ctx));
      reassoc.push_back(pending);
      pending.clear();
    }
    if (reassoc.empty())
      return failure();
    // Trailing unit dimensions join the last group.
    reassoc.back().append(pending.begin(), pending.end());
    maps.push_back(AffineMap::get(keep.size(), 0, exprs, ctx));
    operands.push_back(tensor::CollapseShapeOp::create(rewriter, loc,
                                                       operand.get(), reassoc));
    reassocs.push_back(reassoc);
  }

  SmallVector<utils::IteratorType> iterators;
  for (unsigned d : keep)
    iterators.push_back(op.getIteratorTypesArray()[d]);
  unsigned numInputs = op.getNumDpsInputs();
  Value init = operands.back();
  auto matmul = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()},
      ArrayRef<Value>(operands).take_front(numInputs), ValueRange{init}, maps,
      iterators);
  rewriter.cloneRegionBefore(op.getRegion(), matmul.getRegion(),
                             matmul.getRegion().begin());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Value expanded = tensor::ExpandShapeOp::create(
      rewriter, loc, resultType, matmul.getResult(0), reassocs.back());
  rewriter.replaceOp(op, expanded);
  return matmul;
}

/// For a contraction marked lower triangular, stops the reduction loop of
/// each row tile [i0, i0 + tm) at the first multiple of the K step past its
/// last row: the remaining terms are zero (half the work of a causal product).
void boundCausalReduction(RewriterBase &rewriter,
                          scf::SCFTilingResult &tiled,
                          const linalg::ContractionDimensions &dims,
                          ArrayRef<int64_t> tiles) {
  unsigned mDim = *llvm::max_element(dims.m);
  unsigned kDim = *llvm::max_element(dims.k);
  // tileUsingSCF creates one loop per tiled dimension, in dimension order;
  // every dimension here has a non-zero tile size.
  if (tiled.loops.size() != tiles.size())
    return;
  auto rows = dyn_cast<scf::ForOp>(tiled.loops[mDim].getOperation());
  auto reduction = dyn_cast<scf::ForOp>(tiled.loops[kDim].getOperation());
  if (!rows || !reduction || kDim <= mDim)
    return;
  Location loc = reduction.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(reduction);
  int64_t tm = tiles[mDim], tk = tiles[kDim];
  // alignTo(i0 + tm, tk) = ((i0 + tm + tk - 1) / tk) * tk.
  Value end = arith::AddIOp::create(
      rewriter, loc, rows.getInductionVar(),
      arith::ConstantIndexOp::create(rewriter, loc, tm + tk - 1));
  Value step = arith::ConstantIndexOp::create(rewriter, loc, tk);
  end = arith::MulIOp::create(
      rewriter, loc, arith::DivUIOp::create(rewriter, loc, end, step), step);
  end = arith::MinUIOp::create(rewriter, loc, end, reduction.getUpperBound());
  rewriter.modifyOpInPlace(reduction,
                           [&] { reduction.setUpperBound(end); });
}

/// Whether `value` (in a linalg body) depends on linalg.index `dim`.
bool dependsOnLoop(Value value, unsigned dim) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() == dim;
  return llvm::any_of(def->getOperands(),
                      [&](Value v) { return dependsOnLoop(v, dim); });
}

/// Gathers whose leading indices vary along the innermost loop came out of
/// the LLVM 22 vectorizer as uniform loads (wrong per-batch seq_idx flags on
/// golden case c03); keep such ops scalar. Only the last index may follow
/// the innermost loop.
bool hasVectorizableExtracts(linalg::GenericOp op) {
  unsigned inner = op.getNumLoops() - 1;
  WalkResult result = op.getRegion().walk([&](tensor::ExtractOp extract) {
    ValueRange indices = extract.getIndices();
    for (Value index : indices.drop_back())
      if (dependsOnLoop(index, inner))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Tiles an all-parallel generic (gathers, masks, decays, the final
/// scatter) to one vector of `width` along its innermost loop and vectorizes
/// it: gathers with a contiguous innermost index become vector loads, and
/// exp/log1p become vector math. Ops whose innermost loop is dynamic or not a
/// multiple of the width stay scalar.
void tileAndVectorizeElementwise(RewriterBase &rewriter, linalg::GenericOp op,
                                 int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || ShapedType::isDynamic(ranges.back()) ||
      !hasVectorizableExtracts(op))
    return;
  int64_t inner = std::min(width, ranges.back());
  if (ranges.back() % inner != 0)
    return;
  SmallVector<int64_t> tiles(ranges.size(), 1);
  tiles.back() = inner;
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), tiles));
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(op, tiled->replacements);
  for (Operation *tile : tiled->tiledOps) {
    rewriter.setInsertionPoint(tile);
    FailureOr<linalg::VectorizationResult> vec = linalg::vectorize(
        rewriter, tile, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
        /*vectorizeNDExtract=*/true);
    if (succeeded(vec))
      rewriter.replaceOp(tile, vec->replacements);
  }
}

/// Tiles the outermost parallel loop of `op` whose range is not 1 by 1 with
/// an scf.forall (the chunk loop of the products, the token loop of the
/// scatter, the head loop of a state-passing step), so that the iterations
/// can run on several threads. Returns the op to tile further: the one
/// inside the forall, or `op` itself.
linalg::LinalgOp distribute(RewriterBase &rewriter, linalg::LinalgOp op) {
  // Already in a parallel chunk loop: one level of threads is enough.
  if (op->getParentOfType<scf::ForallOp>())
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  SmallVector<int64_t> tiles(ranges.size(), 0);
  bool found = false;
  for (auto [d, range] : llvm::enumerate(ranges)) {
    if (kinds[d] == utils::IteratorType::parallel && range != 1) {
      tiles[d] = 1;
      found = true;
      break;
    }
  }
  if (!found)
    return op;
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), tiles));
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->tiledOps.empty())
    return op;
  rewriter.replaceOp(op, tiled->replacements);
  return cast<linalg::LinalgOp>(tiled->tiledOps.back());
}

/// Whether `op` sits in a loop made by the tiling here or by the lowering.
bool insideLoop(Operation *op) {
  return op->getParentOfType<LoopLikeOpInterface>() != nullptr;
}

/// Tiles the batch loops of a top-level contraction (batch row, chunk, group)
/// by 1 and fuses its linalg producers into those loops: the
/// gathers, decay weights and scalings then produce one chunk at a time, so
/// their (b, nc, ...) tensors shrink to per-chunk temporaries that the
/// allocator reuses instead of faulting in hundreds of MB per call. With
/// `parallel` the chunk loop is an scf.forall. Returns false when nothing
/// was left to fuse.
bool fuseOneChunkLoop(RewriterBase &rewriter, func::FuncOp func,
                      bool parallel) {
  // The last contraction first: its producers, including earlier
  // contractions of the same chain, are fused into its loop.
  linalg::LinalgOp root;
  func.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && !insideLoop(op) &&
        !op->hasAttr("ssd.unfused") && linalg::isaContractionOpInterface(op))
      root = op;
  });
  if (!root)
    return false;
  // Every batch dimension (batch row, chunk, group, and the head where both
  // operands depend on it) is tiled by 1.
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(root);
  SmallVector<int64_t> tiles(root.getNumLoops(), 0);
  if (succeeded(dims))
    for (unsigned d : dims->batch)
      tiles[d] = 1;
  if (llvm::all_of(tiles, [](int64_t t) { return t == 0; })) {
    root->setAttr("ssd.unfused", rewriter.getUnitAttr());
    return true;
  }
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(
      getAsIndexOpFoldResult(func.getContext(), tiles));
  if (parallel)
    options.tilingOptions.setLoopType(
        scf::SCFTilingOptions::LoopType::ForallOp);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer,
         bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isa<linalg::LinalgOp>(producer.getOwner()))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root.getOperation()), options);
  if (failed(fused)) {
    // Leave it to the per-op tiling; mark it so the search moves on.
    root->setAttr("ssd.unfused", rewriter.getUnitAttr());
    return true;
  }
  for (OpResult result : root->getResults())
    if (Value replacement = fused->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  return true;
}

struct TileAndVectorizePass
    : ssd::impl::SSDCPUTileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter fuser(&getContext());
    // Each round fuses one contraction with its producers into a chunk loop;
    // erasing the producers left without users lets the next round see the
    // remaining top-level contractions only.
    // Slices of a whole-size tensor.empty become per-chunk tensor.empty, so
    // the fused producers get chunk-sized buffers.
    while (fuseChunks &&
           fuseOneChunkLoop(fuser, getOperation(), parallel)) {
      RewritePatternSet cleanup(&getContext());
      tensor::populateFoldTensorEmptyPatterns(cleanup);
      if (failed(applyPatternsGreedily(getOperation(), std::move(cleanup))))
        return signalPassFailure();
    }
    getOperation().walk(
        [](linalg::LinalgOp op) { op->removeAttr("ssd.unfused"); });
    SmallVector<linalg::LinalgOp> contractions;
    SmallVector<linalg::GenericOp> elementwise;
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
          generic && op.getNumReductionLoops() > 0 &&
          !linalg::isaContractionOpInterface(op))
        reductions.push_back(generic);
      else if (linalg::isaContractionOpInterface(op))
        contractions.push_back(op);
      else if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
               generic && op.getNumReductionLoops() == 0)
        elementwise.push_back(generic);
    });
    IRRewriter rewriter(&getContext());
    if (parallel) {
      for (linalg::LinalgOp &op : contractions)
        op = distribute(rewriter, op);
      for (linalg::GenericOp &op : elementwise)
        op = cast<linalg::GenericOp>(
            distribute(rewriter, cast<linalg::LinalgOp>(op.getOperation()))
                .getOperation());
      // Other reductions (the chunk cumsum) stay scalar but use the threads.
      for (linalg::GenericOp op : reductions)
        distribute(rewriter, cast<linalg::LinalgOp>(op.getOperation()));
    }
    for (linalg::LinalgOp op : contractions) {
      FailureOr<linalg::ContractionDimensions> dims =
          linalg::inferContractionDims(op);
      FailureOr<SmallVector<int64_t>> tiles =
          registerTile(op, tileM, tileN, tileK);
      if (failed(dims) || failed(tiles))
        continue;
      rewriter.setInsertionPoint(op);
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), *tiles));
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      rewriter.replaceOp(op, tiled->replacements);
      if (op->hasAttr(ssd::kLowerTriangularAttr))
        boundCausalReduction(rewriter, *tiled, *dims, *tiles);
      SmallVector<unsigned> keep = {*llvm::max_element(dims->m),
                                    *llvm::max_element(dims->n),
                                    *llvm::max_element(dims->k)};
      for (Operation *tile : tiled->tiledOps) {
        auto generic = dyn_cast<linalg::GenericOp>(tile);
        if (!generic)
          continue;
        rewriter.setInsertionPoint(generic);
        FailureOr<linalg::GenericOp> matmul =
            collapseToMatmul(rewriter, generic, keep);
        if (failed(matmul))
          continue;
        rewriter.setInsertionPoint(*matmul);
        // Emit vector.contract directly (not broadcast + multi_reduction).
        FailureOr<linalg::VectorizationResult> vec = linalg::vectorize(
            rewriter, *matmul, /*inputVectorSizes=*/{},
            /*inputScalableVecDims=*/{}, /*vectorizeNDExtract=*/false,
            /*flatten1DDepthwiseConv=*/false,
            /*assumeDynamicDimsMatchVecSizes=*/false,
            /*createNamedContraction=*/true);
        if (succeeded(vec))
          rewriter.replaceOp(*matmul, vec->replacements);
      }
    }
    if (vectorWidth > 0)
      for (linalg::GenericOp op : elementwise)
        tileAndVectorizeElementwise(rewriter, op, vectorWidth);
    // The generic vectorizer emits broadcasting reads, a multiply and a
    // multi_reduction; fold them into vector.contract with the reads'
    // permutations as its indexing maps.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// Erases copy(expand_shape(collapse_shape(x)), x): bufferizing the
/// collapse/expand pair around a register tile leaves this self-copy in the
/// reduction loop (the expanded view only differs in the strides of unit
/// dimensions), where it would block keeping the tile in registers.
struct EraseReshapeRoundTripCopy : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto expand = copy.getSource().getDefiningOp<memref::ExpandShapeOp>();
    if (!expand)
      return failure();
    auto collapse = expand.getSrc().getDefiningOp<memref::CollapseShapeOp>();
    if (!collapse || collapse.getSrc() != copy.getTarget() ||
        collapse.getReassociationIndices() != expand.getReassociationIndices())
      return failure();
    rewriter.eraseOp(copy);
    return success();
  }
};

struct LowerVectorsPass
    : ssd::impl::SSDCPULowerVectorsBase<LowerVectorsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Merge duplicate subviews, then fold the self-copies bufferization
    // leaves in the reduction loops; both block the accumulator hoisting.
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    {
      RewritePatternSet cleanup(&getContext());
      memref::CopyOp::getCanonicalizationPatterns(cleanup, &getContext());
      cleanup.add<EraseReshapeRoundTripCopy>(&getContext());
      (void)applyPatternsGreedily(func, std::move(cleanup));
    }
    linalg::hoistRedundantVectorTransfers(func);
    RewritePatternSet patterns(&getContext());
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    // Vector exp and log1p as inline polynomials: the LLVM intrinsics on
    // vectors are scalarized into libm calls. Scalars keep libm.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::Log1pOp::getOperationName();
    });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
