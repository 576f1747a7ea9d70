//===- HoistSegmentBuffers.cpp - ssd-cpu-hoist-segment-buffers ------------===//
//
// A segment loop's body allocates the step ops' temporaries (chunk states,
// passed states, scaled x, decay matrices: several MB each at the 2.7B
// layer). Allocated per iteration, each is mapped, faulted in and unmapped
// again per segment; allocated once before the loop, the iterations reuse
// it while it is still in cache.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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

struct HoistSegmentBuffersPass
    : ssd::impl::SSDCPUHoistSegmentBuffersBase<HoistSegmentBuffersPass> {
  void runOnOperation() override {
    getOperation()->walk([](scf::ForOp loop) {
      if (!loop->hasAttr(ssd::kSegmentLoopAttr))
        return;
      Operation *yield = loop.getBody()->getTerminator();
      SmallVector<memref::AllocOp> hoisted;
      for (auto alloc : loop.getBody()->getOps<memref::AllocOp>())
        if (alloc.getType().hasStaticShape() &&
            alloc.getDynamicSizes().empty() &&
            alloc.getSymbolOperands().empty() &&
            !mustStayInLoop(alloc.getResult(), yield))
          hoisted.push_back(alloc);
      for (memref::AllocOp alloc : hoisted)
        alloc->moveBefore(loop);
    });
  }
};

} // namespace
