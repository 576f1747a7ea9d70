//===- WarpSpecializedSSD.cpp - the SSD by warpgroup roles ----------------===//
//
// The roles of the warp-specialised SSD kernel (WarpSpecializedSSD.h): the
// state's walk and the outputs' walk, each built from named pieces over one
// chunk, and the kernel's block and shared memory.
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

Value RoleBuilder::loadEnteringState() {
  SmallVector<Value> frags =
      ops.initialStates
          ? loadStateFragments(ops.initialStates, {row, head})
          : wgmmaFragments(e, wgmmaZeroAccumulators(e, kState), kState / 8);
  if (ops.pieceDecays) {
    auto fragType = VectorType::get({2, 2}, e.b.getF32Type());
    frags = e.forLoop(e.idx(0), piece, e.idx(1), frags,
                      [&](Value j, ValueRange cur) -> SmallVector<Value> {
                        Value decay = vector::BroadcastOp::create(
                            e.b, fragType,
                            e.exp(e.load(ops.pieceDecays, {row, head, j})));
                        SmallVector<Value> local =
                            loadStateFragments(ops.pieceStates, {row, head, j});
                        SmallVector<Value> next;
                        for (auto [s, l] : llvm::zip(cur, local))
                          next.push_back(e.fma(decay, s, l));
                        return next;
                      });
  }
  return wgmmaAccumulators(e, frags);
}

void RoleBuilder::publishState(StageRing &published, Value c,
                               ArrayRef<Value> state) {
  auto viewType = MemRefType::get(
      {2, 2, kChunk, kSwizzlePanel}, e.b.getBF16Type(),
      MemRefLayoutAttrInterface(),
      cast<MemRefType>(publishedBuf.getType()).getMemorySpace());
  Value view = memref::ViewOp::create(e.b, viewType, publishedBuf, e.idx(0),
                                      ValueRange{});
  // stmatrix.x4: a warp stores four 8 x 8 bf16 matrices, each lane's
  // register of matrix m the bf16 pair at (row lane / 4, columns
  // 2 (lane % 4) ..): the accumulator fragments' layout. Matrices (rows
  // + 8 r, n8 fragment j + k) for m = 2 k + r; lane l gives the address
  // of row l % 8 of matrix l / 8 (16 bytes, whole in the swizzle).
  Value lane = e.laneId();
  Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
  Value matrix = e.div(lane, e.idx(8));
  Value row = e.add(e.add(e.mul(warp, 16), e.mul(e.rem(matrix, e.idx(2)), 8)),
                    e.rem(lane, e.idx(8)));
  Value colOffset = e.mul(e.div(matrix, e.idx(2)), 8);
  auto word = [&](Value frag, int64_t r) {
    Value pair = vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
    Value narrow = arith::TruncFOp::create(
        e.b, VectorType::get({2}, e.b.getBF16Type()), pair);
    Value bits = vector::BitCastOp::create(
        e.b, VectorType::get({1}, e.b.getI32Type()), narrow);
    return vector::ExtractOp::create(e.b, bits, ArrayRef<int64_t>{0});
  };
  Value buffer = published.acquire(c);
  MLIRContext *ctx = e.b.getContext();
  for (int64_t j = 0; j < kState / 8; j += 2) {
    SmallVector<Value> idx =
        swizzled128At(e, row, e.add(colOffset, e.idx(8 * j)));
    Value at = elementPointer(e, view, {buffer, idx[0], idx[1], idx[2]},
                              /*space=*/3);
    NVVM::StMatrixOp::create(
        e.b, at,
        ValueRange{word(state[j], 0), word(state[j], 1), word(state[j + 1], 0),
                   word(state[j + 1], 1)},
        NVVM::MMALayout::row, NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltType::B16);
  }
  fenceSharedForAsyncProxy(e);
  published.publish(c);
}

