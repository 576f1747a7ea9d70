//===- TileMatmul.cpp - one thread block's tile matrix product ------------===//
//
// The class, the scalar fill with its SIMT and mma.sync steps, and the
// epilogue through registers; the vector path is in TileMatmulVector.cpp
// and the wgmma step in TileMatmulWgmma.cpp.
//
//===----------------------------------------------------------------------===//
#include "TileMatmulParts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

bool TileMatmul::mmaFits(int64_t tileM, int64_t tileN, int64_t tileK) {
  int64_t warpsM = std::min<int64_t>(kWarps, tileM / 16);
  if (warpsM == 0 || tileM % 16 || tileK % 16)
    return false;
  int64_t warpsN = kWarps / warpsM;
  return tileN % (8 * warpsN) == 0;
}

bool TileMatmul::wgmmaFits(int64_t tileM, int64_t tileN, int64_t tileK) {
  int64_t perGroup = tileN / 2;
  return tileM == 64 && tileN % 16 == 0 && perGroup >= 8 && perGroup <= 256 &&
         tileK % 16 == 0 && mmaFits(tileM, tileN, tileK);
}

bool TileMatmul::wgmmaInPlaceFits(int64_t tileM, int64_t tileN,
                                  int64_t tileK) {
  return tileM == 128 && tileN % 8 == 0 && tileN >= 8 && tileN <= 256 &&
         tileK % 16 == 0 && mmaFits(tileM, tileN, tileK);
}

TileMatmul::TileMatmul(Emitter &e, KernelFunc &kernel, int64_t tileM,
                       int64_t tileN, int64_t tileK, Type mmaType,
                       MmaInstr instr)
    : e(e), kernel(kernel), tileM(tileM), tileN(tileN), tileK(tileK),
      mmaType(mmaType) {
  if (mmaType && !mmaFits(tileM, tileN, tileK))
    this->mmaType = Type();
  wgmma = usesMma() && instr == MmaInstr::Wgmma &&
          wgmmaFits(tileM, tileN, tileK);
  wgmmaInPlace = usesMma() && instr == MmaInstr::Wgmma && !wgmma &&
                 wgmmaInPlaceFits(tileM, tileN, tileK);
  if (usesMma()) {
    warpsM = std::min<int64_t>(kWarps, tileM / 16);
    warpsN = kWarps / warpsM;
    fragsM = tileM / 16 / warpsM;
    fragsN = tileN / 8 / warpsN;
  } else {
    assert(tileM % 16 == 0 && tileN % 16 == 0 && "SIMT tiles of 16x16 threads");
  }
}

/// The single-stage buffers of the scalar fill, allocated on first use so
/// that a product on the vector path only holds the shared memory it uses.
void TileMatmul::allocateScalarBuffers() {
  if (sA)
    return;
  if (usesMma()) {
    sA = kernel.sharedBuffer({tileM, tileK + kMmaPad}, mmaType);
    sB = kernel.sharedBuffer({tileN, tileK + kMmaPad}, mmaType);
  } else {
    Type f32 = e.b.getF32Type();
    sA = kernel.sharedBuffer({tileK, tileM + kSimtPad}, f32);
    sB = kernel.sharedBuffer({tileK, tileN + kSimtPad}, f32);
  }
}

SmallVector<Value> TileMatmul::zero() {
  if (usesMma()) {
    auto type = VectorType::get({2, 2}, e.b.getF32Type());
    Value z = arith::ConstantOp::create(
        e.b, type, DenseElementsAttr::get(type, e.b.getF32FloatAttr(0.0)));
    return SmallVector<Value>(fragsM * fragsN, z);
  }
  return SmallVector<Value>((tileM / 16) * (tileN / 16), e.f32(0.0));
}

