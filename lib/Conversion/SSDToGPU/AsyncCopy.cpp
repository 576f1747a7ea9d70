//===- AsyncCopy.cpp - global -> shared copies without registers ----------===//
#include "AsyncCopy.h"
#include "TmaCopy.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

void copyRowsAsync(Emitter &e, const AsyncRows &r, int64_t threads) {
  assert(r.width % 8 == 0 && "whole 16-byte copies");
  ImplicitLocOpBuilder &b = e.b;
  int64_t perRow = r.width / 8, copies = r.rows * perRow;
  Value tid = e.threadId();
  Value lastRow = e.sub(r.valid, e.idx(1));
  for (int64_t k = 0; k * threads < copies; ++k) {
    auto issue = [&] {
      Value v = e.add(tid, e.idx(k * threads));
      Value row = e.div(v, e.idx(perRow));
      Value col = e.mul(e.rem(v, e.idx(perRow)), 8);
      SmallVector<Value> at = r.srcAt(e.max(e.min(row, lastRow), e.idx(0)));
      at.back() = e.add(at.back(), col);
      Value src = elementPointer(e, r.src, at, /*space=*/1);
      Value dst = elementPointer(e, r.dst, {e.idx(0), row, col}, /*space=*/3);
      // 16 bytes, or none read (zero fill) past the valid rows.
      Value bytes = arith::SelectOp::create(
          b, e.lt(row, r.valid), arith::ConstantIntOp::create(b, 16, 32),
          arith::ConstantIntOp::create(b, 0, 32));
      NVVM::CpAsyncOp::create(
          b, dst, src, b.getI32IntegerAttr(16),
          NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                               NVVM::LoadCacheModifierKind::CG),
          bytes);
    };
    if ((k + 1) * threads <= copies)
      issue();
    else
      e.ifThen(e.lt(e.add(tid, e.idx(k * threads)), e.idx(copies)), issue);
  }
  NVVM::CpAsyncCommitGroupOp::create(b);
}

void waitAsyncCopies(Emitter &e) { NVVM::CpAsyncWaitGroupOp::create(e.b, 0); }

} // namespace gpu_lowering
} // namespace ssd
