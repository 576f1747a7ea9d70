//===- TileAndVectorizePass.cpp - ssd-cpu-tile-vectorize ------------------===//
//
// Orders the CPU code generation steps on tensors: chunk fusion, thread
// distribution, register tiles for the contractions, vector elementwise
// ops; then folds the vectorizer's broadcast/multi_reduction products into
// vector.contract.
//
//===----------------------------------------------------------------------===//
#include "CPUCodegen.h"
#include "ssd/Conversion/Passes.h"

#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace ssd {
#define GEN_PASS_DEF_SSDCPUTILEANDVECTORIZE
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

namespace {

/// The linalg ops on tensors, by what the strategy does with them.
struct OpsByKind {
  SmallVector<linalg::LinalgOp> contractions; // register tiles
  SmallVector<linalg::GenericOp> elementwise; // one vector per tile
  SmallVector<linalg::GenericOp> reductions;  // scalar (the chunk cumsum)
};

OpsByKind collectOps(func::FuncOp func) {
  OpsByKind ops;
  func.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics())
      return;
    if (linalg::isaContractionOpInterface(op)) {
      ops.contractions.push_back(op);
      return;
    }
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic)
      return;
    if (op.getNumReductionLoops() == 0)
      ops.elementwise.push_back(generic);
    else
      ops.reductions.push_back(generic);
  });
  return ops;
}

struct TileAndVectorizePass
    : ssd::impl::SSDCPUTileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    if (fuseChunks && failed(fuseChunkLoops()))
      return signalPassFailure();
    OpsByKind ops = collectOps(getOperation());
    IRRewriter rewriter(&getContext());
    if (parallel)
      distributeAll(rewriter, ops);
    for (linalg::LinalgOp op : ops.contractions)
      ssd::cpu::tileContractionToRegisters(rewriter, op, tileM, tileN, tileK);
    if (vectorWidth > 0)
      for (linalg::GenericOp op : ops.elementwise)
        ssd::cpu::tileAndVectorizeElementwise(rewriter, op, vectorWidth);
    if (failed(foldProductsIntoContract()))
      signalPassFailure();
  }

  /// Fuses one contraction per round with its producers into chunk loops.
  /// Between rounds, slices of whole-size tensor.empty become chunk-sized
  /// tensor.empty (so the fused producers get chunk-sized buffers) and the
  /// producers left without users disappear, so the next round sees only
  /// the remaining top-level contractions.
  LogicalResult fuseChunkLoops() {
    IRRewriter rewriter(&getContext());
    while (ssd::cpu::fuseOneChunkLoop(rewriter, getOperation(), parallel)) {
      RewritePatternSet cleanup(&getContext());
      tensor::populateFoldTensorEmptyPatterns(cleanup);
      if (failed(applyPatternsGreedily(getOperation(), std::move(cleanup))))
        return failure();
    }
    getOperation().walk(
        [](linalg::LinalgOp op) { op->removeAttr(ssd::cpu::kUnfusedAttr); });
    return success();
  }

  /// Puts the outermost parallel loop of every op not yet in a chunk loop
  /// on threads; the ops to tile further are the ones inside.
  void distributeAll(RewriterBase &rewriter, OpsByKind &ops) {
    for (linalg::LinalgOp &op : ops.contractions)
      op = ssd::cpu::distribute(rewriter, op);
    for (linalg::GenericOp &op : ops.elementwise)
      op = cast<linalg::GenericOp>(
          ssd::cpu::distribute(rewriter, op).getOperation());
    for (linalg::GenericOp op : ops.reductions)
      ssd::cpu::distribute(rewriter, op);
  }

  /// The generic vectorizer emits broadcasting reads, a multiply and a
  /// multi_reduction for some products; fold them into vector.contract with
  /// the reads' permutations as its indexing maps.
  LogicalResult foldProductsIntoContract() {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    return applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
