//===- TileMatmulVector.cpp - the pipelined vector path of TileMatmul -----===//
//
// 16-byte global loads one K slice ahead, two shared stages (padded rows for
// ldmatrix, core matrices for wgmma), resident operands read in place, and
// the epilogue through shared memory.
//
//===----------------------------------------------------------------------===//
#include "TileMatmulParts.h"
#include "TmaCopy.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

//===----------------------------------------------------------------------===//
// The vector path: 16-byte global loads into registers one K slice ahead,
// two shared stages, one barrier per slice.
//===----------------------------------------------------------------------===//


/// Bytes of the two stages of an operand with `rows` rows, either layout
/// (core matrices need no padding).
int64_t TileMatmul::stageBytes(int64_t rows) const {
  int64_t elements =
      wgmma ? rows * tileK
            : std::max(rows * (tileK + kMmaPad), tileK * (rows + kMmaPad));
  return 2 * elements * mmaType.getIntOrFloatBitWidth() / 8;
}

SmallVector<int64_t> TileMatmul::residentShape(int64_t rows, int64_t k) const {
  if (usesWgmma())
    return {1, rows / 8, k / 8, 8, 8};
  return {1, rows, k + kResidentPad};
}

/// Indices of element (outer, inner) in core matrices of 8 x 8 elements,
/// [outer/8][inner/8][outer%8][inner%8]: the inner dimension's eight
/// elements are one 16-byte row of a core matrix.
SmallVector<Value> coreMatrixAt(Emitter &e, Value lead, Value outer,
                                       Value inner) {
  Value eight = e.idx(8);
  return {lead, e.div(outer, eight), e.div(inner, eight), e.rem(outer, eight),
          e.rem(inner, eight)};
}

SmallVector<Value> TileMatmul::residentAt(Value row, Value k) const {
  if (usesWgmma())
    return coreMatrixAt(e, e.idx(0), row, k);
  return {e.idx(0), row, k};
}
int64_t TileMatmul::outBytes() const { return tileM * (tileN + kOutPad) * 4; }
int64_t TileMatmul::vectorBytes() const { return vectorBytes(false, false); }
int64_t TileMatmul::vectorBytes(bool residentA, bool residentB,
                                bool outputTile) const {
  assert(usesMma() && "tensor-core tiles");
  // A's stages come first (stagedView), so B's follow them even when A is
  // resident; a staged B beside a resident A is not supported.
  int64_t stages = residentA ? 0 : stageBytes(tileM);
  if (!residentB)
    stages += stageBytes(tileN);
  return outputTile ? std::max(stages, outBytes()) : stages;
}

/// A view of the vector path's byte buffer, allocated on first use with
/// room for the A and B stages and for the f32 output tile.
Value TileMatmul::sharedView(int64_t byteOffset, ArrayRef<int64_t> shape,
                             Type element) {
  if (!flat)
    flat = kernel.sharedBuffer({vectorBytes()}, e.b.getI8Type());
  auto flatType = cast<MemRefType>(flat.getType());
  auto type = MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                              flatType.getMemorySpace());
  return memref::ViewOp::create(e.b, type, flat, e.idx(byteOffset),
                                ValueRange{});
}

/// Stage view of operand `slot` (0: A, 1: B): [2][rows][tileK + pad] when
/// k is contiguous (ldmatrix), else [2][tileK][rows + pad]
/// (ldmatrix.trans). Both layouts keep rows 16-byte aligned. For wgmma, the
/// core matrices of 8 x 8 elements: [2][rows/8][tileK/8][8 rows][8 k]
/// (K-major) or [2][tileK/8][rows/8][8 k][8 rows] (MN-major).
Value TileMatmul::stagedView(int slot, bool kContiguous, int64_t rows) {
  int64_t offset = slot == 0 ? 0 : stageBytes(tileM);
  if (wgmma) {
    SmallVector<int64_t> shape =
        kContiguous ? SmallVector<int64_t>{2, rows / 8, tileK / 8, 8, 8}
                    : SmallVector<int64_t>{2, tileK / 8, rows / 8, 8, 8};
    return sharedView(offset, shape, mmaType);
  }
  int64_t d0 = kContiguous ? rows : tileK;
  int64_t d1 = kContiguous ? tileK + kMmaPad : rows + kMmaPad;
  return sharedView(offset, {2, d0, d1}, mmaType);
}

SmallVector<Value> TileMatmul::stagedAt(bool kContiguous, Value stage,
                                        Value kk, Value row) const {
  if (!wgmma)
    return {stage, kContiguous ? row : kk, kContiguous ? kk : row};
  // K-major: rows outside, k inside; MN-major: the other way round.
  return kContiguous ? coreMatrixAt(e, stage, row, kk)
                     : coreMatrixAt(e, stage, kk, row);
}

namespace {
/// Where vector `v` of a rows x tileK slice goes: (k offset in the slice,
/// row) of its first element.
struct SliceVector {
  Value kk, row;
};
SliceVector sliceVector(Emitter &e, Value v, bool kContiguous, int64_t rows,
                        int64_t tileK, bool coreMatrices) {
  if (coreMatrices) {
    // Eight consecutive threads fill one core matrix (128 contiguous bytes:
    // no bank conflicts), and a warp's loads still cover whole 32-byte
    // sectors: 8 rows (or k) by 4 consecutive vectors.
    Value inCore = e.rem(v, e.idx(8)), group = e.div(v, e.idx(8));
    int64_t across = kContiguous ? tileK / kVectorWidth : rows / kVectorWidth;
    Value block = e.rem(group, e.idx(across));
    Value outer = e.mul(e.div(group, e.idx(across)), 8);
    if (kContiguous)
      return {e.mul(block, kVectorWidth), e.add(outer, inCore)};
    return {e.add(outer, inCore), e.mul(block, kVectorWidth)};
  }
  if (kContiguous) {
    int64_t perRow = tileK / kVectorWidth;
    return {e.mul(e.rem(v, e.idx(perRow)), kVectorWidth),
            e.div(v, e.idx(perRow))};
  }
  int64_t perK = rows / kVectorWidth;
  return {e.div(v, e.idx(perK)), e.mul(e.rem(v, e.idx(perK)), kVectorWidth)};
}
} // namespace

/// Issues this thread's global loads of the slice at k0 (no shared access).
SmallVector<Value> TileMatmul::loadSlice(const TileOperand &op, int64_t rows,
                                         Value k0, Value kEnd) {
  int64_t vectors = rows * tileK / kVectorWidth;
  Value tid = e.threadId();
  Value last = e.sub(kEnd, e.idx(1));
  SmallVector<Value> raw;
  for (int64_t r = 0; r * kThreads < vectors; ++r) {
    // Threads past the slice repeat its last vector (and store nothing).
    Value v = e.min(e.add(tid, e.idx(r * kThreads)), e.idx(vectors - 1));
    SliceVector sv = sliceVector(e, v, op.kContiguous, rows, tileK, wgmma);
    Value k = e.add(k0, sv.kk);
    if (op.kContiguous) {
      Value lastStart = e.sub(last, e.rem(last, e.idx(kVectorWidth)));
      raw.push_back(op.loadVector(e.min(k, lastStart), sv.row));
    } else {
      raw.push_back(op.loadVector(e.min(k, last), sv.row));
    }
  }
  return raw;
}