/// Global -> shared: every thread stores elements tid, tid + 256, ... of the
/// rows x tileK slice starting at k0, in the order that coalesces the loads.
void TileMatmul::fill(Value shared, const TileOperand &op, int64_t rows,
                      Value k0, Value kEnd) {
  int64_t elements = rows * tileK;
  Value tid = e.threadId();
  for (int64_t r = 0; r * kThreads < elements; ++r) {
    auto body = [&] {
      Value el = e.add(tid, e.idx(r * kThreads));
      Value kk, row;
      if (op.kContiguous) {
        kk = e.rem(el, e.idx(tileK));
        row = e.div(el, e.idx(tileK));
      } else {
        row = e.rem(el, e.idx(rows));
        kk = e.div(el, e.idx(rows));
      }
      Value k = e.add(k0, kk);
      Value inK = e.lt(k, kEnd);
      Value v = op.load(e.min(k, e.sub(kEnd, e.idx(1))), row);
      v = e.select(inK, v, e.f32(0.0));
      if (usesMma())
        e.store(v, shared, {row, kk});
      else
        e.store(v, shared, {kk, row});
    };
    if ((r + 1) * kThreads <= elements)
      body();
    else
      e.ifThen(e.lt(e.add(tid, e.idx(r * kThreads)), e.idx(elements)), body);
  }
}

/// One tileK slice on the FMA units: thread (ty, tx) owns rows ty + 16i and
/// columns tx + 16j.
SmallVector<Value> TileMatmul::simtStep(ValueRange acc) {
  Value tid = e.threadId();
  Value ty = e.div(tid, e.idx(16)), tx = e.rem(tid, e.idx(16));
  int64_t tm = tileM / 16, tn = tileN / 16;
  return e.forLoop(
      e.idx(0), e.idx(tileK), e.idx(1), acc,
      [&](Value kk, ValueRange cur) -> SmallVector<Value> {
        SmallVector<Value> a, bv, next(cur.begin(), cur.end());
        for (int64_t i = 0; i < tm; ++i)
          a.push_back(e.load(sA, {kk, e.add(ty, e.idx(16 * i))}));
        for (int64_t j = 0; j < tn; ++j)
          bv.push_back(e.load(sB, {kk, e.add(tx, e.idx(16 * j))}));
        for (int64_t i = 0; i < tm; ++i)
          for (int64_t j = 0; j < tn; ++j)
            next[i * tn + j] = e.fma(a[i], bv[j], next[i * tn + j]);
        return next;
      });
}

/// One tileK slice on the tensor cores: warp (wm, wn) owns fragsM x fragsN
/// m16n8 fragments; A fragments by ldmatrix.x4 from sA[m][k], B fragments by
/// ldmatrix.x2 from sB[n][k] (the column-major B of mma.sync).
/// One m16n8k16 product. f16 goes through nvgpu.mma.sync; its NVVM lowering
/// cannot type bf16 operands in MLIR 22, so bf16 fragments are repacked as
/// the i32 registers of nvvm.mma.sync (4 for A, 2 for B) directly.
Value mmaSync(Emitter &e, Value a, Value b, Value c) {
  Type element = cast<VectorType>(a.getType()).getElementType();
  if (!element.isBF16())
    return nvgpu::MmaSyncOp::create(e.b, a, b, c, ArrayRef<int64_t>{16, 8, 16});
  auto packed = [&](Value frag) {
    SmallVector<Value> regs;
    int64_t rows = cast<VectorType>(frag.getType()).getDimSize(0);
    auto i32x1 = VectorType::get({1}, e.b.getI32Type());
    for (int64_t r = 0; r < rows; ++r) {
      Value pair = vector::ExtractOp::create(e.b, frag, ArrayRef<int64_t>{r});
      Value word = vector::BitCastOp::create(e.b, i32x1, pair);
      regs.push_back(vector::ExtractOp::create(e.b, word, ArrayRef<int64_t>{0}));
    }
    return regs;
  };
  SmallVector<Value> accIn;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t col = 0; col < 2; ++col)
      accIn.push_back(vector::ExtractOp::create(e.b, c, ArrayRef<int64_t>{r, col}));
  Type f32 = e.b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(e.b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      e.b, resultType, packed(a), packed(b), accIn, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(e.b, d, ArrayRef<int64_t>{i}));
  return vector::FromElementsOp::create(e.b, c.getType(), out);
}

