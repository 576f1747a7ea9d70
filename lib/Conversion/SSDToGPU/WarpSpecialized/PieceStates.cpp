//===- PieceStates.cpp - the pieces' states by a warpgroup ----------------===//
//
// The piece states' kernel (WarpSpecializedSSD.h): each piece but the last
// walked from its last chunk to its first into its state from zero and its
// decay, x scaled in place and (w x)^T B from shared memory; a block walks
// Shape::pieceHeads heads of one group at once, a warpgroup each, over
// one copy of their B.
//
//===----------------------------------------------------------------------===//
#include "RoleBuilder.h"

#include "../Wgmma.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

void RoleBuilder::scaleXRow(Value base, Value row, Value col, int64_t pieces,
                            Value w, int64_t from, int64_t to) {
  auto wide = VectorType::get({8}, e.b.getF32Type());
  auto narrow = VectorType::get({8}, e.b.getBF16Type());
  Value wVec = vector::BroadcastOp::create(e.b, wide, w);
  Value fromView = panels(base, from, 1);
  Value into = to == from ? fromView : panels(base, to, 1);
  for (int64_t u = 0; u < pieces; ++u) {
    SmallVector<Value> idx = swizzled128At(e, row, e.add(col, e.idx(8 * u)));
    SmallVector<Value> at = {idx[0], idx[1], idx[2]};
    Value x = arith::ExtFOp::create(e.b, wide, e.loadVector(fromView, at, 8));
    e.storeVector(arith::TruncFOp::create(e.b, narrow, e.mulf(x, wVec)), into,
                  at);
  }
}

void RoleBuilder::scaleXInPlace(Value base, const ChunkDecays &toEnd,
                                int64_t x) {
  Value tid = e.rem(e.threadId(), e.idx(kGroupThreads));
  Value row = e.div(tid, e.idx(2));
  Value half = e.rem(tid, e.idx(2));
  Value w =
      e.mulf(e.expRoundedTo16Bits(e.subf(toEnd.gLast, gOfToken(e, toEnd, row))),
             dtOfToken(e, toEnd, row));
  scaleXRow(base, row, e.mul(half, 32), 4, w, x, x);
}

void RoleBuilder::walkPieceState(StageRing &inputs, int64_t w) {
  Value ofHead = headOf(w);
  HeadParams params = headParams(ofHead);
  int64_t x = layout.x + w * kPanelBytes;
  Value ringAt = sharedAddress(ring);
  SmallVector<Value> end = e.forLoop(
      e.idx(0), chunkCount, e.idx(1),
      {wgmmaZeroAccumulators(e, kState), e.f32(0.0)},
      [&](Value i, ValueRange cur) -> SmallVector<Value> {
        inputs.waitFull(i);
        Value base = stageBase(inputs.stage(i));
        ChunkDecays d = decays(chunkOf(i, /*reverse=*/true), base, params);
        ChunkDecays toEnd = d;
        toEnd.gLast = e.addf(d.gLast, cur[1]);
        scaleXInPlace(base, toEnd, x);
        fenceSharedForAsyncProxy(e);
        // Barrier 0 is the block's; warpgroup w's own is 1 + w.
        warpgroupBarrier(e, 1 + w);

        Value xRows = e.add(ringAt, e.add(base, x));
        Value bRows = e.add(ringAt, e.add(base, layout.b));
        Value acc = wgmmaChunkTransposedA(e, cur[0], xRows, bRows, kState);
        NVVM::WgmmaWaitGroupSyncOp::create(e.b, 1);
        e.ifThen(e.lt(e.idx(0), i),
                 [&] { inputs.release(e.sub(i, e.idx(1))); });
        return {acc, e.addf(cur[1], d.gLast)};
      });
  NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
  e.ifThen(e.lt(e.idx(0), chunkCount),
           [&] { inputs.release(e.sub(chunkCount, e.idx(1))); });
  storeStateFragments(wgmmaFragments(e, end[0], kState / 8), ops.pieceStates,
                      {sequence, ofHead, piece});
  Value first = e.eq(e.threadId(), e.idx(w * kGroupThreads));
  e.ifThen(e.andi(first, e.eq(p0, e.idx(0))), [&] {
    e.store(end[1], ops.pieceDecays, {sequence, ofHead, piece});
  });
}

void RoleBuilder::emitPieceStates(KernelFunc &kernel) {
  blockHeads = shape.pieceHeads;
  int64_t stages = pieceStages(blockHeads);
  kernel.useSharedArena();
  ring = kernel.sharedBufferAligned(stages * layout.bytes, kSwizzleAlign);
  // Every state warpgroup releases each stage: they share its B.
  StageRing inputs(e, kernel, stages, blockHeads * kGroupThreads);
  addPartialLanding(kernel);
  Value tid = e.threadId();
  e.ifThen(e.eq(tid, e.idx(0)), [&] {
    inputs.init();
    if (partialLanding)
      partialLanding->init();
  });
  e.barrier();

  locateBlock();
  Value role = e.div(tid, e.idx(kGroupThreads));
  for (int64_t w = 0; w < blockHeads; ++w)
    e.ifThen(e.eq(role, e.idx(w)), [&] { walkPieceState(inputs, w); });
  e.ifThen(e.eq(tid, e.idx(blockHeads * kGroupThreads)),
           [&] { produce(inputs, /*reverse=*/true); });
}

int64_t pieceStatesThreads(const Shape &shape) {
  return pieceThreads(shape.pieceHeads);
}

int64_t pieceStatesBlocksPerSM(const Shape &shape) {
  return pieceBlocksPerSM(shape.pieceHeads);
}

void emitPieceStatesKernel(ImplicitLocOpBuilder &b, KernelFunc &kernel,
                           const Shape &shape, const Operands &operands) {
  assert(unsupportedShape(shape).empty() && "a shape the kernel takes");
  assert(operands.pieceStates && operands.pieceDecays && "piece workspaces");
  Emitter e(b);
  StageLayout layout = pieceStage(shape.pieceHeads);
  RoleBuilder(e, shape, operands, layout).emitPieceStates(kernel);
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
