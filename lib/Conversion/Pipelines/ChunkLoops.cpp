//===- ChunkLoops.cpp - per-chunk fusion and thread distribution ----------===//
//
// The step ops work on (b, nc, ...) tensors. Fusing every product with its
// producers into loops over (batch, chunk, group) makes the intermediates
// chunk-sized (no hundreds of MB faulted in per call), and those loops are
// what runs on threads (scf.forall, then the async runtime).
//
//===----------------------------------------------------------------------===//
#include "CPUCodegen.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;

namespace {

/// Whether `op` sits in a loop made by the tiling here or by the lowering.
bool insideLoop(Operation *op) {
  return op->getParentOfType<LoopLikeOpInterface>() != nullptr;
}

/// Whether `op` computes part of a layer of at most kMaxSerialRungTokens
/// tokens: it sits in the then-branch of a rung of the fit's ladder.
bool inShortRung(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    auto rung = dyn_cast<scf::IfOp>(parent);
    if (!rung)
      continue;
    auto tokens = rung->getAttrOfType<IntegerAttr>(ssd::kFitRungAttr);
    if (tokens && tokens.getInt() <= ssd::cpu::kMaxSerialRungTokens &&
        rung.getThenRegion().isAncestor(op->getParentRegion()))
      return true;
  }
  return false;
}

} // namespace

bool ssd::cpu::hasEmptyLoop(linalg::LinalgOp op) {
  return llvm::is_contained(op.getStaticLoopRanges(), 0);
}

/// Tiles the outermost parallel loop of `op` whose range is not 1 (one of a
/// known range first) by 1 with an scf.forall (the chunk loop of the
/// products, the token loop of the scatter, the head loop of a
/// state-passing step), so that the iterations can run on several threads.
/// Returns the op to tile further: the one inside the forall, or `op`
/// itself.
linalg::LinalgOp ssd::cpu::distribute(RewriterBase &rewriter,
                                      linalg::LinalgOp op) {
  // Already in a parallel chunk loop: one level of threads is enough.
  if (op->getParentOfType<scf::ForallOp>() || hasEmptyLoop(op) ||
      inShortRung(op))
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Too little work to pay for a fork and join (the cumsum scan's steps,
  // one per chunk position): it stays on the calling thread.
  int64_t work = 1;
  for (int64_t range : ranges)
    work = ShapedType::isDynamic(range)
               ? kMinParallelWork
               : std::min(work * range, kMinParallelWork);
  if (work < kMinParallelWork)
    return op;
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  // A contraction is spread over its batch loops and its outer M and N
  // loops (a head that only one operand depends on) only, never over the
  // innermost M or N loop that its register tiles span: a thread per row
  // would leave one-row tiles, and a lower-triangular product bounds its
  // reduction by the tile's rows, which a slice of rows sees from 0 (found
  // with one chunk, one head and one batch row: rows past the first tile
  // lost part of their reduction).
  llvm::SmallDenseSet<unsigned> allowed;
  bool contraction = linalg::isaContractionOpInterface(op);
  if (contraction) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims))
      return op;
    allowed.insert(dims->batch.begin(), dims->batch.end());
    for (ArrayRef<unsigned> group : {ArrayRef(dims->m), ArrayRef(dims->n)}) {
      if (group.empty())
        continue;
      unsigned tiled = *llvm::max_element(group); // as registerTile picks it
      for (unsigned d : group)
        if (d != tiled)
          allowed.insert(d);
    }
  }
  // The outermost such loop of a known range first: a dynamic one (the
  // chunks of the tokens after a sequence's whole segments) may well have a
  // single iteration, which would leave the op on one thread.
  auto candidate = [&](unsigned d) {
    return kinds[d] == utils::IteratorType::parallel && ranges[d] != 1 &&
           (!contraction || allowed.contains(d));
  };
  std::optional<unsigned> chosen;
  for (unsigned d = 0; d < ranges.size() && !chosen; ++d)
    if (candidate(d) && !ShapedType::isDynamic(ranges[d]))
      chosen = d;
  for (unsigned d = 0; d < ranges.size() && !chosen; ++d)
    if (candidate(d))
      chosen = d;
  if (!chosen)
    return op;
  SmallVector<int64_t> tiles(ranges.size(), 0);
  tiles[*chosen] = 1;
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

/// Tiles the batch loops of a top-level contraction (batch row, chunk, group)
/// by 1 and fuses its linalg producers into those loops: the
/// gathers, decay weights and scalings then produce one chunk at a time, so
/// their (b, nc, ...) tensors shrink to per-chunk temporaries that the
/// allocator reuses instead of faulting in hundreds of MB per call. With
/// `parallel` the chunk loop is an scf.forall. Returns false when nothing
/// was left to fuse.
bool ssd::cpu::fuseOneChunkLoop(RewriterBase &rewriter, func::FuncOp func,
                                bool parallel) {
  // The last contraction first: its producers, including earlier
  // contractions of the same chain, are fused into its loop.
  linalg::LinalgOp root;
  func.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && !insideLoop(op) &&
        !op->hasAttr(kUnfusedAttr) && linalg::isaContractionOpInterface(op))
      root = op;
  });
  if (!root)
    return false;
  if (hasEmptyLoop(root)) {
    root->setAttr(kUnfusedAttr, rewriter.getUnitAttr());
    return true;
  }
  // Every batch dimension (batch row, chunk, group, and the head where both
  // operands depend on it) is tiled by 1.
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(root);
  SmallVector<int64_t> tiles(root.getNumLoops(), 0);
  if (succeeded(dims))
    for (unsigned d : dims->batch)
      tiles[d] = 1;
  if (llvm::all_of(tiles, [](int64_t t) { return t == 0; })) {
    root->setAttr(kUnfusedAttr, rewriter.getUnitAttr());
    return true;
  }
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(
      getAsIndexOpFoldResult(func.getContext(), tiles));
  // A short layer's chunk loop stays sequential, as its ops stay serial.
  if (parallel && !inShortRung(root))
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
    root->setAttr(kUnfusedAttr, rewriter.getUnitAttr());
    return true;
  }
  for (OpResult result : root->getResults())
    if (Value replacement = fused->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  return true;
}