SmallVector<Value> TileMatmul::mmaStep(ValueRange acc) {
  Value lane = e.laneId();
  Value warp = e.div(e.threadId(), e.idx(32));
  Value wm = e.rem(warp, e.idx(warpsM)), wn = e.div(warp, e.idx(warpsM));
  Value rowA = e.add(e.mul(wm, fragsM * 16), e.rem(lane, e.idx(16)));
  Value colA = e.mul(e.div(lane, e.idx(16)), 8);
  Value rowB = e.add(e.mul(wn, fragsN * 8), e.rem(lane, e.idx(8)));
  Value colB = e.mul(e.rem(e.div(lane, e.idx(8)), e.idx(2)), 8);
  auto aType = VectorType::get({4, 2}, mmaType);
  auto bType = VectorType::get({2, 2}, mmaType);
  SmallVector<Value> next(acc.begin(), acc.end());
  for (int64_t ks = 0; ks < tileK; ks += 16) {
    SmallVector<Value> aFrags, bFrags;
    for (int64_t i = 0; i < fragsM; ++i)
      aFrags.push_back(nvgpu::LdMatrixOp::create(
          e.b, aType, sA, ValueRange{e.add(rowA, e.idx(16 * i)),
                                     e.add(colA, e.idx(ks))},
          /*transpose=*/false, /*numTiles=*/4));
    for (int64_t j = 0; j < fragsN; ++j)
      bFrags.push_back(nvgpu::LdMatrixOp::create(
          e.b, bType, sB, ValueRange{e.add(rowB, e.idx(8 * j)),
                                     e.add(colB, e.idx(ks))},
          /*transpose=*/false, /*numTiles=*/2));
    for (int64_t i = 0; i < fragsM; ++i)
      for (int64_t j = 0; j < fragsN; ++j)
        next[i * fragsN + j] =
            mmaSync(e, aFrags[i], bFrags[j], next[i * fragsN + j]);
  }
  return next;
}

SmallVector<Value> TileMatmul::accumulate(ValueRange acc, Value kBegin,
                                          Value kEnd, const TileOperand &a,
                                          const TileOperand &b) {
  assert((!a.resident && !b.resident) ||
         (usesMma() && (a.loadVector || a.resident || a.fragmentPair) &&
          (b.loadVector || b.resident)) &&
             "a resident operand needs the vector path");
  assert((!wgmma || (!a.resident && (!b.resident || b.kContiguous))) &&
         "wgmma reads a resident B with k contiguous only");
  assert((!a.resident || b.resident) && "a staged B beside a resident A");
  if (a.fragmentPair || a.kScalePair)
    return accumulateVector(acc, kBegin, kEnd, a, b);
  if (usesMma() && (a.loadVector || a.resident) &&
      (b.loadVector || b.resident) &&
      (tileM * tileK) % (kVectorWidth * 32) == 0 &&
      (tileN * tileK) % (kVectorWidth * 32) == 0)
    return accumulateVector(acc, kBegin, kEnd, a, b);
  allocateScalarBuffers();
  return e.forLoop(
      kBegin, kEnd, e.idx(tileK), acc,
      [&](Value k0, ValueRange cur) -> SmallVector<Value> {
        fill(sA, a, tileM, k0, kEnd);
        fill(sB, b, tileN, k0, kEnd);
        e.barrier();
        SmallVector<Value> next = usesMma() ? mmaStep(cur) : simtStep(cur);
        e.barrier();
        return next;
      });
}

std::pair<Value, Value> TileMatmul::fragmentOrigin() {
  Value lane = e.laneId();
  Value warp = e.div(e.threadId(), e.idx(32));
  Value wm = e.rem(warp, e.idx(warpsM)), wn = e.div(warp, e.idx(warpsM));
  return {e.add(e.mul(wm, fragsM * 16), e.div(lane, e.idx(4))),
          e.add(e.mul(wn, fragsN * 8), e.mul(e.rem(lane, e.idx(4)), 2))};
}

void TileMatmul::epilogue(
    ValueRange acc, llvm::function_ref<void(Value, Value, Value)> store) {
  if (!usesMma()) {
    Value tid = e.threadId();
    Value ty = e.div(tid, e.idx(16)), tx = e.rem(tid, e.idx(16));
    int64_t tn = tileN / 16;
    for (int64_t i = 0; i < tileM / 16; ++i)
      for (int64_t j = 0; j < tn; ++j)
        store(e.add(ty, e.idx(16 * i)), e.add(tx, e.idx(16 * j)),
              acc[i * tn + j]);
    return;
  }
  auto [row0, col0] = fragmentOrigin();
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t j = 0; j < fragsN; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          Value v = vector::ExtractOp::create(e.b, acc[i * fragsN + j],
                                              ArrayRef<int64_t>{r, c});
          store(e.add(row0, e.idx(16 * i + 8 * r)),
                e.add(col0, e.idx(8 * j + c)), v);
        }
}

} // namespace gpu_lowering
} // namespace ssd
