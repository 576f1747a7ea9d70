//===- TestWarpSpecializedSSD.cpp - the SSD by warpgroup roles (test pass) ===//
//
// ssd-test-warp-specialized-ssd builds `warp_specialized_ssd`: the Mamba-2
// layer's scan (softplus(dt + bias), D x, initial and final states) of one
// (batch row, head, 64 columns of the head dimension) per block, its chunks of
// 64 tokens walked in order with the state on chip, by three warpgroups with
// different roles:
//   - warpgroup 0 (setmaxnreg 40): one thread copies each chunk's C, B, x
//     and dt by TMA into a StageRing of `stages` stages;
//   - warpgroup 1, the state (setmaxnreg 232): holds S (64 x 128, f32) in
//     wgmma accumulators for the whole walk; per chunk it publishes S in
//     bf16 to the other role (a ring of two buffers), then
//     S = exp(g_last) S + (w x)^T B, w_s = exp(g_last - g_s) dt_s, the A
//     operand made in registers from x by ldmatrix.trans;
//   - warpgroup 2, the outputs (setmaxnreg 232): C B^T and C S^T on wgmma
//     from the stages, the causal weights exp(g_t - g_s) dt_s applied to
//     C B^T in registers while C S^T runs, the rows of C S^T scaled by
//     exp(g_t), then y += P x with P as register A. With output-groups=2,
//     warpgroups 2 and 3 (120 registers each) take alternate chunks, so
//     that two chunks' outputs are in flight beside the state's walk.
// So the copies, the state's chain and the chunk's outputs overlap, and
// nothing but y (bf16) and the last state goes back to global memory. It is the
// prototype of a kernel for the shapes where batch x heads fill the GPU,
// run on the GPU against a float64 reference
// (scripts/device/run_warp_specialized_ssd.py).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "StageRing.h"
#include "TmaCopy.h"
#include "Wgmma.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace ssd {
#define GEN_PASS_DEF_TESTWARPSPECIALIZEDSSD
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;

