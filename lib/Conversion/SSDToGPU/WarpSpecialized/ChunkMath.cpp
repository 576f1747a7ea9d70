//===- ChunkMath.cpp - pieces of the warp-specialised kernels -------------===//
//
// The chunk's decays, token pairs, accumulator lanes and wgmma products of
// ChunkMath.h.
//
//===----------------------------------------------------------------------===//
#include "ChunkMath.h"

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

ChunkDecays chunkDecays(Emitter &e, const SSDProblem &dtRule, Value dtView,
                        const HeadParams &head, Value valid) {
  Value token = e.mul(e.laneId(), 2);
  ChunkDecays d;
  for (int64_t i = 0; i < 2; ++i) {
    Value at = e.add(token, e.idx(i));
    Value dt =
        processDt(e, dtRule, e.load(dtView, {at, head.dtColumn}), head.dtBias);
    d.dt[i] = e.select(e.lt(at, valid), dt, e.f32(0.0));
  }
  Value a0 = e.mulf(d.dt[0], head.a), a1 = e.mulf(d.dt[1], head.a);
  Value upTo = e.warpInclusiveScan(e.addf(a0, a1));
  d.g[0] = e.subf(upTo, a1);
  d.g[1] = upTo;
  d.gLast = e.warpShuffle(upTo, e.idx(31));
  return d;
}

Value factoredChunk(Emitter &e, Value gLast) {
  return e.gtf(gLast, e.f32(-kFactoredSpan));
}

Value ofToken(Emitter &e, const Value pair[2], Value row) {
  Value src = e.div(row, e.idx(2));
  Value even = e.warpShuffle(pair[0], src), odd = e.warpShuffle(pair[1], src);
  return e.select(e.eq(e.rem(row, e.idx(2)), e.idx(1)), odd, even);
}

Value gOfToken(Emitter &e, const ChunkDecays &d, Value row) {
  return ofToken(e, d.g, row);
}

Value dtOfToken(Emitter &e, const ChunkDecays &d, Value row) {
  return ofToken(e, d.dt, row);
}

AccumulatorLane accumulatorLane(Emitter &e) {
  Value lane = e.laneId();
  Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
  return {e.add(e.mul(warp, 16), e.div(lane, e.idx(4))),
          e.mul(e.rem(lane, e.idx(4)), 2)};
}

Value wgmmaKMajor(Emitter &e, Value d, int64_t n, int64_t steps,
                  function_ref<Value(int64_t)> aAt,
                  function_ref<Value(int64_t)> bAt) {
  auto shape = NVVM::MMAShapeAttr::get(e.b.getContext(), 64, n, 16);
  for (int64_t s = 0; s < steps; ++s)
    d = NVVM::WgmmaMmaAsyncOp::create(
        e.b, d.getType(), d, swizzledKMajorDescriptor(e, aAt(s)),
        swizzledKMajorDescriptor(e, bAt(s)), shape, NVVM::WGMMATypes::bf16,
        NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  return d;
}

Value wgmmaChunkRegisterAAsync(Emitter &e, Value d, ArrayRef<Value> aFrags,
                               Value bRows, int64_t n) {
  NVVM::WgmmaFenceAlignedOp::create(e.b);
  Value descB = swizzledNMajorDescriptor(e, bRows, kPanelBytes);
  for (int64_t ks = 0; ks < kChunk / 16; ++ks)
    d = wgmmaRegisterA(e, d, aFrags[ks],
                       advanceDescriptor(e, descB, ks * 16 * 128), n,
                       e.b.getBF16Type(), /*bKMajor=*/false);
  NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
  return d;
}

Value wgmmaChunkRegisterA(Emitter &e, Value d, ArrayRef<Value> aFrags,
                          Value bRows, int64_t n) {
  d = wgmmaChunkRegisterAAsync(e, d, aFrags, bRows, n);
  NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
  return d;
}

Value wgmmaChunkTransposedA(Emitter &e, Value d, Value aRows, Value bRows,
                            int64_t n) {
  auto shape = NVVM::MMAShapeAttr::get(e.b.getContext(), 64, n, 16);
  NVVM::WgmmaFenceAlignedOp::create(e.b);
  Value descA = swizzledNMajorDescriptor(e, aRows, kPanelBytes);
  Value descB = swizzledNMajorDescriptor(e, bRows, kPanelBytes);
  for (int64_t ks = 0; ks < kChunk / 16; ++ks) {
    int64_t step = ks * 16 * 128;
    d = NVVM::WgmmaMmaAsyncOp::create(
        e.b, d.getType(), d, advanceDescriptor(e, descA, step),
        advanceDescriptor(e, descB, step), shape, NVVM::WGMMATypes::bf16,
        NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::col,
        NVVM::MMALayout::row,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
  return d;
}

Value kStepAddress(Emitter &e, Value base, int64_t s) {
  return e.add(base, e.idx((s / 4) * kPanelBytes + (s % 4) * 32));
}

SmallVector<Value> scaleRows(Emitter &e, ArrayRef<Value> fragments,
                             Value rowScale[2]) {
  auto pairType = VectorType::get({2}, e.b.getF32Type());
  SmallVector<Value> out;
  for (Value frag : fragments) {
    for (int64_t r = 0; r < 2; ++r) {
      Value row = vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
      Value scaled =
          e.mulf(row, vector::BroadcastOp::create(e.b, pairType, rowScale[r]));
      frag = vector::InsertOp::create(e.b, scaled, frag, ArrayRef<int64_t>{r});
    }
    out.push_back(frag);
  }
  return out;
}

Value bf16Pair(Emitter &e, Value lo, Value hi) {
  auto f32Pair = VectorType::get({2}, e.b.getF32Type());
  Value pair = vector::FromElementsOp::create(e.b, f32Pair, ValueRange{lo, hi});
  return arith::TruncFOp::create(e.b, VectorType::get({2}, e.b.getBF16Type()),
                                 pair);
}

void warpgroupBarrier(Emitter &e, int64_t id) {
  // The operands in a fixed order (an argument list's is unspecified).
  Value barrier = e.b.create<arith::ConstantIntOp>(id, 32);
  Value threads = e.b.create<arith::ConstantIntOp>(kGroupThreads, 32);
  NVVM::BarrierOp::create(e.b, Type(), barrier, threads,
                          NVVM::BarrierReductionAttr(), Value());
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
