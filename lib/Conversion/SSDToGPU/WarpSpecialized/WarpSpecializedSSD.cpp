//===- WarpSpecializedSSD.cpp - the SSD by warpgroup roles ----------------===//
//
// The roles of the warp-specialised kernel (WarpSpecializedSSD.h): the
// producer's copies, the state's walk, the outputs' walk, each built from
// named pieces over one chunk.
//
//===----------------------------------------------------------------------===//
#include "WarpSpecializedSSD.h"

#include "../StageRing.h"
#include "../TmaCopy.h"
#include "../Wgmma.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace ssd::gpu_lowering;
using namespace ssd::gpu_lowering::warp_specialized;

namespace {

/// A block's share of the head dimension (its p-block).
constexpr int64_t kHeadDim = kPBlock;
constexpr int64_t kGroupThreads = 128;
/// Registers a thread of each role: the producer gives back what the state
/// takes; with two output warpgroups each gives back 8 of the 128 that 512
/// threads start with, so that the state still gets 232.
constexpr int64_t kProducerRegisters = 40, kStateRegisters = 232;
constexpr int64_t kOutputRegisters[] = {232, 120};
/// One 64-wide bf16 panel of a chunk's rows in the 128-byte swizzle.
constexpr int64_t kPanelBytes = kChunk * 128;
constexpr int64_t kDtBoxBytes = 4 * kDtHeads * kChunk;
constexpr int64_t alignedToSwizzle(int64_t bytes) {
  return (bytes + kSwizzleAlign - 1) / kSwizzleAlign * kSwizzleAlign;
}

/// Where a stage holds each operand (byte offsets; C at -1 where the
/// kernel reads none), the bytes its copies bring, and its size (the next
/// stage 1024-aligned).
struct StageLayout {
  int64_t c, b, x, dt, copyBytes, bytes;
};
/// The SSD's stage: C and B (two panels each), x (one), dt (64 x 4 f32).
constexpr StageLayout kSSDStage = {
    0,
    2 * kPanelBytes,
    4 * kPanelBytes,
    5 * kPanelBytes,
    5 * kPanelBytes + kDtBoxBytes,
    alignedToSwizzle(5 * kPanelBytes + kDtBoxBytes)};
/// The piece states' stage: B, x and dt.
constexpr StageLayout kPieceStage = {
    -1,
    0,
    2 * kPanelBytes,
    3 * kPanelBytes,
    3 * kPanelBytes + kDtBoxBytes,
    alignedToSwizzle(3 * kPanelBytes + kDtBoxBytes)};
/// The piece-states kernel: one state warpgroup and one producer warp,
/// `kPieceStages` stages (two blocks fit a SM).
constexpr int64_t kPieceStages = 4;
constexpr int64_t kPieceThreads = kGroupThreads + 32;
/// The published state: 64 rows (p) of 128 bf16 (n), two panels.
constexpr int64_t kPublishedBytes = 2 * kPanelBytes;

/// A head's parameters: A, dt's bias and the skip weight D, and its
/// column in a stage's dt box.
struct HeadParams {
  Value a, dtBias, d, dtColumn;
};

/// The cumulative decays of one chunk, spread over a warp: lane l holds
/// tokens 2l and 2l + 1 (dt processed by the layer's rule: bias,
/// softplus, limits; g the cumsum of dt A inside the chunk).
struct ChunkDecays {
  Value g[2], dt[2];
  Value gLast;
};

/// Every warp of a consumer role computes its own copy from the stage's dt
/// (five shuffles), so neither role waits for the other. Tokens from
/// `valid` on (past the sequence's end) get dt = 0: no decay, no input.
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

/// The value of token `row` (index, per lane) of a pair spread as
/// ChunkDecays spreads g and dt.
Value ofToken(Emitter &e, const Value pair[2], Value row) {
  Value src = e.div(row, e.idx(2));
  Value even = e.warpShuffle(pair[0], src), odd = e.warpShuffle(pair[1], src);
  return e.select(e.eq(e.rem(row, e.idx(2)), e.idx(1)), odd, even);
}

/// g and dt of token `row`.
Value gOfToken(Emitter &e, const ChunkDecays &d, Value row) {
  return ofToken(e, d.g, row);
}
Value dtOfToken(Emitter &e, const ChunkDecays &d, Value row) {
  return ofToken(e, d.dt, row);
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

/// Builds the roles of one kernel; the block's (row, head, p-block) and
/// buffers are members once emitKernel has made them.
class RoleBuilder {
public:
  RoleBuilder(Emitter &e, const Shape &shape, const Operands &ops,
              const StageLayout &layout)
      : e(e), shape(shape), ops(ops), layout(layout) {}

  /// The stage's operand views: [panels][64 rows][64] bf16, and dt.
  Value panels(Value stageBase, int64_t offset, int64_t count) {
    auto type =
        MemRefType::get({count, kChunk, kSwizzlePanel}, e.b.getBF16Type(),
                        MemRefLayoutAttrInterface(),
                        cast<MemRefType>(ring.getType()).getMemorySpace());
    return memref::ViewOp::create(e.b, type, ring, e.add(stageBase, offset),
                                  ValueRange{});
  }
  Value dtView(Value stageBase) {
    auto type = MemRefType::get(
        {kChunk, kDtHeads}, e.b.getF32Type(), MemRefLayoutAttrInterface(),
        cast<MemRefType>(ring.getType()).getMemorySpace());
    return memref::ViewOp::create(e.b, type, ring, e.add(stageBase, layout.dt),
                                  ValueRange{});
  }
  Value stageBase(Value stage) { return e.mul(stage, layout.bytes); }
  Value sharedAddress(Value buffer) {
    return memref::ExtractAlignedPointerAsIndexOp::create(e.b, buffer);
  }

  /// Chunk `i` of this block's piece (the walk's index), walked from the
  /// piece's first chunk or, `reverse`, from its last.
  Value chunkOf(Value i, bool reverse = false) {
    if (!ops.pieceDecays && !reverse)
      return i;
    return reverse ? e.sub(e.add(firstChunk, e.sub(chunkCount, e.idx(1))), i)
                   : e.add(firstChunk, i);
  }

  /// One thread: every chunk's C (where the stage holds it), B (two boxes
  /// each), x and dt, in the walk's order.
  void produce(StageRing &inputs, bool reverse = false) {
    e.forLoop(e.idx(0), chunkCount, e.idx(1), [&](Value i) {
      Value s = inputs.acquire(i, layout.copyBytes);
      Value base = stageBase(s);
      Value full = inputs.full(s);
      Value token = e.mul(chunkOf(i, reverse), kChunk);
      auto at = [&](int64_t offset) {
        return elementPointer(e, ring, {e.add(base, offset)}, /*space=*/3);
      };
      // Coordinates innermost first: (column, head or group, token, row).
      for (int64_t panel = 0; panel < 2; ++panel) {
        Value col = e.idx(panel * kSwizzlePanel);
        if (layout.c >= 0)
          copyTmaBox(e, ops.cMap, at(layout.c + panel * kPanelBytes), full,
                     {col, group, token, row});
        copyTmaBox(e, ops.bMap, at(layout.b + panel * kPanelBytes), full,
                   {col, group, token, row});
      }
      copyTmaBox(e, ops.xMap, at(layout.x), full, {p0, head, token, row});
      Value firstHead = e.sub(head, e.rem(head, e.idx(kDtHeads)));
      copyTmaBox(e, ops.dtMap, at(layout.dt), full, {firstHead, token, row});
    });
  }

  /// The state fragments (the accumulator layout, 64 x 128 f32) of this
  /// block's p-block in `states` [..][p][n], its outer indices `outer`.
  SmallVector<Value> loadStateFragments(Value states, ValueRange outer) {
    AccumulatorLane at = accumulatorLane(e);
    SmallVector<Value> frags;
    for (int64_t j = 0; j < kState / 8; ++j) {
      SmallVector<Value> elements;
      for (int64_t r = 0; r < 2; ++r) {
        SmallVector<Value> idx(outer);
        idx.push_back(e.add(p0, e.add(at.row, e.idx(8 * r))));
        idx.push_back(e.add(at.col, e.idx(8 * j)));
        Value pair = e.loadVector(states, idx, 2);
        for (int64_t i = 0; i < 2; ++i)
          elements.push_back(
              vector::ExtractOp::create(e.b, pair, ArrayRef<int64_t>{i}));
      }
      frags.push_back(vector::FromElementsOp::create(
          e.b, VectorType::get({2, 2}, e.b.getF32Type()), elements));
    }
    return frags;
  }

  /// Stores state fragments `frags` into `states` [..][p][n] at `outer`.
  void storeStateFragments(ArrayRef<Value> frags, Value states,
                           ValueRange outer) {
    AccumulatorLane at = accumulatorLane(e);
    for (int64_t j = 0; j < kState / 8; ++j)
      for (int64_t r = 0; r < 2; ++r) {
        Value pair =
            vector::ExtractOp::create(e.b, frags[j], ArrayRef<int64_t>{r});
        SmallVector<Value> idx(outer);
        idx.push_back(e.add(p0, e.add(at.row, e.idx(8 * r))));
        idx.push_back(e.add(at.col, e.idx(8 * j)));
        e.storeVector(pair, states, idx);
      }
  }

  /// The state role's accumulators holding the state entering this block's
  /// piece: the initial state (zero where the layer has none) carried over
  /// the pieces before it, S = exp(decay_j) S + S_j, from the piece
  /// states' workspaces.
  Value loadEnteringState() {
    SmallVector<Value> frags =
        ops.initialStates
            ? loadStateFragments(ops.initialStates, {row, head})
            : wgmmaFragments(e, wgmmaZeroAccumulators(e, kState), kState / 8);
    if (ops.pieceDecays) {
      auto fragType = VectorType::get({2, 2}, e.b.getF32Type());
      frags = e.forLoop(
          e.idx(0), piece, e.idx(1), frags,
          [&](Value j, ValueRange cur) -> SmallVector<Value> {
            Value decay = vector::BroadcastOp::create(
                e.b, fragType, e.exp(e.load(ops.pieceDecays, {row, head, j})));
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

  /// Publishes `state` (the state entering chunk `c`) in bf16, where the
  /// output role reads it as C S^T's K-major B: [buffer][panel][p][n % 64].
  void publishState(StageRing &published, Value c, ArrayRef<Value> state) {
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
          ValueRange{word(state[j], 0), word(state[j], 1),
                     word(state[j + 1], 0), word(state[j + 1], 1)},
          NVVM::MMALayout::row, NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
          NVVM::LdStMatrixEltType::B16);
    }
    fenceSharedForAsyncProxy(e);
    published.publish(c);
  }

  /// The state update's A = (w x)^T, four k16 register fragments: x^T's by
  /// ldmatrix.trans from the stage at `base`, scaled along k by
  /// w_s = exp(g_last - g_s) dt_s.
  SmallVector<Value> scaledXFragments(Value base, const ChunkDecays &d) {
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
  Value walkState(StageRing &inputs, StageRing &published,
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

  /// Chunk `c`'s decays from the stage at `base`.
  ChunkDecays decays(Value c, Value base, const HeadParams &params) {
    Value valid = e.sub(seqLen, e.mul(c, kChunk));
    return chunkDecays(e, shape.dtRule, dtView(base), params, valid);
  }

  /// P = C B^T exp(g_t - g_s) dt_s on s <= t (0 above), from C B^T's
  /// accumulator fragments `cb` and g of the lane's rows `gRow`, as the
  /// register A fragments of P x: k16 step ks from fragments 2ks, 2ks + 1
  /// (the accumulator layout is the A layout).
  SmallVector<Value> causalWeightFragments(const ChunkDecays &d,
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
  /// from the stage at `base`; `acc` alone where `d` is null (no D).
  SmallVector<Value> withSkip(Value acc, Value base, Value d) {
    AccumulatorLane at = accumulatorLane(e);
    Value rows[2] = {at.row, e.add(at.row, e.idx(8))};
    SmallVector<Value> out = wgmmaFragments(e, acc, kHeadDim / 8);
    Value xView = panels(base, layout.x, 1);
    auto f32Pair = VectorType::get({2}, e.b.getF32Type());
    Value dPair = d ? vector::BroadcastOp::create(e.b, f32Pair, d) : Value();
    SmallVector<Value> yPairs;
    for (int64_t j = 0; j < kHeadDim / 8; ++j)
      for (int64_t r = 0; r < 2; ++r) {
        Value pair =
            vector::ExtractOp::create(e.b, out[j], ArrayRef<int64_t>{r});
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
            e.b, VectorType::get({2}, e.b.getBF16Type()),
            e.fma(dPair, x, pair)));
      }
    return yPairs;
  }

  /// Output warpgroup `first` (0 .. outputGroups - 1): y of chunks first,
  /// first + outputGroups, ...
  void walkOutputs(StageRing &inputs, StageRing &published,
                   const HeadParams &params, int64_t first) {
    AccumulatorLane at = accumulatorLane(e);
    Value ringAt = sharedAddress(ring);
    Value publishedAt = sharedAddress(publishedBuf);
    e.forLoop(
        e.idx(first), chunkCount, e.idx(shape.outputGroups), [&](Value i) {
          Value c = chunkOf(i);
          inputs.waitFull(i);
          Value base = stageBase(inputs.stage(i));
          Value cRows = e.add(ringAt, e.add(base, layout.c));
          Value bRows = e.add(ringAt, e.add(base, layout.b));
          Value xRows = e.add(ringAt, e.add(base, layout.x));
          auto cAt = [&](int64_t s) { return kStepAddress(e, cRows, s); };

          // C B^T, then C S^T once the state is published: two groups.
          NVVM::WgmmaFenceAlignedOp::create(e.b);
          Value cb = wgmmaKMajor(
              e, wgmmaZeroAccumulators(e, kChunk), kChunk, kState / 16, cAt,
              [&](int64_t s) { return kStepAddress(e, bRows, s); });
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

  /// The final state of this block's (row, head, p-block) from S's
  /// accumulators, stored by the sequence's last piece.
  void storeState(Value s) {
    SmallVector<Value> frags = wgmmaFragments(e, s, kState / 8);
    if (!ops.pieceDecays)
      return storeStateFragments(frags, ops.finalStates, {row, head});
    e.ifThen(e.eq(piece, e.sub(pieces, e.idx(1))), [&] {
      storeStateFragments(frags, ops.finalStates, {row, head});
    });
  }

  /// Scales the x rows of the stage at `base` in place by w_t = exp(gEnd
  /// - g_t) dt_t, in bf16 as the register path rounds (gEnd in
  /// `toEnd.gLast`): thread t of the warpgroup takes row t / 2, half t % 2
  /// (four 16-byte pieces of the swizzled row).
  void scaleXInPlace(Value base, const ChunkDecays &toEnd) {
    Value tid = e.rem(e.threadId(), e.idx(kGroupThreads));
    Value row = e.div(tid, e.idx(2));
    Value half = e.rem(tid, e.idx(2));
    Value w = e.mulf(
        e.expRoundedTo16Bits(e.subf(toEnd.gLast, gOfToken(e, toEnd, row))),
        dtOfToken(e, toEnd, row));
    auto wide = VectorType::get({8}, e.b.getF32Type());
    auto narrow = VectorType::get({8}, e.b.getBF16Type());
    Value wVec = vector::BroadcastOp::create(e.b, wide, w);
    Value xView = panels(base, layout.x, 1);
    for (int64_t u = 0; u < 4; ++u) {
      SmallVector<Value> idx =
          swizzled128At(e, row, e.add(e.mul(half, 32), e.idx(8 * u)));
      SmallVector<Value> at = {idx[0], idx[1], idx[2]};
      Value x = arith::ExtFOp::create(e.b, wide, e.loadVector(xView, at, 8));
      e.storeVector(arith::TruncFOp::create(e.b, narrow, e.mulf(x, wVec)),
                    xView, at);
    }
  }

  /// The piece-states kernel's state warpgroup: this block's piece walked
  /// from its last chunk to its first into S_piece = sum over its tokens s
  /// of exp(g_end - g_s) dt_s x_s^T B_s, g_end - g_s being the decay from
  /// s to the piece's end: R (the chunks after s's) + g_last - g_s. No
  /// term rescales the accumulator, so consecutive chunks' products may
  /// run at once: each chunk's x is scaled in place in its stage, and
  /// (w x)^T B runs with both operands in shared memory (x M-major, B
  /// N-major) while the next chunk is scaled; the stage goes back once
  /// the next chunk's products are issued and its own are done. Stores
  /// the sum and the piece's decay R.
  void walkPieceState(StageRing &inputs, const HeadParams &params) {
    Value ringAt = sharedAddress(ring);
    auto shape = NVVM::MMAShapeAttr::get(e.b.getContext(), 64, kState, 16);
    Value groupBarrier = e.b.create<arith::ConstantIntOp>(1, 32);
    Value groupThreads = e.b.create<arith::ConstantIntOp>(kGroupThreads, 32);
    SmallVector<Value> end = e.forLoop(
        e.idx(0), chunkCount, e.idx(1),
        {wgmmaZeroAccumulators(e, kState), e.f32(0.0)},
        [&](Value i, ValueRange cur) -> SmallVector<Value> {
          inputs.waitFull(i);
          Value base = stageBase(inputs.stage(i));
          ChunkDecays d = decays(chunkOf(i, /*reverse=*/true), base, params);
          ChunkDecays toEnd = d;
          toEnd.gLast = e.addf(d.gLast, cur[1]);
          scaleXInPlace(base, toEnd);
          fenceSharedForAsyncProxy(e);
          NVVM::BarrierOp::create(e.b, Type(), groupBarrier, groupThreads,
                                  NVVM::BarrierReductionAttr(), Value());

          Value xRows = e.add(ringAt, e.add(base, layout.x));
          Value bRows = e.add(ringAt, e.add(base, layout.b));
          Value acc = cur[0];
          NVVM::WgmmaFenceAlignedOp::create(e.b);
          for (int64_t ks = 0; ks < kChunk / 16; ++ks) {
            Value step = e.idx(ks * 16 * 128);
            acc = NVVM::WgmmaMmaAsyncOp::create(
                e.b, acc.getType(), acc,
                swizzledNMajorDescriptor(e, e.add(xRows, step), kPanelBytes),
                swizzledNMajorDescriptor(e, e.add(bRows, step), kPanelBytes),
                shape, NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::bf16,
                NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
                NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
                NVVM::MMALayout::col, NVVM::MMALayout::row,
                /*satfinite=*/nullptr);
          }
          NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
          NVVM::WgmmaWaitGroupSyncOp::create(e.b, 1);
          e.ifThen(e.lt(e.idx(0), i),
                   [&] { inputs.release(e.sub(i, e.idx(1))); });
          return {acc, e.addf(cur[1], d.gLast)};
        });
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);
    e.ifThen(e.lt(e.idx(0), chunkCount),
             [&] { inputs.release(e.sub(chunkCount, e.idx(1))); });
    storeStateFragments(wgmmaFragments(e, end[0], kState / 8), ops.pieceStates,
                        {row, head, piece});
    e.ifThen(e.andi(e.eq(e.threadId(), e.idx(0)), e.eq(p0, e.idx(0))), [&] {
      e.store(end[1], ops.pieceDecays, {row, head, piece});
    });
  }

  void emit(KernelFunc &kernel);
  void emitPieceStates(KernelFunc &kernel);

private:
  /// This block's head's A, dt bias, D and dt column.
  HeadParams headParams();

  /// This block's (piece, row, head, p-block), its head's group, the
  /// sequence's length and its piece's chunks.
  void locateBlock();

  Emitter &e;
  const Shape &shape;
  const Operands &ops;
  const StageLayout &layout;
  Value ring, publishedBuf;
  /// This block's batch row, head, first head-dimension column, its head's
  /// group, and the sequence's length.
  Value row, head, p0, group, seqLen;
  /// The sequence's pieces and this block's (null without pieces), and its
  /// chunks: chunkCount from firstChunk.
  Value pieces, piece, firstChunk, chunkCount;
};

} // namespace

void RoleBuilder::locateBlock() {
  // Block (piece, row, head, p-block), the p-blocks of a head adjacent so
  // that they read its B and C rows close in time, and the pieces
  // outermost so that the blocks running at once read the same tokens'
  // B and C (shared by a group's heads).
  int64_t pBlocks = shape.headDim / kPBlock;
  Value block = e.blockId(gpu::Dimension::x);
  Value inPiece = block;
  if (ops.pieceDecays) {
    Value chains = e.mul(e.dim(ops.y, 0), shape.heads * pBlocks);
    piece = e.div(block, chains);
    inPiece = e.rem(block, chains);
  }
  Value chain = e.div(inPiece, e.idx(pBlocks));
  p0 = e.mul(e.rem(inPiece, e.idx(pBlocks)), kPBlock);
  row = e.div(chain, e.idx(shape.heads));
  head = e.rem(chain, e.idx(shape.heads));
  group = e.div(head, e.idx(shape.heads / shape.groups));
  seqLen = e.dim(ops.y, 1);
  Value numChunks = e.div(e.add(seqLen, e.idx(kChunk - 1)), e.idx(kChunk));
  if (!ops.pieceDecays) {
    firstChunk = e.idx(0);
    chunkCount = numChunks;
    return;
  }
  // Pieces of ceil(chunks / pieces) chunks; the last ones may be short or
  // empty.
  pieces = e.dim(ops.pieceDecays, 2);
  Value perPiece = e.div(e.add(numChunks, e.sub(pieces, e.idx(1))), pieces);
  firstChunk = e.min(e.mul(piece, perPiece), numChunks);
  chunkCount = e.sub(e.min(e.add(firstChunk, perPiece), numChunks), firstChunk);
}

HeadParams RoleBuilder::headParams() {
  return {
      e.load(ops.a, {head}), ops.dtBias ? e.load(ops.dtBias, {head}) : Value(),
      ops.d ? e.load(ops.d, {head}) : Value(), e.rem(head, e.idx(kDtHeads))};
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

void RoleBuilder::emitPieceStates(KernelFunc &kernel) {
  kernel.useSharedArena();
  ring = kernel.sharedBufferAligned(kPieceStages * layout.bytes, kSwizzleAlign);
  StageRing inputs(e, kernel, kPieceStages, kGroupThreads);
  Value tid = e.threadId();
  e.ifThen(e.eq(tid, e.idx(0)), [&] { inputs.init(); });
  e.barrier();

  locateBlock();
  HeadParams params = headParams();
  e.ifThen(e.lt(tid, e.idx(kGroupThreads)),
           [&] { walkPieceState(inputs, params); });
  e.ifThen(e.eq(tid, e.idx(kGroupThreads)),
           [&] { produce(inputs, /*reverse=*/true); });
}

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

int64_t blockThreads(const Shape &shape) {
  return kGroupThreads * (2 + shape.outputGroups);
}

int64_t sharedBytes(const Shape &shape) {
  // The ring, the two published states, each buffer's worst alignment
  // slack, and the mbarriers (two a stage).
  return shape.stages * kSSDStage.bytes + 2 * kPublishedBytes +
         2 * kSwizzleAlign + 16 * (shape.stages + 2);
}

int64_t pieceStatesThreads() { return kPieceThreads; }

int64_t pieceStatesSharedBytes() {
  return kPieceStages * kPieceStage.bytes + kSwizzleAlign + 16 * kPieceStages;
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

void emitPieceStatesKernel(ImplicitLocOpBuilder &b, KernelFunc &kernel,
                           const Shape &shape, const Operands &operands) {
  assert(unsupportedShape(shape).empty() && "a shape the kernel takes");
  assert(operands.pieceStates && operands.pieceDecays && "piece workspaces");
  Emitter e(b);
  RoleBuilder(e, shape, operands, kPieceStage).emitPieceStates(kernel);
}

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd
