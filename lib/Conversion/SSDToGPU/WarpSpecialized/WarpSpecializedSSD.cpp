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

#include <numeric>

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

Value RoleBuilder::loadEnteringState() {
  SmallVector<Value> frags =
      ops.initialStates
          ? loadStateFragments(ops.initialStates, {sequence, head})
          : wgmmaFragments(e, wgmmaZeroAccumulators(e, kState), kState / 8);
  if (ops.pieceDecays) {
    auto fragType = VectorType::get({2, 2}, e.b.getF32Type());
    frags =
        e.forLoop(e.idx(0), piece, e.idx(1), frags,
                  [&](Value j, ValueRange cur) -> SmallVector<Value> {
                    Value decay = vector::BroadcastOp::create(
                        e.b, fragType,
                        e.exp(e.load(ops.pieceDecays, {sequence, head, j})));
                    SmallVector<Value> local = loadStateFragments(
                        ops.pieceStates, {sequence, head, j});
                    SmallVector<Value> next;
                    for (auto [s, l] : llvm::zip(cur, local))
                      next.push_back(e.fma(decay, s, l));
                    return next;
                  });
  }
  return wgmmaAccumulators(e, frags);
}

void RoleBuilder::writePublished(StageRing &published, Value c,
                                 ArrayRef<Value> state) {
  Value view = swizzledTiles(publishedBuf, shape.publishedBuffers, 2);
  SmallVector<Value> pairs; // [j][r]
  for (Value frag : state)
    for (int64_t r = 0; r < 2; ++r)
      pairs.push_back(arith::TruncFOp::create(
          e.b, VectorType::get({2}, e.b.getBF16Type()),
          vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r})));
  storeMatrices(view, published.acquire(c), pairs);
}

Value RoleBuilder::walkState(StageRing &inputs, StageRing &prepared,
                             StageRing &published) {
  Value s0 = loadEnteringState();
  Value ringAt = sharedAddress(ring);
  return e.forLoop(
      e.idx(0), chunkCount, e.idx(1), {s0},
      [&](Value i, ValueRange cur) -> SmallVector<Value> {
        inputs.waitFull(i);
        prepared.waitFull(i);
        Value base = stageBase(inputs.stage(i));
        SmallVector<Value> state = wgmmaFragments(e, cur[0], kState / 8);
        writePublished(published, i, state);

        // S = exp(g_last) S + (w x)^T B, issued before the publication's
        // fence so that the chain waits for neither.
        Value decay = e.load(preparedView(base), {e.idx(prepared::kExpLast)});
        Value rowScale[2] = {decay, decay};
        Value acc = wgmmaAccumulators(e, scaleRows(e, state, rowScale));
        acc =
            wgmmaChunkTransposedA(e, acc, e.add(ringAt, e.add(base, layout.xs)),
                                  e.add(ringAt, e.add(base, layout.b)), kState);
        fenceSharedForAsyncProxy(e);
        published.publish(i);
        NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
        inputs.release(i);
        return {acc};
      })[0];
}

