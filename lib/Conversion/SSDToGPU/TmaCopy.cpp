//===- TmaCopy.cpp - whole operand panels by the tensor memory accelerator ===//
#include "TmaCopy.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

SmallVector<Value> swizzled128At(Emitter &e, Value row, Value col) {
  Value inPanel = e.rem(col, e.idx(kSwizzlePanel));
  Value chunk = e.div(inPanel, e.idx(8));
  Value swizzled =
      arith::XOrIOp::create(e.b, chunk, e.rem(row, e.idx(8)));
  return {e.div(col, e.idx(kSwizzlePanel)), row,
          e.add(e.mul(swizzled, 8), e.rem(inPanel, e.idx(8)))};
}

Value elementPointer(Emitter &e, Value memref, ValueRange indices,
                     unsigned space) {
  ImplicitLocOpBuilder &b = e.b;
  auto type = cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
  Value element = meta.getOffset();
  for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
    element = e.add(element, e.mul(index, stride));
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value address = e.add(base, e.mul(element, e.idx(bytes)));
  Value address64 = arith::IndexCastOp::create(b, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), space), address64);
}

void fenceSharedForAsyncProxy(Emitter &e) {
  NVVM::FenceProxyOp::create(
      e.b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(e.b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

namespace {
Value i32(Emitter &e, int64_t v) {
  return arith::ConstantIntOp::create(e.b, v, 32);
}
} // namespace

void initTmaBarrier(Emitter &e, Value bar, int64_t arrivals) {
  NVVM::MBarrierInitOp::create(e.b, bar, i32(e, arrivals),
                               /*predicate=*/Value());
}

void expectTmaBytes(Emitter &e, Value bar, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      e.b, /*res=*/Type(), bar, i32(e, bytes), NVVM::MemScopeKind::CTA,
      /*relaxed=*/false, /*predicate=*/Value());
}

void copyTmaBox(Emitter &e, Value descriptor, Value dst, Value bar,
                ValueRange coordinates, Value multicastMask) {
  SmallVector<Value> coords;
  for (Value c : coordinates)
    coords.push_back(
        arith::IndexCastOp::create(e.b, e.b.getI32Type(), c));
  // The destination is a shared::cluster address: this block's own shared
  // memory is a window of it.
  Value clusterDst = LLVM::AddrSpaceCastOp::create(
      e.b, LLVM::LLVMPointerType::get(e.b.getContext(), 7), dst);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      e.b, clusterDst, descriptor, coords, bar, /*im2colOffsets=*/ValueRange(),
      multicastMask, /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
      /*isCTAOnly=*/false,
      /*group=*/NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
}

void waitTmaBarrier(Emitter &e, Value bar, Value parity) {
  // ticks: the suspend-time hint of try_wait, 0 = the system's default.
  NVVM::MBarrierTryWaitParityOp::create(e.b, bar, parity, i32(e, 0));
}

} // namespace gpu_lowering
} // namespace ssd