namespace {

/// kHeadDim is a block's share of the head dimension (its p-block).
constexpr int64_t kChunk = 64, kHeadDim = 64, kState = 128;
constexpr int64_t kGroupThreads = 128;
/// Registers a thread of each role: the producer gives back what the state
/// takes; with two output warpgroups each gives back 8 of the 128 that 512
/// threads start with, so that the state still gets 232.
constexpr int64_t kProducerRegisters = 40, kStateRegisters = 232;
constexpr int64_t kOutputRegisters[] = {232, 120};
/// One 64-wide bf16 panel of a chunk's rows in the 128-byte swizzle.
constexpr int64_t kPanelBytes = kChunk * 128;
/// dt comes in the layer's layout, [tokens][heads] f32: a TMA box's rows
/// are at least 16 bytes, so a chunk's box holds the dt of 4 heads, the
/// block's among them.
constexpr int64_t kDtHeads = 4;
/// A stage: C and B (two panels each), x (one), dt (64 x 4 f32); the next
/// stage 1024-aligned.
constexpr int64_t kCOffset = 0, kBOffset = 2 * kPanelBytes,
                  kXOffset = 4 * kPanelBytes, kDtOffset = 5 * kPanelBytes;
constexpr int64_t kStageCopyBytes = kDtOffset + 4 * kDtHeads * kChunk;
constexpr int64_t kStageBytes =
    (kStageCopyBytes + kSwizzleAlign - 1) / kSwizzleAlign * kSwizzleAlign;
/// The published state: 64 rows (p) of 128 bf16 (n), two panels.
constexpr int64_t kPublishedBytes = 2 * kPanelBytes;
constexpr int64_t kSharedLimit = 232448;

/// A head's parameters: A, dt's bias and the skip weight D, and its
/// column in a stage's dt box.
struct HeadParams {
  Value a, dtBias, d, dtColumn;
};

/// The cumulative decays of one chunk, spread over a warp: lane l holds
/// tokens 2l and 2l + 1 (dt = softplus(dt_raw + bias), as the Mamba-2
/// layer's; g the cumsum of dt A inside the chunk).
struct ChunkDecays {
  Value g[2], dt[2];
  Value gLast;
};

/// Every warp of a consumer role computes its own copy from the stage's dt
/// (five shuffles), so neither role waits for the other.
ChunkDecays chunkDecays(Emitter &e, Value dtView, const HeadParams &head) {
  SSDProblem layer;
  layer.softplus = true;
  layer.dtHigh = std::numeric_limits<double>::infinity();
  Value token = e.mul(e.laneId(), 2);
  ChunkDecays d;
  for (int64_t i = 0; i < 2; ++i)
    d.dt[i] = processDt(e, layer,
                        e.load(dtView, {e.add(token, e.idx(i)), head.dtColumn}),
                        head.dtBias);
  Value a0 = e.mulf(d.dt[0], head.a), a1 = e.mulf(d.dt[1], head.a);
  Value upTo = e.warpInclusiveScan(e.addf(a0, a1));
  d.g[0] = e.subf(upTo, a1);
  d.g[1] = upTo;
  d.gLast = e.warpShuffle(upTo, e.idx(31));
  return d;
}

/// Tokens 8j + 2 (lane % 4) + {0, 1}: the columns lane holds in n8
/// fragment j of an accumulator, or k columns of an A fragment.
struct TokenPair {
  Value g[2], dt[2];
};
TokenPair columnPair(Emitter &e, const ChunkDecays &d, int64_t j) {
  Value src = e.add(e.idx(4 * j), e.rem(e.laneId(), e.idx(4)));
  TokenPair t;
  for (int64_t i = 0; i < 2; ++i) {
    t.g[i] = e.warpShuffle(d.g[i], src);
    t.dt[i] = e.warpShuffle(d.dt[i], src);
  }
  return t;
}

/// g of token `row` (index, per lane).
Value gOfToken(Emitter &e, const ChunkDecays &d, Value row) {
  Value src = e.div(row, e.idx(2));
  Value even = e.warpShuffle(d.g[0], src), odd = e.warpShuffle(d.g[1], src);
  return e.select(e.eq(e.rem(row, e.idx(2)), e.idx(1)), odd, even);
}

/// This lane's first accumulator row in its warp's 16 (warp w % 4 of a
/// warpgroup holds rows 16 (w % 4) ..) and first column in an n8 fragment.
struct AccumulatorLane {
  Value row, col;
};
AccumulatorLane accumulatorLane(Emitter &e) {
  Value lane = e.laneId();
  Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
  return {e.add(e.mul(warp, 16), e.div(lane, e.idx(4))),
          e.mul(e.rem(lane, e.idx(4)), 2)};
}

/// `d` += A B^T over K = `steps` x 16, both operands K-major in the
/// swizzle: A's k16 step s by descriptor at `aAt(s)`, B's at `bAt(s)`.
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

/// `d` += A B as one commit group, waited for: A the chunk's four k16
/// register fragments `aFrags` (K = 64 tokens), B the chunk's N-major
/// swizzled rows at `bRows` (N = `n`, 64-wide panels a chunk apart).
Value wgmmaChunkRegisterA(Emitter &e, Value d, ArrayRef<Value> aFrags,
                          Value bRows, int64_t n) {
  NVVM::WgmmaFenceAlignedOp::create(e.b);
  for (int64_t ks = 0; ks < kChunk / 16; ++ks)
    d = wgmmaRegisterA(e, d, aFrags[ks],
                       swizzledNMajorDescriptor(
                           e, e.add(bRows, e.idx(ks * 16 * 128)), kPanelBytes),
                       n, e.b.getBF16Type(), /*bKMajor=*/false);
  NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
  NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
  return d;
}

/// The byte address of a K-major swizzled operand's k16 step `s` (k over
/// 64-wide panels of `kPanelBytes`).
Value kStepAddress(Emitter &e, Value base, int64_t s) {
  return e.add(base, e.idx((s / 4) * kPanelBytes + (s % 4) * 32));
}

/// Scales each accumulator row r of `fragments` by `rowScale[r]`, r in
/// {0, 1}: the lane's rows row and row + 8.
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

struct TestWarpSpecializedSSDPass
    : ssd::impl::TestWarpSpecializedSSDBase<TestWarpSpecializedSSDPass> {
  using Base::Base;

  int64_t threads() const { return kGroupThreads * (2 + outputGroups); }
  int64_t sharedBytes() const {
    return stages * kStageBytes + 2 * kPublishedBytes + 2 * kSwizzleAlign +
           16 * (stages + 2);
  }

  LogicalResult checkOptions(ModuleOp module) {
    auto bad = [&](const Twine &why) {
      return module.emitError() << "ssd-test-warp-specialized-ssd: " << why;
    };
    if (batch < 1)
      return bad("batch must be positive, got " + Twine(batch));
    if (headdim < kHeadDim || headdim > 256 || headdim % kHeadDim)
      return bad("headdim must be 64, 128, 192 or 256 (whole 64-column "
                 "p-blocks, one a block), got " +
                 Twine(headdim));
    if (groups < 1 || heads % groups)
      return bad("groups must divide heads (" + Twine(heads) + "), got " +
                 Twine(groups));
    if (heads < 1 || heads % kDtHeads)
      return bad("heads must be a positive multiple of " + Twine(kDtHeads) +
                 " (dt's TMA box spans " + Twine(kDtHeads) +
                 " heads: 16 bytes), got " + Twine(heads));
    if (seqlen <= 0 || seqlen % kChunk)
      return bad("seqlen must be a positive multiple of " + Twine(kChunk) +
                 " (whole chunks), got " + Twine(seqlen));
    if (stages < 2 || stages > 4)
      return bad("stages must be 2 to 4, got " + Twine(stages));
    if (outputGroups < 1 || outputGroups > 2)
      return bad("output-groups must be 1 or 2, got " + Twine(outputGroups));
    if (sharedBytes() > kSharedLimit)
      return bad(Twine(stages) + " stages need " + Twine(sharedBytes()) +
                 " bytes of shared memory, over the " + Twine(kSharedLimit) +
                 " a block may hold");
    return success();
  }

  /// The stage's operand views: [panels][64 rows][64] bf16, and dt.
  Value panels(Emitter &e, Value stageBase, int64_t offset, int64_t count) {
    auto type =
        MemRefType::get({count, kChunk, kSwizzlePanel}, e.b.getBF16Type(),
                        MemRefLayoutAttrInterface(),
                        cast<MemRefType>(ring.getType()).getMemorySpace());
    return memref::ViewOp::create(e.b, type, ring, e.add(stageBase, offset),
                                  ValueRange{});
  }
  Value dtView(Emitter &e, Value stageBase) {
    auto type = MemRefType::get(
        {kChunk, kDtHeads}, e.b.getF32Type(), MemRefLayoutAttrInterface(),
        cast<MemRefType>(ring.getType()).getMemorySpace());
    return memref::ViewOp::create(e.b, type, ring, e.add(stageBase, kDtOffset),
                                  ValueRange{});
  }
  Value stageBase(Emitter &e, Value stage) { return e.mul(stage, kStageBytes); }
  Value sharedAddress(Emitter &e, Value buffer) {
    return memref::ExtractAlignedPointerAsIndexOp::create(e.b, buffer);
  }

  /// Warpgroup 0, thread 0: every chunk's C, B (two boxes each), x and dt.
  void produce(Emitter &e, StageRing &inputs, ValueRange maps, Value head,
               Value row0) {
    Value cMap = maps[0], bMap = maps[1], xMap = maps[2], dtMap = maps[3];
    e.forLoop(e.idx(0), e.idx(seqlen / kChunk), e.idx(1), [&](Value c) {
      Value s = inputs.acquire(c, kStageCopyBytes);
      Value base = stageBase(e, s);
      Value full = inputs.full(s);
      Value row = e.add(row0, e.mul(c, kChunk));
      auto at = [&](int64_t offset) {
        return elementPointer(e, ring, {e.add(base, offset)}, /*space=*/3);
      };
      // Coordinates innermost first: (column, row).
      for (int64_t panel = 0; panel < 2; ++panel) {
        Value col = e.add(e.mul(group, kState), e.idx(panel * kSwizzlePanel));
        copyTmaBox(e, cMap, at(kCOffset + panel * kPanelBytes), full,
                   {col, row});
        copyTmaBox(e, bMap, at(kBOffset + panel * kPanelBytes), full,
                   {col, row});
      }
      copyTmaBox(e, xMap, at(kXOffset), full,
                 {e.add(e.mul(head, headdim), p0), row});
      Value firstHead = e.sub(head, e.rem(head, e.idx(kDtHeads)));
      copyTmaBox(e, dtMap, at(kDtOffset), full, {firstHead, row});
    });
  }

  /// The state role's accumulators holding the initial state of (row
  /// `b`, head `head`) at this block's p-block.
  Value loadInitialState(Emitter &e, Value initial, Value b, Value head) {
    AccumulatorLane at = accumulatorLane(e);
    SmallVector<Value> frags;
    for (int64_t j = 0; j < kState / 8; ++j) {
      SmallVector<Value> elements;
      for (int64_t r = 0; r < 2; ++r) {
        Value pair =
            e.loadVector(initial,
                         {b, head, e.add(p0, e.add(at.row, e.idx(8 * r))),
                          e.add(at.col, e.idx(8 * j))},
                         2);
        for (int64_t i = 0; i < 2; ++i)
          elements.push_back(
              vector::ExtractOp::create(e.b, pair, ArrayRef<int64_t>{i}));
      }
      frags.push_back(vector::FromElementsOp::create(
          e.b, VectorType::get({2, 2}, e.b.getF32Type()), elements));
    }
    return wgmmaAccumulators(e, frags);
  }

  /// Publishes `state` (the state entering chunk `c`) in bf16, where the
  /// output role reads it as C S^T's K-major B: [buffer][panel][p][n % 64].
  void publishState(Emitter &e, StageRing &published, Value c,
                    ArrayRef<Value> state) {
    AccumulatorLane at = accumulatorLane(e);
    auto viewType = MemRefType::get(
        {2, 2, kChunk, kSwizzlePanel}, e.b.getBF16Type(),
        MemRefLayoutAttrInterface(),
        cast<MemRefType>(publishedBuf.getType()).getMemorySpace());
    Value view = memref::ViewOp::create(e.b, viewType, publishedBuf, e.idx(0),
                                        ValueRange{});
    Value buffer = published.acquire(c);
    for (int64_t j = 0; j < kState / 8; ++j)
      for (int64_t r = 0; r < 2; ++r) {
        Value row =
            vector::ExtractOp::create(e.b, state[j], ArrayRef<int64_t>{r});
        Value narrow = arith::TruncFOp::create(
            e.b, VectorType::get({2}, e.b.getBF16Type()), row);
        SmallVector<Value> idx = swizzled128At(e, e.add(at.row, e.idx(8 * r)),
                                               e.add(at.col, e.idx(8 * j)));
        e.storeVector(narrow, view, {buffer, idx[0], idx[1], idx[2]});
      }
    fenceSharedForAsyncProxy(e);
    published.publish(c);
  }

  /// The state update's A = (w x)^T, four k16 register fragments: x^T's by
  /// ldmatrix.trans from the stage at `base`, scaled along k by
  /// w_s = exp(g_last - g_s) dt_s.
  SmallVector<Value> scaledXFragments(Emitter &e, Value base,
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
    Value xView = panels(e, base, kXOffset, 1);
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
        Value wPair = vector::FromElementsOp::create(e.b, f32Pair,
                                                     ValueRange{w[0], w[1]});
        for (int64_t r = 2 * half; r < 2 * half + 2; ++r) {
          Value raw =
              vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
          Value wide = arith::ExtFOp::create(e.b, f32Pair, raw);
          Value scaled = arith::TruncFOp::create(
              e.b, VectorType::get({2}, e.b.getBF16Type()),
              e.mulf(wide, wPair));
          frag =
              vector::InsertOp::create(e.b, scaled, frag, ArrayRef<int64_t>{r});
        }
      }
      frags.push_back(frag);
    }
    return frags;
  }

  /// Warpgroup 1: the state's walk; returns S after the last chunk.
  Value walkState(Emitter &e, StageRing &inputs, StageRing &published,
                  const HeadParams &head, Value initial, Value b,
                  Value headIndex) {
    Value s0 = loadInitialState(e, initial, b, headIndex);
    return e.forLoop(
        e.idx(0), e.idx(seqlen / kChunk), e.idx(1), {s0},
        [&](Value c, ValueRange cur) -> SmallVector<Value> {
          inputs.waitFull(c);
          Value base = stageBase(e, inputs.stage(c));
          ChunkDecays d = chunkDecays(e, dtView(e, base), head);
          SmallVector<Value> state = wgmmaFragments(e, cur[0], kState / 8);

          publishState(e, published, c, state);

          // S = exp(g_last) S + (w x)^T B: x^T's fragments by ldmatrix.trans,
          // scaled along k by w_s = exp(g_last - g_s) dt_s.
          Value decay = e.exp(d.gLast);
          Value rowScale[2] = {decay, decay};
          Value acc = wgmmaAccumulators(e, scaleRows(e, state, rowScale));
          SmallVector<Value> frags = scaledXFragments(e, base, d);
          Value bRows = e.add(sharedAddress(e, ring), e.add(base, kBOffset));
          acc = wgmmaChunkRegisterA(e, acc, frags, bRows, kState);
          inputs.release(c);
          return {acc};
        })[0];
  }

  /// P = C B^T exp(g_t - g_s) dt_s on s <= t (0 above), from C B^T's
  /// accumulator fragments `cb` and g of the lane's rows `gRow`, as the
  /// register A fragments of P x: k16 step ks from fragments 2ks, 2ks + 1
  /// (the accumulator layout is the A layout).
  SmallVector<Value> causalWeightFragments(Emitter &e, const ChunkDecays &d,
                                           ArrayRef<Value> cb, Value gRow[2]) {
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
          Value weighted =
              e.mulf(e.mulf(v, e.expRoundedTo16Bits(e.subf(gRow[r], t.g[i]))),
                     t.dt[i]);
          // Above the diagonal the exponent grows: select, never multiply.
          w[i] = e.select(e.le(e.add(col, e.idx(i)), rows[r]), weighted,
                          e.f32(0.0));
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
        frag =
            vector::InsertOp::create(e.b, pRows[2 * (2 * ks + r / 2) + r % 2],
                                     frag, ArrayRef<int64_t>{r});
      frags.push_back(frag);
    }
    return frags;
  }

  /// y = `acc` + D x in bf16 pairs ([j][r], the accumulator layout), x read
  /// from the stage at `base`.
  SmallVector<Value> withSkip(Emitter &e, Value acc, Value base, Value d) {
    AccumulatorLane at = accumulatorLane(e);
    Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
    SmallVector<Value> out = wgmmaFragments(e, acc, kHeadDim / 8);
    Value xView = panels(e, base, kXOffset, 1);
    auto f32Pair = VectorType::get({2}, e.b.getF32Type());
    Value dPair = vector::BroadcastOp::create(e.b, f32Pair, d);
    SmallVector<Value> yPairs;
    for (int64_t j = 0; j < kHeadDim / 8; ++j)
      for (int64_t r = 0; r < 2; ++r) {
        Value pair =
            vector::ExtractOp::create(e.b, out[j], ArrayRef<int64_t>{r});
        SmallVector<Value> xAt =
            swizzled128At(e, rows[r], e.add(at.col, e.idx(8 * j)));
        Value x =
            arith::ExtFOp::create(e.b, f32Pair, e.loadVector(xView, xAt, 2));
        yPairs.push_back(arith::TruncFOp::create(
            e.b, VectorType::get({2}, e.b.getBF16Type()),
            e.fma(dPair, x, pair)));
      }
    return yPairs;
  }

  /// Output warpgroup `first` (0 .. outputGroups - 1): y of chunks first,
  /// first + outputGroups, ...
  void walkOutputs(Emitter &e, StageRing &inputs, StageRing &published,
                   const HeadParams &params, Value y, Value b, Value head,
                   int64_t first) {
    AccumulatorLane at = accumulatorLane(e);
    Value ringAt = sharedAddress(e, ring);
    Value publishedAt = sharedAddress(e, publishedBuf);
    e.forLoop(
        e.idx(first), e.idx(seqlen / kChunk), e.idx(outputGroups),
        [&](Value c) {
          inputs.waitFull(c);
          Value base = stageBase(e, inputs.stage(c));
          Value cRows = e.add(ringAt, e.add(base, kCOffset));
          Value bRows = e.add(ringAt, e.add(base, kBOffset));
          Value xRows = e.add(ringAt, e.add(base, kXOffset));
          auto cAt = [&](int64_t s) { return kStepAddress(e, cRows, s); };

          // C B^T, then C S^T once the state is published: two groups.
          NVVM::WgmmaFenceAlignedOp::create(e.b);
          Value cb = wgmmaKMajor(
              e, wgmmaZeroAccumulators(e, kChunk), kChunk, kState / 16, cAt,
              [&](int64_t s) { return kStepAddress(e, bRows, s); });
          NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
          published.waitFull(c);
          Value stateRows =
              e.add(publishedAt, e.mul(published.stage(c), kPublishedBytes));
          Value ys = wgmmaKMajor(
              e, wgmmaZeroAccumulators(e, kHeadDim), kHeadDim, kState / 16, cAt,
              [&](int64_t s) { return kStepAddress(e, stateRows, s); });
          NVVM::WgmmaGroupSyncAlignedOp::create(e.b);

          // While C S^T runs: P's register A fragments from C B^T.
          ChunkDecays d = chunkDecays(e, dtView(e, base), params);
          Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
          Value gRow[2] = {gOfToken(e, d, rows[0]), gOfToken(e, d, rows[1])};
          NVVM::WgmmaWaitGroupSyncOp::create(e.b, 1);
          SmallVector<Value> cbFrags = wgmmaFragments(e, cb, kChunk / 8);
          SmallVector<Value> pFrags =
              causalWeightFragments(e, d, cbFrags, gRow);

          NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
          published.release(c);
          Value rowScale[2] = {e.exp(gRow[0]), e.exp(gRow[1])};
          Value acc = wgmmaAccumulators(
              e, scaleRows(e, wgmmaFragments(e, ys, kHeadDim / 8), rowScale));
          acc = wgmmaChunkRegisterA(e, acc, pFrags, xRows, kHeadDim);

          // y[b][c 64 + t][head][p] = that + D x, in bf16; x from the stage,
          // which goes back once read.
          SmallVector<Value> yPairs = withSkip(e, acc, base, params.d);
          inputs.release(c);
          Value token0 = e.mul(c, kChunk);
          for (int64_t j = 0; j < kHeadDim / 8; ++j)
            for (int64_t r = 0; r < 2; ++r) {
              Value pair = yPairs[2 * j + r];
              e.storeVector(pair, y,
                            {b, e.add(token0, rows[r]), head,
                             e.add(p0, e.add(at.col, e.idx(8 * j)))});
            }
        });
  }

  void storeState(Emitter &e, Value s, Value states, Value b, Value head) {
    AccumulatorLane at = accumulatorLane(e);
    SmallVector<Value> frags = wgmmaFragments(e, s, kState / 8);
    for (int64_t j = 0; j < kState / 8; ++j)
      for (int64_t r = 0; r < 2; ++r) {
        Value pair =
            vector::ExtractOp::create(e.b, frags[j], ArrayRef<int64_t>{r});
        e.storeVector(pair, states,
                      {b, head, e.add(p0, e.add(at.row, e.idx(8 * r))),
                       e.add(at.col, e.idx(8 * j))});
      }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions(module)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    auto gpuModule = createKernelModule(b, module, "sm_90a", "+ptx80");

    // Four tensor maps (pointers to their 128-byte CUtensorMaps in global
    // memory): C and B as [batch seqlen][groups 128] bf16, x as [batch
    // seqlen][heads headdim] bf16 (boxes of 64 x 64, 128-byte swizzle), dt as
    // [batch seqlen][heads] f32 (boxes of 4 heads x 64 tokens); then A,
    // dt's bias and D [heads], the initial states [batch][heads][headdim]
    // [128] f32, y [batch][seqlen][heads][headdim] bf16 and the final
    // states f32.
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type f32 = b.getF32Type();
    auto headType = MemRefType::get({heads}, f32);
    auto yType =
        MemRefType::get({batch, seqlen, heads, headdim}, b.getBF16Type());
    auto statesType = MemRefType::get({batch, heads, headdim, kState}, f32);
    auto func = createTestKernel(b, gpuModule, "warp_specialized_ssd",
                                 {ptr, ptr, ptr, ptr, headType, headType,
                                  headType, statesType, yType, statesType},
                                 threads(), /*setsMaxRegisters=*/true);

    KernelFunc kernel;
    kernel.func = func;
    kernel.useSharedArena();
    Emitter e(b);
    ring = kernel.sharedBufferAligned(stages * kStageBytes, kSwizzleAlign);
    publishedBuf =
        kernel.sharedBufferAligned(2 * kPublishedBytes, kSwizzleAlign);
    StageRing inputs(e, kernel, stages, 2 * kGroupThreads);
    StageRing published(e, kernel, 2, kGroupThreads,
                        /*producerArrivals=*/kGroupThreads);
    Value tid = e.threadId();
    e.ifThen(e.eq(tid, e.idx(0)), [&] {
      inputs.init();
      published.init();
    });
    e.barrier();

    // Block (row, head, p-block), the p-blocks of a head adjacent so that
    // they read its B and C rows close in time.
    Value block = e.blockId(gpu::Dimension::x);
    Value seq = e.div(block, e.idx(headdim / kHeadDim));
    p0 = e.mul(e.rem(block, e.idx(headdim / kHeadDim)), kHeadDim);
    Value row = e.div(seq, e.idx(heads));
    Value head = e.rem(seq, e.idx(heads));
    group = e.div(head, e.idx(heads / groups));
    Value group = e.div(tid, e.idx(kGroupThreads));
    HeadParams params{e.load(func.getArgument(4), {head}),
                      e.load(func.getArgument(5), {head}),
                      e.load(func.getArgument(6), {head}),
                      e.rem(head, e.idx(kDtHeads))};
    e.ifThen(e.eq(group, e.idx(0)), [&] {
      NVVM::SetMaxRegisterOp::create(e.b, kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
      e.ifThen(e.eq(tid, e.idx(0)), [&] {
        produce(e, inputs, func.getArguments().take_front(4), head,
                e.mul(row, seqlen));
      });
    });
    e.ifThen(e.eq(group, e.idx(1)), [&] {
      NVVM::SetMaxRegisterOp::create(e.b, kStateRegisters,
                                     NVVM::SetMaxRegisterAction::increase);
      Value s = walkState(e, inputs, published, params, func.getArgument(7),
                          row, head);
      storeState(e, s, func.getArgument(9), row, head);
    });
    int64_t outputRegisters = kOutputRegisters[outputGroups - 1];
    for (int64_t k = 0; k < outputGroups; ++k)
      e.ifThen(e.eq(group, e.idx(2 + k)), [&] {
        NVVM::SetMaxRegisterOp::create(
            e.b, outputRegisters,
            outputRegisters > 65536 / threads()
                ? NVVM::SetMaxRegisterAction::increase
                : NVVM::SetMaxRegisterAction::decrease);
        walkOutputs(e, inputs, published, params, func.getArgument(8), row,
                    head, k);
      });
    // On the module, where it outlives gpu-module-to-binary.
    module->setAttr("ssd.shared_memory",
                    b.getI64IntegerAttr(kernel.sharedBytes()));
  }

  Value ring, publishedBuf;
  /// This block's first head-dimension column and its head's group.
  Value p0, group;
};

} // namespace
