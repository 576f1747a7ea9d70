//===- PrepWarps.cpp - a chunk's decays and scaled x, ahead of its use ----===//
//
// The SSD kernel's prep warps (WarpSpecializedSSD.h): once a chunk's
// copies have landed, its decays and x scaled for the state update, left
// in its stage for the state and output roles.
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
  Value token = e.sub(e.threadId(), e.idx(kPrepFirstThread));
  e.forLoop(e.idx(0), chunkCount, e.idx(1), [&](Value i) {
    inputs.waitFull(i);
    Value base = stageBase(inputs.stage(i));
    // Each prep warp scans the whole chunk; a thread keeps its token's.
    ChunkDecays d = decays(chunkOf(i), base, params);
    Value g = gOfToken(e, d, token), dt = dtOfToken(e, d, token);
    Value factored = factoredChunk(e, d.gLast);
    Value view = preparedView(base);
    auto put = [&](int64_t at, Value v) {
      e.store(v, view, {e.add(token, e.idx(at))});
    };
    put(prepared::kE, e.exp(g));
    // exp(-g) may overflow where the chunk is not factored: selected away.
    put(prepared::kF,
        e.select(factored,
                 e.mulf(e.expRoundedTo16Bits(e.subf(e.f32(0.0), g)), dt),
                 e.f32(0.0)));
    put(prepared::kG, g);
    put(prepared::kDt, dt);
    e.ifThen(e.eq(token, e.idx(0)), [&] {
      e.store(d.gLast, view, {e.idx(prepared::kGLast)});
      e.store(e.exp(d.gLast), view, {e.idx(prepared::kExpLast)});
    });
    Value w = e.mulf(e.expRoundedTo16Bits(e.subf(d.gLast, g)), dt);
    scaleXRow(base, token, e.idx(0), kSwizzlePanel / 8, w, layout.x, layout.xs);
    fenceSharedForAsyncProxy(e);
    prepared.publish(i);
  });
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
