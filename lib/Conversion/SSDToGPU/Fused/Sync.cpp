//===- Sync.cpp - inter-CTA hand-offs of the fused SSD kernel -------------===//
#include "Sync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

static constexpr StringLiteral kDeviceScope = "device";

Value globalElementPointer(Emitter &e, Value memref, ValueRange indices) {
  ImplicitLocOpBuilder &b = e.b;
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value offset = meta.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, meta.getStrides()))
    offset = e.add(offset, e.mul(index, stride));
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  Value address = e.add(base, e.mul(offset, e.idx(bytes)));
  Value address64 = arith::IndexCastOp::create(b, b.getI64Type(), address);
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), /*global=*/1);
  return LLVM::IntToPtrOp::create(b, ptrType, address64);
}

Value counterPointer(Emitter &e, Value counters, Value index) {
  return globalElementPointer(e, counters, index);
}

Value fetchTicket(Emitter &e, Value ticketPtr) {
  ImplicitLocOpBuilder &b = e.b;
  Value one = arith::ConstantIntOp::create(b, 1, 32);
  Value old = LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, ticketPtr,
                                        one, LLVM::AtomicOrdering::monotonic,
                                        kDeviceScope, /*alignment=*/4);
  return e.toIndex(old);
}

Value loadAcquire(Emitter &e, Value ptr) {
  Value v = LLVM::LoadOp::create(e.b, e.b.getI32Type(), ptr, /*alignment=*/4,
                                 /*isVolatile=*/false, /*isNonTemporal=*/false,
                                 /*isInvariant=*/false,
                                 /*isInvariantGroup=*/false,
                                 LLVM::AtomicOrdering::acquire, kDeviceScope);
  return e.toIndex(v);
}

void storeRelaxed(Emitter &e, Value ptr, Value value) {
  Value v = arith::IndexCastOp::create(e.b, e.b.getI32Type(), value);
  LLVM::StoreOp::create(e.b, v, ptr, /*alignment=*/4, /*isVolatile=*/false,
                        /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                        LLVM::AtomicOrdering::monotonic, kDeviceScope);
}

void fenceDevice(Emitter &e) {
  LLVM::FenceOp::create(e.b, LLVM::AtomicOrdering::acq_rel, kDeviceScope);
}

Value spinUntilAtLeast(Emitter &e, Value ptr, Value target,
                       int64_t patienceCycles) {
  ImplicitLocOpBuilder &b = e.b;
  Type index = b.getIndexType(), i64 = b.getI64Type();
  Value start;
  if (patienceCycles > 0)
    start = NVVM::Clock64Op::create(b, i64);
  auto loop = scf::WhileOp::create(b, TypeRange{index}, ValueRange{});
  Block *before = b.createBlock(&loop.getBefore());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(before);
    Value v = loadAcquire(e, ptr);
    Value pending = e.lt(v, target);
    e.ifThen(pending, [&] {
      NVVM::NanosleepOp::create(
          b, arith::ConstantIntOp::create(b, kSpinSleepNs, 32));
    });
    if (start) {
      Value waited =
          arith::SubIOp::create(b, NVVM::Clock64Op::create(b, i64), start);
      Value patient = arith::CmpIOp::create(
          b, arith::CmpIPredicate::slt, waited,
          arith::ConstantIntOp::create(b, patienceCycles, 64));
      pending = e.andi(pending, patient);
    }
    scf::ConditionOp::create(b, pending, ValueRange{v});
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, {index}, {b.getLoc()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(after);
    scf::YieldOp::create(b, ValueRange{});
  }
  b.setInsertionPointAfter(loop);
  return loop.getResult(0);
}

void blockAcquire(Emitter &e, Value counters, Value index, Value target) {
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    spinUntilAtLeast(e, counterPointer(e, counters, index), target);
  });
  // Thread 0's acquire and the barrier order the producer's writes before
  // every thread's reads (the barrier synchronises the block with thread 0),
  // and the acquire invalidates the SM's L1: no fence per thread, which
  // would also wait for that thread's own outstanding stores.
  e.barrier();
}

/// The block's release: a barrier, then in thread 0 a device fence and
/// `publish` (a relaxed write of the counter, which the fence makes a
/// release). The barrier orders every thread's writes before thread 0's
/// (CTA scope) and thread 0's release is cumulative: it publishes them at
/// device scope (the pattern of a grid-wide barrier). One fence per block
/// instead of one per thread (each of which also waited for its own
/// outstanding stores: 4% of the stall samples at 0f9a250).
static void releaseFromThread0(Emitter &e, function_ref<void()> publish) {
  e.barrier();
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    fenceDevice(e);
    publish();
  });
}

void blockRelease(Emitter &e, Value counters, Value index, Value value) {
  releaseFromThread0(
      e, [&] { storeRelaxed(e, counterPointer(e, counters, index), value); });
}

void blockReleaseAdd(Emitter &e, Value counters, Value index, Value amount) {
  releaseFromThread0(e, [&] {
    LLVM::AtomicRMWOp::create(
        e.b, LLVM::AtomicBinOp::add, counterPointer(e, counters, index),
        arith::IndexCastOp::create(e.b, e.b.getI32Type(), amount),
        LLVM::AtomicOrdering::monotonic, kDeviceScope, /*alignment=*/4);
  });
}

Value broadcastFromThread0(Emitter &e, Value slot,
                           llvm::function_ref<Value()> compute) {
  Type i64 = e.b.getI64Type();
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    Value v = arith::IndexCastOp::create(e.b, i64, compute());
    memref::StoreOp::create(e.b, v, slot, e.idx(0));
  });
  e.barrier();
  Value v = e.toIndex(memref::LoadOp::create(e.b, slot, ValueRange{e.idx(0)}));
  // No thread may overwrite the slot before every thread has read it.
  e.barrier();
  return v;
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