SmallVector<Value> RoleBuilder::scaledXFragments(Value base,
                                                 const ChunkDecays &d) {
  // ldmatrix.trans lanes: rows (tokens) hi8 + l8 of a k16 step, columns
  // (p) 16 warp + mid8: the four 8 x 8 matrices of A = x^T's fragment.
  Value lane = e.laneId();
  Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
  Value l8 = e.rem(lane, e.idx(8));
  Value mid8 = e.mul(e.rem(e.div(lane, e.idx(8)), e.idx(2)), 8);
  Value hi8 = e.mul(e.div(lane, e.idx(16)), 8);
  auto fragType = VectorType::get({4, 2}, e.b.getBF16Type());
  auto f32Pair = VectorType::get({2}, e.b.getF32Type());
  Value xView = panels(base, layout.x, 1);
  SmallVector<Value> frags;
  for (int64_t ks = 0; ks < kChunk / 16; ++ks) {
    Value token = e.add(e.add(hi8, l8), e.idx(16 * ks));
    SmallVector<Value> idx =
        swizzled128At(e, token, e.add(e.mul(warp, 16), mid8));
    Value frag = nvgpu::LdMatrixOp::create(e.b, fragType, xView, idx,
                                           /*transpose=*/true, 4);
    for (int64_t half = 0; half < 2; ++half) {
      TokenPair t = columnPair(e, d, 2 * ks + half);
      Value w[2];
      for (int64_t i = 0; i < 2; ++i)
        w[i] = e.mulf(e.expRoundedTo16Bits(e.subf(d.gLast, t.g[i])), t.dt[i]);
      Value wPair =
          vector::FromElementsOp::create(e.b, f32Pair, ValueRange{w[0], w[1]});
      for (int64_t r = 2 * half; r < 2 * half + 2; ++r) {
        Value raw = vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
        Value wide = arith::ExtFOp::create(e.b, f32Pair, raw);
        Value scaled = arith::TruncFOp::create(
            e.b, VectorType::get({2}, e.b.getBF16Type()), e.mulf(wide, wPair));
        frag =
            vector::InsertOp::create(e.b, scaled, frag, ArrayRef<int64_t>{r});
      }
    }
    frags.push_back(frag);
  }
  return frags;
}

Value RoleBuilder::walkState(StageRing &inputs, StageRing &published,
                             const HeadParams &params) {
  Value s0 = loadEnteringState();
  return e.forLoop(
      e.idx(0), chunkCount, e.idx(1), {s0},
      [&](Value i, ValueRange cur) -> SmallVector<Value> {
        inputs.waitFull(i);
        Value base = stageBase(inputs.stage(i));
        ChunkDecays d = decays(chunkOf(i), base, params);
        SmallVector<Value> state = wgmmaFragments(e, cur[0], kState / 8);

        publishState(published, i, state);

        // S = exp(g_last) S + (w x)^T B: x^T's fragments by ldmatrix.trans,
        // scaled along k by w_s = exp(g_last - g_s) dt_s.
        Value decay = e.exp(d.gLast);
        Value rowScale[2] = {decay, decay};
        Value acc = wgmmaAccumulators(e, scaleRows(e, state, rowScale));
        SmallVector<Value> frags = scaledXFragments(base, d);
        Value bRows = e.add(sharedAddress(ring), e.add(base, layout.b));
        acc = wgmmaChunkRegisterA(e, acc, frags, bRows, kState);
        inputs.release(i);
        return {acc};
      })[0];
}

SmallVector<Value> RoleBuilder::causalWeightFragments(const ChunkDecays &d,
                                                      ArrayRef<Value> cb,
                                                      Value gRow[2]) {
  AccumulatorLane at = accumulatorLane(e);
  Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
  SmallVector<Value> pRows; // [j][r]: bf16 pairs
  for (int64_t j = 0; j < kChunk / 8; ++j) {
    TokenPair t = columnPair(e, d, j);
    Value col = e.add(at.col, e.idx(8 * j));
    for (int64_t r = 0; r < 2; ++r) {
      Value w[2];
      for (int64_t i = 0; i < 2; ++i) {
        Value v =
            vector::ExtractOp::create(e.b, cb[j], ArrayRef<int64_t>{r, i});
        Value weighted = e.mulf(
            e.mulf(v, e.expRoundedTo16Bits(e.subf(gRow[r], t.g[i]))), t.dt[i]);
        // Above the diagonal the exponent grows: select, never multiply.
        w[i] =
            e.select(e.le(e.add(col, e.idx(i)), rows[r]), weighted, e.f32(0.0));
      }
      pRows.push_back(bf16Pair(e, w[0], w[1]));
    }
  }
  auto fragType = VectorType::get({4, 2}, e.b.getBF16Type());
  SmallVector<Value> frags;
  for (int64_t ks = 0; ks < kChunk / 16; ++ks) {
    Value frag = arith::ConstantOp::create(
        e.b, fragType,
        DenseElementsAttr::get(fragType, e.b.getZeroAttr(e.b.getBF16Type())));
    // Register R: rows + 8 (R % 2), columns + 8 (R / 2).
    for (int64_t r = 0; r < 4; ++r)
      frag = vector::InsertOp::create(e.b, pRows[2 * (2 * ks + r / 2) + r % 2],
                                      frag, ArrayRef<int64_t>{r});
    frags.push_back(frag);
  }
  return frags;
}