SmallVector<Value> RoleBuilder::causalWeightFragments(Value view,
                                                      ArrayRef<Value> cb,
                                                      Value factored) {
  AccumulatorLane at = accumulatorLane(e);
  Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
  auto pairOf = [&](int64_t kind, Value token) {
    return e.loadVector(view, {e.add(token, e.idx(kind))}, 2);
  };
  auto element = [&](Value pair, int64_t i) {
    return vector::ExtractOp::create(e.b, pair, ArrayRef<int64_t>{i});
  };
  // [j][r]: bf16 pairs of the weights from `weight(j, r, i, cb value)`.
  auto weighted =
      [&](function_ref<Value(int64_t, int64_t, int64_t, Value)> weight) {
        SmallVector<Value> pRows;
        for (int64_t j = 0; j < kChunk / 8; ++j)
          for (int64_t r = 0; r < 2; ++r) {
            Value col = e.add(at.col, e.idx(8 * j));
            Value w[2];
            for (int64_t i = 0; i < 2; ++i) {
              Value v = vector::ExtractOp::create(e.b, cb[j],
                                                  ArrayRef<int64_t>{r, i});
              // Above the diagonal the weight may overflow: select, never
              // multiply.
              w[i] = e.select(e.le(e.add(col, e.idx(i)), rows[r]),
                              weight(j, r, i, v), e.f32(0.0));
            }
            pRows.push_back(bf16Pair(e, w[0], w[1]));
          }
        return pRows;
      };
  auto pairType = VectorType::get({2}, e.b.getBF16Type());
  SmallVector<Type> types(kChunk / 4, pairType);
  SmallVector<Value> pRows = e.ifElse(
      factored, types,
      [&] {
        Value eRow[2] = {e.load(view, {e.add(rows[0], e.idx(prepared::kE))}),
                         e.load(view, {e.add(rows[1], e.idx(prepared::kE))})};
        SmallVector<Value> f;
        for (int64_t j = 0; j < kChunk / 8; ++j)
          f.push_back(pairOf(prepared::kF, e.add(at.col, e.idx(8 * j))));
        return weighted([&](int64_t j, int64_t r, int64_t i, Value v) {
          return e.mulf(v, e.mulf(eRow[r], element(f[j], i)));
        });
      },
      [&] {
        Value gRow[2] = {e.load(view, {e.add(rows[0], e.idx(prepared::kG))}),
                         e.load(view, {e.add(rows[1], e.idx(prepared::kG))})};
        SmallVector<Value> g, dt;
        for (int64_t j = 0; j < kChunk / 8; ++j) {
          Value col = e.add(at.col, e.idx(8 * j));
          g.push_back(pairOf(prepared::kG, col));
          dt.push_back(pairOf(prepared::kDt, col));
        }
        return weighted([&](int64_t j, int64_t r, int64_t i, Value v) {
          return e.mulf(e.mulf(v, e.expRoundedTo16Bits(
                                      e.subf(gRow[r], element(g[j], i)))),
                        element(dt[j], i));
        });
      });
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

SmallVector<Value> RoleBuilder::withSkip(Value acc, ArrayRef<Value> xPairs,
                                         Value d) {
  SmallVector<Value> out = wgmmaFragments(e, acc, kHeadDim / 8);
  auto f32Pair = VectorType::get({2}, e.b.getF32Type());
  auto bf16Pair = VectorType::get({2}, e.b.getBF16Type());
  Value dPair = d ? vector::BroadcastOp::create(e.b, f32Pair, d) : Value();
  SmallVector<Value> yPairs;
  for (int64_t j = 0; j < kHeadDim / 8; ++j)
    for (int64_t r = 0; r < 2; ++r) {
      Value pair = vector::ExtractOp::create(e.b, out[j], ArrayRef<int64_t>{r});
      if (d)
        pair =
            e.fma(dPair, arith::ExtFOp::create(e.b, f32Pair, xPairs[2 * j + r]),
                  pair);
      yPairs.push_back(arith::TruncFOp::create(e.b, bf16Pair, pair));
    }
  return yPairs;
}

void RoleBuilder::storeY(Value c, Value view, Value slot,
                         ArrayRef<Value> yPairs, int64_t group) {
  storeMatrices(view, slot, yPairs);
  // The tile is whole once the warpgroup's four warps have stored their
  // rows; a slot of its own, written two chunks later, was read before
  // this barrier.
  warpgroupBarrier(e, 2 + group);
  // Whole 128-byte rows: a warp four rows, a thread 16 bytes of each of
  // four; rows past the sequence's end are not stored.
  Value tid = e.rem(e.threadId(), e.idx(kGroupThreads));
  Value token0 = e.mul(c, kChunk);
  for (int64_t u = 0; u < kChunk * kHeadDim / 8 / kGroupThreads; ++u) {
    Value piece = e.add(tid, e.idx(u * kGroupThreads));
    Value r = e.div(piece, e.idx(kHeadDim / 8));
    Value col = e.mul(e.rem(piece, e.idx(kHeadDim / 8)), 8);
    Value token = e.add(token0, r);
    e.ifThen(e.lt(token, seqLen), [&] {
      SmallVector<Value> idx = swizzled128At(e, r, col);
      Value v = e.loadVector(view, {slot, idx[0], idx[1], idx[2]}, 8);
      e.storeVector(v, ops.y, {row, inRow(token), head, e.add(p0, col)});
    });
  }
}

void RoleBuilder::walkOutputs(StageRing &inputs, StageRing &prepared,
                              StageRing &published, const HeadParams &params,
                              int64_t first) {
  AccumulatorLane at = accumulatorLane(e);
  Value ringAt = sharedAddress(ring);
  Value publishedAt = sharedAddress(publishedBuf);
  e.forLoop(e.idx(first), chunkCount, e.idx(shape.outputGroups), [&](Value i) {
    Value c = chunkOf(i);
    // C B^T and C S^T need the copies alone: the prepared decays are
    // waited for only once both are issued, off the products' way.
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
        e.add(publishedAt, e.mul(published.buffer(i), kPublishedBytes));
    Value ys = wgmmaKMajor(
        e, wgmmaZeroAccumulators(e, kHeadDim), kHeadDim, kState / 16, cAt,
        [&](int64_t s) { return kStepAddress(e, stateRows, s); });
    NVVM::WgmmaGroupSyncAlignedOp::create(e.b);

    // While C S^T runs: P's register A fragments from C B^T.
    prepared.waitFull(i);
    Value view = preparedView(base);
    Value factored = factoredChunk(e, e.load(view, {e.idx(prepared::kGLast)}));
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 1);
    SmallVector<Value> pFrags = causalWeightFragments(
        view, wgmmaFragments(e, cb, kChunk / 8), factored);

    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
    published.release(i);
    Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
    Value rowScale[2] = {e.load(view, {e.add(rows[0], e.idx(prepared::kE))}),
                         e.load(view, {e.add(rows[1], e.idx(prepared::kE))})};
    Value acc = wgmmaAccumulators(
        e, scaleRows(e, wgmmaFragments(e, ys, kHeadDim / 8), rowScale));
    // x for D x, read while P x runs.
    SmallVector<Value> xPairs =
        params.d ? xFragments(base) : SmallVector<Value>();
    acc = wgmmaChunkRegisterA(e, acc, pFrags, xRows, kHeadDim);

    // y[row][c 64 + t][head][p] = that + D x, in bf16, staged in shared
    // memory and stored by whole rows.
    SmallVector<Value> yPairs = withSkip(acc, xPairs, params.d);
    if (!shape.yInStage) {
      // The stage goes back once read; y's tiles alternate.
      inputs.release(i);
      storeY(c, swizzledTiles(yBuf, 2 * shape.outputGroups, 1),
             e.add(e.idx(2 * first),
                   e.rem(e.div(i, e.idx(shape.outputGroups)), e.idx(2))),
             yPairs, first);
      return;
    }
    // In the stage's first C panel (C is read by now): the stage goes back
    // once y is stored, its writes ordered before the next fill's copies.
    storeY(c, swizzledTiles(ring, 1, 1, e.add(base, layout.c)), e.idx(0),
           yPairs, first);
    fenceSharedForAsyncProxy(e);
    inputs.release(i);
  });
}

