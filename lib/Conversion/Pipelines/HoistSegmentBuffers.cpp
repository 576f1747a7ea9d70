//===- HoistSegmentBuffers.cpp - ssd-cpu-hoist-segment-buffers ------------===//
//
// A segment loop's body allocates the step ops' temporaries (chunk states,
// passed states, scaled x, decay matrices: several MB each at the 2.7B
// layer). Allocated per iteration, each is mapped, faulted in and unmapped
// again per segment; allocated once before the loop, the iterations reuse
// it while it is still in cache. Sizes that do not change between segments
// (a dynamic batch) are computed before the loop too. A loop over the
// sequences of a cu_seqlens layer holds segment loops: what they hoisted
// moves out of it as well, unless its size is the sequence's.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace ssd {
#define GEN_PASS_DEF_SSDCPUHOISTSEGMENTBUFFERS
#include "ssd/Conversion/Passes.h.inc"
} // namespace ssd

using namespace mlir;

namespace {

/// Whether `buffer`, or a view of it, is an operand of `yield` (it carries
/// a value into the next iteration and must stay its own) or is freed in the
/// loop (where the pass runs after deallocation was placed).
bool mustStayInLoop(Value buffer, Operation *yield) {
  SmallVector<Value> work = {buffer};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == yield || hasEffect<MemoryEffects::Free>(user, v))
        return true;
      if (isa<ViewLikeOpInterface>(user))
        llvm::append_range(work, user->getResults());
    }
  }
  return false;
}

/// Moves the loop-invariant pure ops of `loop` out (the sizes of a dynamic
/// batch, views of buffers already moved), then every buffer it may move.
/// Returns whether a buffer moved.
bool hoistOnce(scf::ForOp loop) {
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  Operation *yield = loop.getBody()->getTerminator();
  SmallVector<memref::AllocOp> hoisted;
  for (auto alloc : loop.getBody()->getOps<memref::AllocOp>())
    if (llvm::all_of(alloc->getOperands(),
                     [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }) &&
        !mustStayInLoop(alloc.getResult(), yield))
      hoisted.push_back(alloc);
  for (memref::AllocOp alloc : hoisted)
    alloc->moveBefore(loop);
  return !hoisted.empty();
}

struct HoistSegmentBuffersPass
    : ssd::impl::SSDCPUHoistSegmentBuffersBase<HoistSegmentBuffersPass> {
  void runOnOperation() override {
    // Sizes read off views made in the loop become the sizes they were made
    // from (often the arguments'), which can then move out of the loop.
    RewritePatternSet patterns(&getContext());
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation()->walk([](scf::ForOp loop) {
      if (!loop->hasAttr(ssd::kSegmentLoopAttr) &&
          !loop->hasAttr(ssd::kSequenceLoopAttr))
        return;
      // A buffer moved out can make the views and sizes taken of it
      // invariant, and those the next buffer's size: to a fixed point.
      while (hoistOnce(loop)) {
      }
    });
  }
};

} // namespace
