//===- LowerVectorsPass.cpp - ssd-cpu-lower-vectors -----------------------===//
//
// After bufferization: clean the register-tile loops, then lower
// vector.contract to outer-product FMAs and vector exp/log1p to polynomials.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace ssd {
#define GEN_PASS_DEF_SSDCPULOWERVECTORS
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

namespace {

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

struct LowerVectorsPass : ssd::impl::SSDCPULowerVectorsBase<LowerVectorsPass> {
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
    // exp and log1p as inline polynomials: the LLVM intrinsics on vectors
    // would be scalarized into libm calls.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::Log1pOp::getOperationName();
    });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