/// Converts, masks and stores this thread's vectors of the slice at k0 into
/// stage `stage` of `view`.
void TileMatmul::storeSlice(const TileOperand &op, Value view, int64_t rows,
                            ValueRange raw, Value stage, Value k0,
                            Value kEnd) {
  int64_t vectors = rows * tileK / kVectorWidth;
  Value tid = e.threadId();
  Value last = e.sub(kEnd, e.idx(1));
  Type f32 = e.b.getF32Type();
  auto f32Vec = VectorType::get({kVectorWidth}, f32);
  auto mmaVec = VectorType::get({kVectorWidth}, mmaType);
  Value zeros = arith::ConstantOp::create(
      e.b, f32Vec, DenseElementsAttr::get(f32Vec, e.b.getF32FloatAttr(0.0)));
  for (int64_t r = 0; r * kThreads < vectors; ++r) {
    auto body = [&] {
      Value v = e.add(tid, e.idx(r * kThreads));
      SliceVector sv = sliceVector(e, v, op.kContiguous, rows, tileK, wgmma);
      Value k = e.add(k0, sv.kk);
      Value kLoad;
      if (op.kContiguous)
        kLoad = e.min(k, e.sub(last, e.rem(last, e.idx(kVectorWidth))));
      else
        kLoad = e.min(k, last);
      Value x = raw[r];
      if (op.convertVector) {
        x = op.convertVector(x, kLoad, sv.row);
      } else if (cast<VectorType>(x.getType()).getElementType() != f32) {
        x = arith::ExtFOp::create(e.b, f32Vec, x);
      }
      if (op.kContiguous) {
        // Element t is in range when k + t < kEnd; a vector clamped back
        // to the last in-range start (k != kLoad) is out of range whole.
        Value avail = e.select(e.eq(k, kLoad), e.sub(kEnd, k), e.idx(0));
        auto i32 = e.b.getI32Type();
        auto i32Vec = VectorType::get({kVectorWidth}, i32);
        SmallVector<int32_t> iota;
        for (int64_t t = 0; t < kVectorWidth; ++t)
          iota.push_back(t);
        Value lanes = arith::ConstantOp::create(
            e.b, i32Vec, DenseElementsAttr::get(i32Vec, ArrayRef(iota)));
        Value availI32 = arith::IndexCastOp::create(
            e.b, i32, e.min(avail, e.idx(kVectorWidth)));
        Value bound = vector::BroadcastOp::create(e.b, i32Vec, availI32);
        Value mask = arith::CmpIOp::create(e.b, arith::CmpIPredicate::slt,
                                           lanes, bound);
        x = arith::SelectOp::create(e.b, mask, x, zeros);
      } else {
        x = arith::SelectOp::create(e.b, e.lt(k, kEnd), x, zeros);
      }
      Value narrow = arith::TruncFOp::create(e.b, mmaVec, x);
      vector::StoreOp::create(e.b, narrow, view,
                              stagedAt(op.kContiguous, stage, sv.kk, sv.row),
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    };
    if ((r + 1) * kThreads <= vectors)
      body();
    else
      e.ifThen(e.lt(e.add(tid, e.idx(r * kThreads)), e.idx(vectors)), body);
  }
}

namespace {
/// A lane's offsets in ldmatrix's x4 addressing: lane % 8, lane % 16,
/// (lane / 16) 8 and ((lane / 8) % 2) 8.
struct LdmatrixLanes {
  Value l8, l16, hi8, mid8;
};
LdmatrixLanes ldmatrixLanes(Emitter &e) {
  Value lane = e.laneId();
  return {e.rem(lane, e.idx(8)), e.rem(lane, e.idx(16)),
          e.mul(e.div(lane, e.idx(16)), 8),
          e.mul(e.rem(e.div(lane, e.idx(8)), e.idx(2)), 8)};
}
} // namespace

std::function<SmallVector<Value>(Value)>
TileMatmul::fragmentsB(Value viewB, bool bTrans, SliceAt bAt) {
  Value warp = e.div(e.threadId(), e.idx(32));
  Value wn = e.div(warp, e.idx(warpsM));
  Value nBase = e.add(e.mul(wn, fragsN * 8), bAt.row0);
  LdmatrixLanes lanes = ldmatrixLanes(e);
  Value l8 = lanes.l8, l16 = lanes.l16, hi8 = lanes.hi8, mid8 = lanes.mid8;
  return [=, this](Value bK) {
    auto fourType = VectorType::get({4, 2}, mmaType);
    auto bType = VectorType::get({2, 2}, mmaType);
    bool pairB = fragsN % 2 == 0;
    // [stage, buffer row, column] -> the indices of the operand's layout.
    auto placed = [&](SmallVector<Value> idx) {
      return bAt.swizzled ? swizzled128At(e, idx[1], idx[2]) : idx;
    };
    SmallVector<Value> bFrags;
    for (int64_t j = 0; j < fragsN; j += pairB ? 2 : 1) {
      Value n0 = e.add(nBase, e.idx(8 * j));
      if (pairB) {
        SmallVector<Value> at =
            bTrans
                ? SmallVector<Value>{bAt.stage, e.add(l16, bK), e.add(n0, hi8)}
                : SmallVector<Value>{bAt.stage, e.add(e.add(n0, hi8), l8),
                                     e.add(mid8, bK)};
        Value four = nvgpu::LdMatrixOp::create(e.b, fourType, viewB, placed(at),
                                               bTrans, 4);
        // Rows 2h, 2h + 1 are fragment j + h (row moves only: they lower
        // to register copies of the ldmatrix result).
        Value undef = arith::ConstantOp::create(
            e.b, bType,
            DenseElementsAttr::get(bType, e.b.getZeroAttr(mmaType)));
        for (int64_t h = 0; h < 2; ++h) {
          Value frag = undef;
          for (int64_t r = 0; r < 2; ++r) {
            Value row = vector::ExtractOp::create(e.b, four,
                                                  ArrayRef<int64_t>{2 * h + r});
            frag =
                vector::InsertOp::create(e.b, row, frag, ArrayRef<int64_t>{r});
          }
          bFrags.push_back(frag);
        }
      } else {
        SmallVector<Value> at =
            bTrans
                ? SmallVector<Value>{bAt.stage, e.add(l16, bK), n0}
                : SmallVector<Value>{bAt.stage, e.add(n0, l8), e.add(mid8, bK)};
        bFrags.push_back(nvgpu::LdMatrixOp::create(e.b, bType, viewB,
                                                   placed(at), bTrans, 2));
      }
    }
    return bFrags;
  };
}

SmallVector<Value> TileMatmul::mmaFragments(ValueRange acc,
                                            ArrayRef<Value> aFrags,
                                            ArrayRef<Value> bFrags) {
  SmallVector<Value> out(acc.begin(), acc.end());
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t j = 0; j < fragsN; ++j)
      out[i * fragsN + j] =
          mmaSync(e, aFrags[i], bFrags[j], out[i * fragsN + j]);
  return out;
}

