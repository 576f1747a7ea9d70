//===- PieceStates.cpp - the pieces' states by a warpgroup ----------------===//
//
// The piece states' kernel (WarpSpecializedSSD.h): each piece but the last
// walked from its last chunk to its first into its state from zero and its
// decay by (w x)^T B; a block walks Shape::pieceHeads heads of one group at
// once, a warpgroup each, over one copy of their B. A block of one head
// takes (w x)^T as wgmma's register A; blocks of more scale x in place and
// take both operands from shared memory.
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

Value RoleBuilder::addChunkState(Value s, Value ringAt, Value base,
                                 const ChunkDecays &toEnd, int64_t w) {
  int64_t x = layout.x + w * kPanelBytes;
  // (w x)^T from registers takes about 30 registers a thread more than from
  // shared memory: a block of one head has them (150, no spill); four
  // heads a block, held to 96 a thread at 544 threads, spilled and ran 60%
  // slower.
  if (blockHeads == 1) {
    SmallVector<Value> frags = scaledXTransposed(base, x, toEnd);
    Value bRows = e.add(ringAt, e.add(base, layout.b));
    return wgmmaChunkRegisterAAsync(e, s, frags, bRows, kState);
  }
  scaleXInPlace(base, toEnd, x);
  fenceSharedForAsyncProxy(e);
  // Barrier 0 is the block's; warpgroup w's own is 1 + w.
  warpgroupBarrier(e, 1 + w);

  Value xRows = e.add(ringAt, e.add(base, x));
  Value bRows = e.add(ringAt, e.add(base, layout.b));
  return wgmmaChunkTransposedA(e, s, xRows, bRows, kState);
}

void RoleBuilder::walkPieceState(StageRing &inputs, int64_t w) {
  Value ofHead = headOf(w);
  HeadParams params = headParams(ofHead);
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
        Value acc = addChunkState(cur[0], ringAt, base, toEnd, w);
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

SmallVector<Value> RoleBuilder::scaledXTransposed(Value base, int64_t x,
                                                  const ChunkDecays &toEnd) {
  // Lane l's own tokens 2l, 2l + 1: their weights.
  Value w[2];
  for (int64_t i = 0; i < 2; ++i)
    w[i] = e.mulf(e.expRoundedTo16Bits(e.subf(toEnd.gLast, toEnd.g[i])),
                  toEnd.dt[i]);
  // ldmatrix.x4.trans: lane l addresses row l % 8 of matrix l / 8, the
  // tokens 16 ks + 8 (l / 16) .. and columns 16 v + 8 ((l / 8) % 2) (v the
  // warp in its warpgroup); each lane then holds A's (p, k) pairs at p =
  // 16 v + l / 4 (+ 8 in matrices 1 and 3), k = 2 (l % 4) (+ 8 in 2, 3).
  Value lane = e.laneId();
  Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
  Value tokenInStep =
      e.add(e.mul(e.div(lane, e.idx(16)), 8), e.rem(lane, e.idx(8)));
  Value col = e.add(e.mul(warp, 16),
                    e.mul(e.rem(e.div(lane, e.idx(8)), e.idx(2)), 8));
  Value quad = e.rem(lane, e.idx(4));
  Value xView = panels(base, x, 1);
  auto fragType = VectorType::get({4, 2}, e.b.getBF16Type());
  SmallVector<Value> frags;
  for (int64_t ks = 0; ks < kChunk / 16; ++ks) {
    Value frag = nvgpu::LdMatrixOp::create(
        e.b, fragType, xView,
        swizzled128At(e, e.add(tokenInStep, e.idx(16 * ks)), col),
        /*transpose=*/true, 4);
    // Tokens 16 ks + 2 (l % 4) + {0, 1} are lane 8 ks + l % 4's own, + 8
    // lane 8 ks + l % 4 + 4's.
    Value wOf[2][2];
    for (int64_t h = 0; h < 2; ++h) {
      Value src = e.add(quad, e.idx(8 * ks + 4 * h));
      for (int64_t i = 0; i < 2; ++i)
        wOf[h][i] = e.warpShuffle(w[i], src);
    }
    for (int64_t m = 0; m < 4; ++m) {
      Value pair = vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{m});
      Value wide = e.toF32Vector(pair);
      SmallVector<Value> scaled;
      for (int64_t i = 0; i < 2; ++i)
        scaled.push_back(e.mulf(
            vector::ExtractOp::create(e.b, wide, ArrayRef<int64_t>{i}),
            wOf[m / 2][i]));
      frag = vector::InsertOp::create(e.b, bf16Pair(e, scaled[0], scaled[1]),
                                      frag, ArrayRef<int64_t>{m});
    }
    frags.push_back(frag);
  }
  return frags;
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
