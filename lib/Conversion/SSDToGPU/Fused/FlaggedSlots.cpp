//===- FlaggedSlots.cpp - state slots that carry their own flags ----------===//
#include "FlaggedSlots.h"
#include "Sync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {
namespace fused {

static constexpr StringLiteral kDeviceScope = "device";
static constexpr int64_t kWordBytes = 8;

void storeFlagged(Emitter &e, Value ptr, Value value, Value flag) {
  ImplicitLocOpBuilder &b = e.b;
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value bits = arith::ExtUIOp::create(
      b, i64, arith::BitcastOp::create(b, i32, value).getResult());
  Value high =
      arith::ShLIOp::create(b, arith::IndexCastOp::create(b, i64, flag),
                            arith::ConstantIntOp::create(b, 32, 64));
  Value word = arith::OrIOp::create(b, high, bits);
  LLVM::StoreOp::create(b, word, ptr, /*alignment=*/kWordBytes,
                        /*isVolatile=*/false, /*isNonTemporal=*/false,
                        /*isInvariantGroup=*/false,
                        LLVM::AtomicOrdering::monotonic, kDeviceScope);
}

Value loadFlaggedWord(Emitter &e, Value ptr) {
  return LLVM::LoadOp::create(e.b, e.b.getI64Type(), ptr,
                              /*alignment=*/kWordBytes, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/false,
                              /*isInvariantGroup=*/false,
                              LLVM::AtomicOrdering::monotonic, kDeviceScope);
}

Value awaitFlagged(Emitter &e, Value ptr, Value flag, Value first) {
  ImplicitLocOpBuilder &b = e.b;
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value want = arith::IndexCastOp::create(b, i64, flag);
  Value shift = arith::ConstantIntOp::create(b, 32, 64);
  auto flagOf = [&](Value word) {
    return arith::ShRUIOp::create(b, word, shift).getResult();
  };
  if (!first)
    first = loadFlaggedWord(e, ptr);
  // while (flag(word) != want) { sleep; word = load }
  auto loop = scf::WhileOp::create(b, TypeRange{i64}, ValueRange{first});
  Block *before = b.createBlock(&loop.getBefore(), {}, {i64}, {b.getLoc()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(before);
    Value word = before->getArgument(0);
    Value pending =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, flagOf(word), want);
    scf::ConditionOp::create(b, pending, ValueRange{word});
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, {i64}, {b.getLoc()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(after);
    NVVM::NanosleepOp::create(
        b, arith::ConstantIntOp::create(b, kSpinSleepNs, 32));
    scf::YieldOp::create(b, ValueRange{loadFlaggedWord(e, ptr)});
  }
  b.setInsertionPointAfter(loop);
  Value low = arith::TruncIOp::create(b, i32, loop.getResult(0));
  return arith::BitcastOp::create(b, b.getF32Type(), low);
}

} // namespace fused
} // namespace gpu_lowering
} // namespace ssd