SmallVector<Value> RoleBuilder::withSkip(Value acc, Value base, Value d) {
  AccumulatorLane at = accumulatorLane(e);
  Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
  SmallVector<Value> out = wgmmaFragments(e, acc, kHeadDim / 8);
  Value xView = panels(base, layout.x, 1);
  auto f32Pair = VectorType::get({2}, e.b.getF32Type());
  Value dPair = d ? vector::BroadcastOp::create(e.b, f32Pair, d) : Value();
  SmallVector<Value> yPairs;
  for (int64_t j = 0; j < kHeadDim / 8; ++j)
    for (int64_t r = 0; r < 2; ++r) {
      Value pair = vector::ExtractOp::create(e.b, out[j], ArrayRef<int64_t>{r});
      if (!d) {
        yPairs.push_back(arith::TruncFOp::create(
            e.b, VectorType::get({2}, e.b.getBF16Type()), pair));
        continue;
      }
      SmallVector<Value> xAt =
          swizzled128At(e, rows[r], e.add(at.col, e.idx(8 * j)));
      Value x =
          arith::ExtFOp::create(e.b, f32Pair, e.loadVector(xView, xAt, 2));
      yPairs.push_back(arith::TruncFOp::create(
          e.b, VectorType::get({2}, e.b.getBF16Type()), e.fma(dPair, x, pair)));
    }
  return yPairs;
}

void RoleBuilder::walkOutputs(StageRing &inputs, StageRing &published,
                              const HeadParams &params, int64_t first) {
  AccumulatorLane at = accumulatorLane(e);
  Value ringAt = sharedAddress(ring);
  Value publishedAt = sharedAddress(publishedBuf);
  e.forLoop(e.idx(first), chunkCount, e.idx(shape.outputGroups), [&](Value i) {
    Value c = chunkOf(i);
    inputs.waitFull(i);
    Value base = stageBase(inputs.stage(i));
    Value cRows = e.add(ringAt, e.add(base, layout.c));
    Value bRows = e.add(ringAt, e.add(base, layout.b));
    Value xRows = e.add(ringAt, e.add(base, layout.x));
    auto cAt = [&](int64_t s) { return kStepAddress(e, cRows, s); };

    // C B^T, then C S^T once the state is published: two groups.
    NVVM::WgmmaFenceAlignedOp::create(e.b);
    Value cb =
        wgmmaKMajor(e, wgmmaZeroAccumulators(e, kChunk), kChunk, kState / 16,
                    cAt, [&](int64_t s) { return kStepAddress(e, bRows, s); });
    NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
    published.waitFull(i);
    Value stateRows =
        e.add(publishedAt, e.mul(published.stage(i), kPublishedBytes));
    Value ys = wgmmaKMajor(
        e, wgmmaZeroAccumulators(e, kHeadDim), kHeadDim, kState / 16, cAt,
        [&](int64_t s) { return kStepAddress(e, stateRows, s); });
    NVVM::WgmmaGroupSyncAlignedOp::create(e.b);

    // While C S^T runs: P's register A fragments from C B^T.
    ChunkDecays d = decays(c, base, params);
    Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
    Value gRow[2] = {gOfToken(e, d, rows[0]), gOfToken(e, d, rows[1])};
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 1);
    SmallVector<Value> cbFrags = wgmmaFragments(e, cb, kChunk / 8);
    SmallVector<Value> pFrags = causalWeightFragments(d, cbFrags, gRow);

    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
    published.release(i);
    Value rowScale[2] = {e.exp(gRow[0]), e.exp(gRow[1])};
    Value acc = wgmmaAccumulators(
        e, scaleRows(e, wgmmaFragments(e, ys, kHeadDim / 8), rowScale));
    acc = wgmmaChunkRegisterA(e, acc, pFrags, xRows, kHeadDim);

    // y[row][c 64 + t][head][p] = that + D x, in bf16; x from the
    // stage, which goes back once read. Rows past the sequence's end
    // are not stored.
    SmallVector<Value> yPairs = withSkip(acc, base, params.d);
    inputs.release(i);
    Value token0 = e.mul(c, kChunk);
    for (int64_t r = 0; r < 2; ++r) {
      Value token = e.add(token0, rows[r]);
      e.ifThen(e.lt(token, seqLen), [&] {
        for (int64_t j = 0; j < kHeadDim / 8; ++j)
          e.storeVector(
              yPairs[2 * j + r], ops.y,
              {row, token, head, e.add(p0, e.add(at.col, e.idx(8 * j)))});
      });
    }
  });
}

