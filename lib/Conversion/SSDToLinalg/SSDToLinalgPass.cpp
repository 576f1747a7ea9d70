//===- SSDToLinalgPass.cpp - the convert-ssd-to-linalg pass ---------------===//
#include "Patterns.h"
#include "ssd/Conversion/Passes.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include "mlir/Transforms/DialectConversion.h"

namespace ssd {
#define GEN_PASS_DEF_CONVERTSSDTOLINALG
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

void ssd::populateSSDToLinalgConversionPatterns(RewritePatternSet &patterns) {
  lowering::populateChunkCumsumPatterns(patterns);
  lowering::populateSegsumPatterns(patterns);
  lowering::populateBmmPatterns(patterns);
  lowering::populateChunkStatePatterns(patterns);
  lowering::populateStatePassingPatterns(patterns);
  lowering::populateChunkScanPatterns(patterns);
}

namespace {

struct ConvertSSDToLinalgPass
    : ssd::impl::ConvertSSDToLinalgBase<ConvertSSDToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    // Diagnose every op that cannot be lowered before rewriting anything.
    bool lowerable = true;
    getOperation()->walk([&](Operation *op) {
      if (failed(ssd::checkSSDToLinalgLowerable(op)))
        lowerable = false;
    });
    if (!lowerable)
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<ssd::SSDDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    ssd::populateSSDToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
