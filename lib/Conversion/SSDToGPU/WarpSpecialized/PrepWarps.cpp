//===- PrepWarps.cpp - a chunk's decays and scaled x, ahead of its use ----===//
//
// The SSD kernel's prep warps (WarpSpecializedSSD.h): once a chunk's
// copies have landed, its decays and x scaled for the state update, left
// in its stage for the state and output roles. Prep warp k owns stage k
// and takes its chunks whole, so the ring's stages are prepared at once.
//
//===----------------------------------------------------------------------===//
#include "RoleBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

void RoleBuilder::walkPrep(StageRing &inputs, StageRing &prepared,
                           const HeadParams &params) {
  // Warp k waits for the fills of stage k alone, in order: a wait never
  // meets a phase two behind the one it asks for.
  Value warp = e.sub(e.div(e.threadId(), e.idx(32)), e.idx(kPrepFirstWarp));
  Value lane = e.laneId();
  e.forLoop(warp, chunkCount, e.idx(shape.stages), [&](Value i) {
    inputs.waitFull(i);
    Value base = stageBase(inputs.stage(i));
    // The warp's own scan leaves lane l tokens 2l and 2l + 1.
    ChunkDecays d = decays(chunkOf(i), base, params);
    Value factored = factoredChunk(e, d.gLast);
    Value view = preparedView(base);
    Value w[2];
    for (int64_t k = 0; k < 2; ++k) {
      Value token = e.add(e.mul(lane, 2), e.idx(k));
      auto put = [&](int64_t at, Value v) {
        e.store(v, view, {e.add(token, e.idx(at))});
      };
      Value g = d.g[k], dt = d.dt[k];
      put(prepared::kE, e.exp(g));
      // exp(-g) may overflow where the chunk is not factored: selected
      // away.
      put(prepared::kF,
          e.select(factored,
                   e.mulf(e.expRoundedTo16Bits(e.subf(e.f32(0.0), g)), dt),
                   e.f32(0.0)));
      put(prepared::kG, g);
      put(prepared::kDt, dt);
      w[k] = e.mulf(e.expRoundedTo16Bits(e.subf(d.gLast, g)), dt);
    }
    e.ifThen(e.eq(lane, e.idx(0)), [&] {
      e.store(d.gLast, view, {e.idx(prepared::kGLast)});
      e.store(e.exp(d.gLast), view, {e.idx(prepared::kExpLast)});
    });
    // Rows lane and lane + 32: eight lanes' 16-byte accesses meet all
    // eight positions of the swizzle.
    for (int64_t half = 0; half < 2; ++half) {
      Value row = e.add(lane, e.idx(32 * half));
      scaleXRow(base, row, e.idx(0), kSwizzlePanel / 8, ofToken(e, w, row),
                layout.xs);
    }
    fenceSharedForAsyncProxy(e);
    prepared.publish(i);
  });
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