void RoleBuilder::storeState(Value s) {
  SmallVector<Value> frags = wgmmaFragments(e, s, kState / 8);
  if (!ops.pieceDecays)
    return storeStateFragments(frags, ops.finalStates, {sequence, head});
  e.ifThen(e.eq(piece, e.sub(pieces, e.idx(1))), [&] {
    storeStateFragments(frags, ops.finalStates, {sequence, head});
  });
}

void RoleBuilder::emit(KernelFunc &kernel) {
  kernel.useSharedArena();
  ring = kernel.sharedBufferAligned(shape.stages * layout.bytes, kSwizzleAlign);
  publishedBuf = kernel.sharedBufferAligned(
      shape.publishedBuffers * kPublishedBytes, kSwizzleAlign);
  if (!shape.yInStage)
    yBuf = kernel.sharedBufferAligned(2 * shape.outputGroups * kPanelBytes,
                                      kSwizzleAlign);
  StageRing inputs(e, kernel, shape.stages, 2 * kGroupThreads);
  // The prepared ring's stages are the inputs' own: the prep warps write
  // a stage once its fill has landed, which needs every consumer's release
  // of the fill before, so its empty barriers go unused.
  StageRing prepared(e, kernel, shape.stages, /*consumerThreads=*/1,
                     /*producerArrivals=*/kPrepThreads);
  // A stage of barriers per output warpgroup at least: with one buffer
  // and two warpgroups taking alternate chunks, each must wait on phases
  // of its own chunks alone (StageRing.h).
  StageRing published(e, kernel, publishedStages(shape), kGroupThreads,
                      /*producerArrivals=*/kGroupThreads,
                      /*buffers=*/shape.publishedBuffers);
  addPartialLanding(kernel);
  Value tid = e.threadId();
  e.ifThen(e.eq(tid, e.idx(0)), [&] {
    inputs.init();
    prepared.init();
    published.init();
    if (partialLanding)
      partialLanding->init();
  });
  e.barrier();

  locateBlock();
  Value role = e.div(tid, e.idx(kGroupThreads));
  HeadParams params = headParams(head);
  const RegisterBudget &budget = kRegisterBudgets[shape.outputGroups - 1];
  int64_t launchRegisters = 65536 / blockThreads(shape) / 8 * 8;
  auto setRegisters = [&](int64_t registers) {
    if (registers != launchRegisters)
      NVVM::SetMaxRegisterOp::create(
          e.b, registers,
          registers > launchRegisters ? NVVM::SetMaxRegisterAction::increase
                                      : NVVM::SetMaxRegisterAction::decrease);
  };
  e.ifThen(e.eq(role, e.idx(0)), [&] {
    setRegisters(budget.producer);
    e.ifThen(e.eq(tid, e.idx(0)), [&] { produce(inputs); });
    e.ifThen(e.andi(e.le(e.idx(kPrepFirstThread), tid),
                    e.lt(tid, e.idx(kPrepFirstThread + kPrepThreads))),
             [&] { walkPrep(inputs, prepared, params); });
  });
  e.ifThen(e.eq(role, e.idx(1)), [&] {
    setRegisters(budget.state);
    storeState(walkState(inputs, prepared, published));
  });
  for (int64_t k = 0; k < shape.outputGroups; ++k)
    e.ifThen(e.eq(role, e.idx(2 + k)), [&] {
      setRegisters(budget.output);
      walkOutputs(inputs, prepared, published, params, k);
    });
}

