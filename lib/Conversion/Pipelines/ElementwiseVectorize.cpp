//===- ElementwiseVectorize.cpp - vector gathers, decays and scatter ------===//
//
// The non-contraction work (gathers into chunk tiles, masks, decay weights,
// the final scatter with D and z) is all-parallel linalg.generic ops; each
// is tiled to one vector along its innermost loop and vectorized.
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

using namespace mlir;

namespace {

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

} // namespace

/// Tiles an all-parallel generic (gathers, masks, decays, the final
/// scatter) to one vector of `width` along its innermost loop and vectorizes
/// it: gathers with a contiguous innermost index become vector loads, and
/// exp/log1p become vector math. Ops whose innermost loop is dynamic, a
/// single iteration or not a multiple of the width stay scalar.
void ssd::cpu::tileAndVectorizeElementwise(RewriterBase &rewriter,
                                           linalg::GenericOp op,
                                           int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || ShapedType::isDynamic(ranges.back()) ||
      hasEmptyLoop(op) || !hasVectorizableExtracts(op))
    return;
  // A one-element vector gains nothing: such ops stay scalar. (Their
  // gathers were also where a linearized index first read another row of a
  // strided slice; ssd-cpu-strided-gathers now indexes every gather from a
  // strided buffer by its strides, checked with this rule off.)
  if (ranges.back() == 1)
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
