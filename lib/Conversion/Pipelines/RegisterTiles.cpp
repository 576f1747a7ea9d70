//===- RegisterTiles.cpp - contractions as vector register tiles ----------===//
//
// The heavy work of the SSD on the CPU is four batched matrix products that
// convert-ssd-to-linalg emits as linalg.generic contractions, with both
// operands in (k, m) / (k, n) layout. Each is tiled to an M x N register
// tile (every other loop to 1) with a K step; the tile is collapsed to 2-D
// and vectorized into one vector.contract, which ssd-cpu-lower-vectors turns
// into broadcast FMAs on the accumulator rows.
//
//===----------------------------------------------------------------------===//
#include "CPUCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "ssd/Conversion/SSDToLinalg.h"

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
    operands.push_back(
        tensor::CollapseShapeOp::create(rewriter, loc, operand.get(), reassoc));
    reassocs.push_back(reassoc);
  }

  SmallVector<utils::IteratorType> iterators;
  for (unsigned d : keep)
    iterators.push_back(op.getIteratorTypesArray()[d]);
  unsigned numInputs = op.getNumDpsInputs();
  Value init = operands.back();
  auto matmul =
      linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()},
                                ArrayRef<Value>(operands).take_front(numInputs),
                                ValueRange{init}, maps, iterators);
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
void boundCausalReduction(RewriterBase &rewriter, scf::SCFTilingResult &tiled,
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
  rewriter.modifyOpInPlace(reduction, [&] { reduction.setUpperBound(end); });
}

} // namespace

void ssd::cpu::tileContractionToRegisters(RewriterBase &rewriter,
                                          linalg::LinalgOp op, int64_t m,
                                          int64_t n, int64_t k) {
  if (hasEmptyLoop(op))
    return;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  FailureOr<SmallVector<int64_t>> tiles = registerTile(op, m, n, k);
  if (failed(dims) || failed(tiles))
    return;
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), *tiles));
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return;
  // Read before replaceOp erases the op.
  bool lowerTriangular = op->hasAttr(ssd::kLowerTriangularAttr);
  rewriter.replaceOp(op, tiled->replacements);
  if (lowerTriangular)
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
    // Emit vector.contract directly where the vectorizer can; otherwise the
    // pass folds its broadcast + multi_reduction form into one.
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