/// One tileK slice of stage `stage` on the tensor cores. A row-contiguous
/// operand sits k-major in shared memory and is read with ldmatrix.trans,
/// which yields the same fragments. B is read at stage `bStage`, k offset
/// `bK0` (a resident B: stage 0, the slice's k).
SmallVector<Value> TileMatmul::mmaStepStaged(ValueRange acc,
                                             const TileOperand &a, Value viewA,
                                             bool aTrans, SliceAt aAt,
                                             Value viewB, bool bTrans,
                                             SliceAt bAt, Value kEnd) {
  Value stage = aAt.stage, aK0 = aAt.k0, bK0 = bAt.k0;
  Value warp = e.div(e.threadId(), e.idx(32));
  Value wm = e.rem(warp, e.idx(warpsM));
  Value mBase = e.add(e.mul(wm, fragsM * 16), aAt.row0);
  LdmatrixLanes lanes = ldmatrixLanes(e);
  Value l8 = lanes.l8, l16 = lanes.l16, hi8 = lanes.hi8, mid8 = lanes.mid8;
  auto aType = VectorType::get({4, 2}, mmaType);
  auto loadB = fragmentsB(viewB, bTrans, bAt);
  SmallVector<Value> next(acc.begin(), acc.end());
  // One k16 step of this warp's fragments.
  auto kStep = [&](int64_t ks, ValueRange cur) -> SmallVector<Value> {
    SmallVector<Value> aFrags;
    Value kAbs = e.add(aK0, e.idx(ks));
    for (int64_t i = 0; i < fragsM; ++i) {
      Value m0 = e.add(mBase, e.idx(16 * i));
      if (a.fragmentPair) {
        aFrags.push_back(computeFragmentA(a, m0, kAbs, kEnd));
        continue;
      }
      SmallVector<Value> at =
          aTrans ? SmallVector<Value>{stage,
                                      e.add(e.add(hi8, l8), e.add(aK0, e.idx(ks))),
                                      e.add(m0, mid8)}
                 : SmallVector<Value>{stage, e.add(m0, l16),
                                      e.add(hi8, e.add(aK0, e.idx(ks)))};
      if (aAt.swizzled)
        at = swizzled128At(e, at[1], at[2]);
      Value frag = nvgpu::LdMatrixOp::create(e.b, aType, viewA, at, aTrans, 4);
      aFrags.push_back(a.kScalePair ? scaleFragmentA(a, frag, kAbs) : frag);
    }
    return mmaFragments(cur, aFrags, loadB(e.add(bK0, e.idx(ks))));
  };
  SmallVector<Type> accTypes(acc.getTypes());
  for (int64_t ks = 0; ks < tileK; ks += 16) {
    if (!a.diagonal) {
      next = kStep(ks, next);
      continue;
    }
    // A is zero past the diagonal: a warp whose last row ends before this
    // k16 step skips it (warp-uniform; the accumulators pass through).
    Value lastRow = e.add(mBase, e.idx(fragsM * 16 - 1));
    Value live = e.le(e.add(aK0, e.idx(ks)), e.add(lastRow, a.diagonal));
    next = e.ifElse(
        live, accTypes, [&] { return kStep(ks, next); },
        [&] { return next; });
  }
  return next;
}