int64_t publishedStages(const Shape &shape) {
  return std::lcm(shape.publishedBuffers, shape.outputGroups);
}

int64_t blockThreads(const Shape &shape) {
  return kGroupThreads * (2 + shape.outputGroups);
}

int64_t sharedBytes(const Shape &shape) {
  // The ring, the published states, two y tiles an output warpgroup (none
  // with y in the stages), each buffer's worst alignment slack, and the
  // mbarriers (two a stage of each ring; packed sequences' landing ring).
  int64_t yTiles =
      shape.yInStage ? 0 : 2 * shape.outputGroups * kPanelBytes + kSwizzleAlign;
  return shape.stages * kSSDStage.bytes +
         shape.publishedBuffers * kPublishedBytes + yTiles + 2 * kSwizzleAlign +
         16 * (2 * shape.stages + publishedStages(shape) +
               (shape.packedSequences ? 1 : 0));
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
  else if (shape.pieceHeads != 1 && shape.pieceHeads != 2 &&
           shape.pieceHeads != 4)
    os << "piece heads must be 1, 2 or 4, got " << shape.pieceHeads;
  else if ((shape.heads / shape.groups) % shape.pieceHeads)
    os << "piece heads must divide a group's heads ("
       << shape.heads / shape.groups << "), got " << shape.pieceHeads;
  else if (shape.stages < kMinStages || shape.stages > kMaxStages)
    os << "stages must be " << kMinStages << " to " << kMaxStages << ", got "
       << shape.stages;
  else if (shape.outputGroups < 1 || shape.outputGroups > 2)
    os << "output warpgroups must be 1 or 2, got " << shape.outputGroups;
  else if (shape.publishedBuffers < 1 || shape.publishedBuffers > 2)
    os << "published state buffers must be 1 or 2, got "
       << shape.publishedBuffers;
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
