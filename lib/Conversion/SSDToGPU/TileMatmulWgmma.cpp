//===- TileMatmulWgmma.cpp - wgmma.mma_async on staged slices -------------===//
//
// The staged (or resident) slices read in place by the two warpgroups.
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

namespace {

/// The shared-memory matrix descriptor of wgmma for the no-swizzle
/// canonical layouts: start address, the byte stride between core matrices
/// along K (`alongK`, the "leading dimension byte offset") and along M or N
/// (`alongMN`, the "stride dimension byte offset"), all in 16-byte units.
Value matrixDescriptor(Emitter &e, Value address, int64_t alongK,
                       int64_t alongMN) {
  Type i64 = e.b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(e.b, e.b.getIntegerAttr(i64, v));
  };
  Value addr = arith::IndexCastOp::create(e.b, i64, address);
  Value start = arith::ShRUIOp::create(
      e.b, arith::AndIOp::create(e.b, addr, c64(0x3FFFF)), c64(4));
  int64_t strides = ((alongK >> 4) << 16) | ((alongMN >> 4) << 32);
  return arith::OrIOp::create(e.b, start, c64(strides));
}

} // namespace

SmallVector<Value> TileMatmul::wgmmaStep(ValueRange acc, Value viewA,
                                         bool aKMajor, Value viewB,
                                         bool bKMajor, Value stage,
                                         bool bResident, Value bK0) {
  MLIRContext *ctx = e.b.getContext();
  Type f32 = e.b.getF32Type();
  int64_t perGroup = tileN / 2;
  int64_t bytes = mmaType.getIntOrFloatBitWidth() / 8;
  constexpr int64_t kCore = 128; // bytes of one 8 x 8 core matrix
  Value group = e.div(e.threadId(), e.idx(128));
  auto address = [&](Value view) -> Value {
    return memref::ExtractAlignedPointerAsIndexOp::create(e.b, view);
  };

  // A: the tile's 64 rows; this stage's slice.
  Value aBase = e.add(address(viewA), e.mul(stage, tileM * tileK * bytes));
  int64_t aAlongK = aKMajor ? kCore : (tileM / 8) * kCore;
  int64_t aAlongM = aKMajor ? (tileK / 8) * kCore : kCore;
  // B: this warpgroup's perGroup rows (output columns).
  int64_t depthB = tileK;
  if (bResident)
    depthB = cast<MemRefType>(viewB.getType()).getDimSize(2) * 8;
  int64_t bAlongK = bKMajor ? kCore : (tileN / 8) * kCore;
  int64_t bAlongN = bKMajor ? (depthB / 8) * kCore : kCore;
  Value bBase = address(viewB);
  if (!bResident)
    bBase = e.add(bBase, e.mul(stage, tileN * tileK * bytes));
  bBase = e.add(bBase, e.mul(group, (perGroup / 8) * bAlongN));

  // Fragments j of the mma.sync layout are registers 4j .. 4j + 3.
  SmallVector<Type> fields(perGroup / 2, f32);
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value d = LLVM::PoisonOp::create(e.b, structType);
  for (int64_t j = 0; j < fragsN; ++j)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c)
        d = LLVM::InsertValueOp::create(
            e.b, d,
            vector::ExtractOp::create(e.b, acc[j], ArrayRef<int64_t>{r, c}),
            ArrayRef<int64_t>{4 * j + 2 * r + c});

  NVVM::WGMMATypes type = mmaType.isBF16() ? NVVM::WGMMATypes::bf16
                                           : NVVM::WGMMATypes::f16;
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, perGroup, 16);
  NVVM::WgmmaFenceAlignedOp::create(e.b);
  for (int64_t ks = 0; ks < tileK; ks += 16) {
    // k16 = two core matrices along K.
    Value aAt = e.add(aBase, e.idx((ks / 8) * aAlongK));
    Value kB = bResident ? e.add(bK0, e.idx(ks)) : e.idx(ks);
    Value bAt = e.add(bBase, e.mul(e.div(kB, e.idx(8)), bAlongK));
    d = NVVM::WgmmaMmaAsyncOp::create(
        e.b, structType, d, matrixDescriptor(e, aAt, aAlongK, aAlongM),
        matrixDescriptor(e, bAt, bAlongK, bAlongN), shape, type, type,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        aKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
  NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);

  SmallVector<Value> next;
  auto fragType = VectorType::get({2, 2}, f32);
  for (int64_t j = 0; j < fragsN; ++j) {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(LLVM::ExtractValueOp::create(
          e.b, d, ArrayRef<int64_t>{4 * j + i}));
    next.push_back(vector::FromElementsOp::create(e.b, fragType, elements));
  }
  return next;
}

} // namespace gpu_lowering
} // namespace ssd