SmallVector<Value> TileMatmul::accumulateVector(ValueRange acc, Value kBegin,
                                                Value kEnd,
                                                const TileOperand &a,
                                                const TileOperand &b) {
  assert((!a.blockFactors || (a.fragmentPair && a.diagonal && !wgmma &&
                              !wgmmaInPlace && fragsM == 1 && b.resident)) &&
         "block factors: mma.sync, one m16 fragment per warp, B resident");
  if (wgmmaInPlace)
    return accumulateWgmmaInPlace(acc, kBegin, kEnd, a, b);
  // A made in registers is staged no more than a resident A.
  bool registerA = static_cast<bool>(a.fragmentPair);
  bool residentA = a.resident || registerA;
  bool residentB = static_cast<bool>(b.resident);
  // wgmma reads a swizzled B only as N-major panels, one per warpgroup.
  assert((!a.residentSwizzled || (a.resident && !wgmma)) &&
         (!b.residentSwizzled ||
          (b.resident && (!wgmma || (!b.kContiguous && tileN == 128)))) &&
         "swizzled resident operands: ldmatrix, or wgmma's N-major B panels");
  assert((!registerA && !a.kScalePair && !a.diagonal) ||
         (!wgmma && residentB && (registerA != bool(a.kScalePair)) &&
          (!a.kScalePair || a.resident) && !a.residentRow0) &&
             "register A fragments: mma.sync beside a resident B");
  Value viewA = a.resident  ? a.resident
                : registerA ? Value()
                            : stagedView(0, a.kContiguous, tileM);
  Value viewB = residentB ? b.resident : stagedView(1, b.kContiguous, tileN);
  Value zeroIdx = e.idx(0);
  Value aRow0 = a.residentRow0 ? a.residentRow0 : zeroIdx;
  Value bRow0 = b.residentRow0 ? b.residentRow0 : zeroIdx;
  // One slice on the tensor cores: a resident operand is read at the
  // slice's k in its only stage, a staged one at k 0 of `stage`.
  auto step = [&](ValueRange cur, Value stage, Value k0) {
    if (wgmma)
      return wgmmaStep(cur, viewA, a.kContiguous, viewB, b.kContiguous, stage,
                       residentB, k0, b.residentSwizzled);
    SliceAt aAt{residentA ? zeroIdx : stage, residentA ? k0 : zeroIdx, aRow0,
                a.residentSwizzled};
    SliceAt bAt{residentB ? zeroIdx : stage, residentB ? k0 : zeroIdx, bRow0,
                b.residentSwizzled};
    return mmaStepStaged(cur, a, viewA, !a.kContiguous, aAt, viewB,
                         !b.kContiguous, bAt, kEnd);
  };
  SmallVector<Type> accTypes(acc.getTypes());
  size_t numAcc = acc.size();
  if (a.blockFactors)
    return accumulateBlockFactored(
        acc, kBegin, kEnd, a, viewB, !b.kContiguous,
        SliceAt{zeroIdx, zeroIdx, bRow0, b.residentSwizzled});
  // Both operands in place: nothing to stage, no barrier between slices.
  if (residentA && residentB)
    return e.forLoop(kBegin, kEnd, e.idx(tileK), acc,
                     [&](Value k0, ValueRange cur) -> SmallVector<Value> {
                       return step(cur, zeroIdx, k0);
                     });

  // B's loads and stores, none when it is resident.
  auto loadB = [&](Value k0) {
    return residentB ? SmallVector<Value>() : loadSlice(b, tileN, k0, kEnd);
  };
  auto storeB = [&](ValueRange raw, Value stage, Value k0) {
    if (!residentB)
      storeSlice(b, viewB, tileN, raw, stage, k0, kEnd);
  };
  return e.ifElse(
      e.lt(kBegin, kEnd), accTypes,
      [&]() -> SmallVector<Value> {
        SmallVector<Value> rawA = loadSlice(a, tileM, kBegin, kEnd);
        SmallVector<Value> rawB = loadB(kBegin);
        storeSlice(a, viewA, tileM, rawA, e.idx(0), kBegin, kEnd);
        storeB(rawB, e.idx(0), kBegin);
        // Also orders this thread's earlier writes of a resident operand.
        if (wgmma)
          fenceSharedForAsyncProxy(e);
        e.barrier();
        SmallVector<Value> init(acc.begin(), acc.end());
        llvm::append_range(init, rawA);
        llvm::append_range(init, rawB);
        init.push_back(e.idx(0));
        size_t numA = rawA.size(), numRaw = rawA.size() + rawB.size();
        SmallVector<Value> out = e.forLoop(
            kBegin, kEnd, e.idx(tileK), init,
            [&](Value k0, ValueRange cur) -> SmallVector<Value> {
              ValueRange curAcc = cur.take_front(numAcc);
              ValueRange curRaw = cur.slice(numAcc, numRaw);
              Value stage = cur.back();
              Value kNext = e.add(k0, e.idx(tileK));
              Value hasNext = e.lt(kNext, kEnd);
              SmallVector<Type> rawTypes(curRaw.getTypes());
              SmallVector<Value> nextRaw = e.ifElse(
                  hasNext, rawTypes,
                  [&]() -> SmallVector<Value> {
                    SmallVector<Value> r = loadSlice(a, tileM, kNext, kEnd);
                    llvm::append_range(r, loadB(kNext));
                    return r;
                  },
                  [&]() -> SmallVector<Value> {
                    return SmallVector<Value>(curRaw.begin(), curRaw.end());
                  });
              SmallVector<Value> result = step(curAcc, stage, k0);
              Value nextStage = e.sub(e.idx(1), stage);
              e.ifThen(hasNext, [&] {
                storeSlice(a, viewA, tileM,
                           ValueRange(nextRaw).take_front(numA), nextStage,
                           kNext, kEnd);
                storeB(ValueRange(nextRaw).drop_front(numA), nextStage,
                       kNext);
              });
              if (wgmma)
                fenceSharedForAsyncProxy(e);
              e.barrier();
              llvm::append_range(result, nextRaw);
              result.push_back(nextStage);
              return result;
            });
        out.resize(numAcc);
        return out;
      },
      [&]() -> SmallVector<Value> {
        return SmallVector<Value>(acc.begin(), acc.end());
      });
}