void RoleBuilder::storeState(Value s) {
  SmallVector<Value> frags = wgmmaFragments(e, s, kState / 8);
  if (!ops.pieceDecays)
    return storeStateFragments(frags, ops.finalStates, {row, head});
  e.ifThen(e.eq(piece, e.sub(pieces, e.idx(1))), [&] {
    storeStateFragments(frags, ops.finalStates, {row, head});
  });
}

void RoleBuilder::emit(KernelFunc &kernel) {
  kernel.useSharedArena();
  ring = kernel.sharedBufferAligned(shape.stages * layout.bytes, kSwizzleAlign);
  publishedBuf = kernel.sharedBufferAligned(2 * kPublishedBytes, kSwizzleAlign);
  StageRing inputs(e, kernel, shape.stages, 2 * kGroupThreads);
  StageRing published(e, kernel, 2, kGroupThreads,
                      /*producerArrivals=*/kGroupThreads);
  Value tid = e.threadId();
  e.ifThen(e.eq(tid, e.idx(0)), [&] {
    inputs.init();
    published.init();
  });
  e.barrier();

  locateBlock();
  Value role = e.div(tid, e.idx(kGroupThreads));
  HeadParams params = headParams();
  e.ifThen(e.eq(role, e.idx(0)), [&] {
    NVVM::SetMaxRegisterOp::create(e.b, kProducerRegisters,
                                   NVVM::SetMaxRegisterAction::decrease);
    e.ifThen(e.eq(tid, e.idx(0)), [&] { produce(inputs); });
  });
  e.ifThen(e.eq(role, e.idx(1)), [&] {
    NVVM::SetMaxRegisterOp::create(e.b, kStateRegisters,
                                   NVVM::SetMaxRegisterAction::increase);
    storeState(walkState(inputs, published, params));
  });
  int64_t outputRegisters = kOutputRegisters[shape.outputGroups - 1];
  for (int64_t k = 0; k < shape.outputGroups; ++k)
    e.ifThen(e.eq(role, e.idx(2 + k)), [&] {
      NVVM::SetMaxRegisterOp::create(
          e.b, outputRegisters,
          outputRegisters > 65536 / blockThreads(shape)
              ? NVVM::SetMaxRegisterAction::increase
              : NVVM::SetMaxRegisterAction::decrease);
      walkOutputs(inputs, published, params, k);
    });
}

int64_t blockThreads(const Shape &shape) {
  return kGroupThreads * (2 + shape.outputGroups);
}

int64_t sharedBytes(const Shape &shape) {
  // The ring, the two published states, each buffer's worst alignment
  // slack, and the mbarriers (two a stage).
  return shape.stages * kSSDStage.bytes + 2 * kPublishedBytes +
         2 * kSwizzleAlign + 16 * (shape.stages + 2);
}

std::string unsupportedShape(const Shape &shape) {
  std::string why;
  llvm::raw_string_ostream os(why);
  if (shape.headDim < kPBlock || shape.headDim > 4 * kPBlock ||
      shape.headDim % kPBlock)
    os << "headdim must be 64, 128, 192 or 256 (whole 64-column p-blocks, "
          "one a block), got "
       << shape.headDim;
  else if (shape.heads < 1 || shape.heads % kDtHeads)
    os << "heads must be a positive multiple of " << kDtHeads
       << " (dt's TMA box spans " << kDtHeads << " heads: 16 bytes), got "
       << shape.heads;
  else if (shape.groups < 1 || shape.heads % shape.groups)
    os << "groups must divide heads (" << shape.heads << "), got "
       << shape.groups;
  else if (shape.stages < kMinStages || shape.stages > kMaxStages)
    os << "stages must be " << kMinStages << " to " << kMaxStages << ", got "
       << shape.stages;
  else if (shape.outputGroups < 1 || shape.outputGroups > 2)
    os << "output warpgroups must be 1 or 2, got " << shape.outputGroups;
  else if (sharedBytes(shape) > kMaxSharedBytesPerBlock)
    os << shape.stages << " stages need " << sharedBytes(shape)
       << " bytes of shared memory, over the " << kMaxSharedBytesPerBlock
       << " a block may hold";
  return why;
}

void emitKernel(ImplicitLocOpBuilder &b, KernelFunc &kernel, const Shape &shape,
                const Operands &operands) {
  assert(unsupportedShape(shape).empty() && "a shape the kernel takes");
  Emitter e(b);
  RoleBuilder(e, shape, operands, kSSDStage).emit(kernel);
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
