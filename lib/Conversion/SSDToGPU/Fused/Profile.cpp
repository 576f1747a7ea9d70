//===- Profile.cpp - the chain items' phase clocks (profile=true) ---------===//
//
// The clocks go to shared memory as the item runs (one st.shared by thread
// 0 per boundary, no barrier added) and to global memory once, at the end.
//
//===----------------------------------------------------------------------===//
#include "Profile.h"
#include "ChainParts.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

namespace {

/// Index 0 holds the start, index i the end of phase i.
void stampAt(FusedBuild &f, int64_t index) {
  Emitter &e = f.e;
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    Value clock = NVVM::Clock64Op::create(e.b, e.b.getI64Type());
    memref::StoreOp::create(e.b, clock, f.profileClocks,
                            ValueRange{e.idx(index)});
  });
}

} // namespace

void itemLogInit(FusedBuild &f) {
  if (f.config.profile)
    f.itemStart = f.k.sharedBuffer({1}, f.e.b.getI64Type());
}

void itemLogStart(FusedBuild &f) {
  if (!f.itemStart)
    return;
  Emitter &e = f.e;
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    Value now = NVVM::GlobalTimerOp::create(e.b, e.b.getI64Type());
    memref::StoreOp::create(e.b, now, f.itemStart, ValueRange{e.idx(0)});
  });
}

void itemLogFinish(FusedBuild &f, Value ticket, int64_t kind) {
  if (!f.itemStart)
    return;
  Emitter &e = f.e;
  Type i64 = e.b.getI64Type();
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    Value end = NVVM::GlobalTimerOp::create(e.b, i64);
    Value log = f.arg("item_log");
    auto put = [&](int64_t field, Value v) {
      memref::StoreOp::create(e.b, v, log, ValueRange{ticket, e.idx(field)});
    };
    put(0, arith::ConstantIntOp::create(e.b, kind, 64));
    put(1, arith::ExtUIOp::create(e.b, i64,
                                  NVVM::SmIdOp::create(e.b, e.b.getI32Type())));
    put(2, memref::LoadOp::create(e.b, f.itemStart, ValueRange{e.idx(0)}));
    put(3, end);
  });
}

void profileStart(FusedBuild &f) {
  if (!f.config.profile)
    return;
  f.profileClocks =
      f.k.sharedBuffer({kProfilePhases + 1}, f.e.b.getI64Type());
  stampAt(f, 0);
}

void profileStamp(FusedBuild &f, ChainPhase phase) {
  if (f.profileClocks)
    stampAt(f, static_cast<int64_t>(phase));
}

void profileFinish(FusedBuild &f, const ChainItem &it) {
  if (!f.profileClocks)
    return;
  profileStamp(f, ChainPhase::Done);
  Emitter &e = f.e;
  Type i64 = e.b.getI64Type();
  e.ifThen(e.eq(e.threadId(), e.idx(0)), [&] {
    Value out = f.arg("chain_profile");
    auto put = [&](int64_t field, Value v) {
      memref::StoreOp::create(
          e.b, v, out,
          ValueRange{it.row, it.c, it.head, it.pb, e.idx(field)});
    };
    auto clockAt = [&](int64_t index) {
      return memref::LoadOp::create(e.b, f.profileClocks,
                                    ValueRange{e.idx(index)})
          .getResult();
    };
    put(0, arith::IndexCastOp::create(e.b, i64,
                                      e.blockId(gpu::Dimension::x)));
    put(1, arith::ExtUIOp::create(
               e.b, i64, NVVM::SmIdOp::create(e.b, e.b.getI32Type())));
    Value start = clockAt(0);
    put(2, start);
    for (int64_t i = 1; i <= kProfilePhases; ++i)
      put(2 + i, arith::SubIOp::create(e.b, clockAt(i), start));
  });
  // The last warp's end, by its lane 0: the start clock is thread 0's,
  // published to it by the barriers since.
  e.ifThen(e.eq(e.threadId(), e.idx(kThreads - 32)), [&] {
    Value end = NVVM::Clock64Op::create(e.b, i64);
    Value start = memref::LoadOp::create(e.b, f.profileClocks,
                                         ValueRange{e.idx(0)});
    memref::StoreOp::create(
        e.b, arith::SubIOp::create(e.b, end, start), f.arg("chain_profile"),
        ValueRange{it.row, it.c, it.head, it.pb,
                   e.idx(kProfileFields - 1)});
  });
  f.profileClocks = Value();
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