SmallVector<Value>
TileMatmul::scaleRows(ValueRange acc, function_ref<Value(Value row)> factor) {
  assert(usesMma() && "tensor-core tiles");
  // Fragment element [r][c] of m16n8 tile (i, j) sits at row lane/4 + 8r.
  Value warp = e.div(e.threadId(), e.idx(32));
  Value row0 = e.add(e.mul(e.rem(warp, e.idx(warpsM)), fragsM * 16),
                     e.div(e.laneId(), e.idx(4)));
  SmallVector<Value> out(acc.begin(), acc.end());
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t r = 0; r < 2; ++r) {
      Value f = e.splat(factor(e.add(row0, e.idx(16 * i + 8 * r))), 2);
      for (int64_t j = 0; j < fragsN; ++j) {
        Value &frag = out[i * fragsN + j];
        Value pair =
            vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
        frag = vector::InsertOp::create(e.b, e.mulf(pair, f), frag,
                                        ArrayRef<int64_t>{r});
      }
    }
  return out;
}

void TileMatmul::epilogueVector(
    ValueRange acc, llvm::function_ref<void(Value, Value, Value)> store) {
  stageOutput(acc);
  e.barrier();
  readOutput(store);
}

Value TileMatmul::outputTile() {
  return sharedView(0, {tileM, tileN + kOutPad}, e.b.getF32Type());
}

void TileMatmul::stageOutput(ValueRange acc) {
  assert(usesMma() && tileN % kVectorWidth == 0 && "tensor-core tiles");
  // The output tile reuses the stage buffers once every thread is past
  // the products.
  Value sOut = outputTile();
  e.barrier();
  auto [row0, col0] = fragmentOrigin();
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t j = 0; j < fragsN; ++j)
      for (int64_t r = 0; r < 2; ++r) {
        Value pair = vector::ExtractOp::create(e.b, acc[i * fragsN + j],
                                               ArrayRef<int64_t>{r});
        vector::StoreOp::create(
            e.b, pair, sOut,
            ValueRange{e.add(row0, e.idx(16 * i + 8 * r)),
                       e.add(col0, e.idx(8 * j))},
            /*nontemporal=*/false, llvm::MaybeAlign(8));
      }
}

void TileMatmul::readOutput(
    llvm::function_ref<void(Value, Value, Value)> store) {
  int64_t perRow = tileN / kVectorWidth, vectors = tileM * perRow;
  Value tid = e.threadId();
  for (int64_t r = 0; r * kThreads < vectors; ++r) {
    auto body = [&] {
      auto [row, col] = outputVectorAt(e.add(tid, e.idx(r * kThreads)));
      store(row, col, loadOutputVector(row, col));
    };
    if ((r + 1) * kThreads <= vectors)
      body();
    else
      e.ifThen(e.lt(e.add(tid, e.idx(r * kThreads)), e.idx(vectors)), body);
  }
  e.barrier();
}

std::pair<Value, Value> TileMatmul::outputVectorAt(Value v) {
  int64_t perRow = tileN / kVectorWidth;
  return {e.div(v, e.idx(perRow)),
          e.mul(e.rem(v, e.idx(perRow)), kVectorWidth)};
}

bool TileMatmul::outputVectorsEven() const {
  return (tileM * (tileN / kVectorWidth)) % kThreads == 0;
}

llvm::SmallVector<std::pair<Value, Value>> TileMatmul::threadOutputVectors() {
  assert(outputVectorsEven() && "every thread holds the same vectors");
  int64_t vectors = tileM * (tileN / kVectorWidth);
  llvm::SmallVector<std::pair<Value, Value>> at;
  for (int64_t r = 0; r * kThreads < vectors; ++r)
    at.push_back(outputVectorAt(e.add(e.threadId(), e.idx(r * kThreads))));
  return at;
}

Value TileMatmul::loadOutputVector(Value row, Value col, int64_t width) {
  auto vecType = VectorType::get({width}, e.b.getF32Type());
  return vector::LoadOp::create(
      e.b, vecType, outputTile(), ValueRange{row, col},
      /*nontemporal=*/false,
      llvm::MaybeAlign(std::min<int64_t>(4 * width, 16)));
}

void TileMatmul::epiloguePairs(
    ValueRange acc, llvm::function_ref<void(Value, Value, Value)> store) {
  assert(usesMma() && "tensor-core tiles");
  // Fragment row r of m16n8 tile (i, j) holds columns col0 + 8j and the
  // next one.
  auto [row0, col0] = fragmentOrigin();
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < fragsN; ++j) {
        Value pair = vector::ExtractOp::create(e.b, acc[i * fragsN + j],
                                               ArrayRef<int64_t>{r});
        store(e.add(row0, e.idx(16 * i + 8 * r)), e.add(col0, e.idx(8 * j)),
              pair);
      }
}

} // namespace gpu_lowering
} // namespace ssd
