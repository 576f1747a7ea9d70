//===- Emit.cpp - scalar building blocks of the SSD GPU kernels -----------===//
#include "Emit.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

Value Emitter::idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
Value Emitter::f32(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}
Value Emitter::i1(bool v) { return arith::ConstantIntOp::create(b, v, 1); }

Value Emitter::add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
Value Emitter::sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
Value Emitter::mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
Value Emitter::div(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
Value Emitter::rem(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
Value Emitter::min(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
Value Emitter::max(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
Value Emitter::lt(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
}
Value Emitter::le(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::sle, x, y);
}
Value Emitter::eq(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
}
Value Emitter::ne(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, x, y);
}
Value Emitter::andi(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
Value Emitter::ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
Value Emitter::select(Value c, Value x, Value y) {
  return arith::SelectOp::create(b, c, x, y);
}
Value Emitter::toIndex(Value v) {
  if (v.getType().isIndex())
    return v;
  return arith::IndexCastOp::create(b, b.getIndexType(), v);
}

Value Emitter::addf(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
Value Emitter::subf(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
Value Emitter::mulf(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
Value Emitter::divf(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
Value Emitter::fma(Value x, Value y, Value z) {
  return math::FmaOp::create(b, x, y, z);
}
Value Emitter::minf(Value x, Value y) {
  return arith::MinimumFOp::create(b, x, y);
}
Value Emitter::maxf(Value x, Value y) {
  return arith::MaximumFOp::create(b, x, y);
}
Value Emitter::exp(Value x) { return math::ExpOp::create(b, x); }
Value Emitter::gtf(Value x, Value y) {
  return arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, y);
}
Value Emitter::decay(Value x) { return exp(x); }
Value Emitter::approxF32(StringRef instruction, Value x) {
  auto op = LLVM::InlineAsmOp::create(
      b, b.getF32Type(), ValueRange{x}, (instruction + " $0, $1;").str(),
      "=f,f", /*has_side_effects=*/false, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      /*asm_dialect=*/LLVM::AsmDialectAttr(), /*operand_attrs=*/ArrayAttr());
  return op->getResult(0);
}
/// exp(x) and log(x) on the SFU, which computes powers and logarithms of 2.
static constexpr double kLog2E = 1.4426950408889634, kLn2 = 0.6931471805599453;
Value Emitter::expRoundedTo16Bits(Value x) {
  return approxF32("ex2.approx.ftz.f32", mulf(x, f32(kLog2E)));
}
Value Emitter::softplusApprox(Value x) {
  Value t = approxF32("ex2.approx.ftz.f32", mulf(x, f32(kLog2E)));
  Value u = addf(t, f32(1.0));
  Value uMinusOne = subf(u, f32(1.0));
  Value logU = mulf(approxF32("lg2.approx.ftz.f32", u), f32(kLn2));
  Value corrected =
      mulf(logU, mulf(t, approxF32("rcp.approx.ftz.f32", uMinusOne)));
  return select(
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, u, f32(1.0)), t,
      corrected);
}
Value Emitter::toF32(Value v) {
  if (v.getType().isF32() || !isa<FloatType>(v.getType()))
    return v;
  return arith::ExtFOp::create(b, b.getF32Type(), v);
}
Value Emitter::fromF32(Value v, Type type) {
  if (v.getType() == type)
    return v;
  return arith::TruncFOp::create(b, type, v);
}

Value Emitter::load(Value memref, ValueRange indices) {
  return memref::LoadOp::create(b, memref, indices);
}
Value Emitter::loadF32(Value memref, ValueRange indices) {
  return toF32(load(memref, indices));
}
void Emitter::store(Value v, Value memref, ValueRange indices) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  memref::StoreOp::create(b, fromF32(v, element), memref, indices);
}
Value Emitter::dim(Value memref, int64_t d) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(d))
    return idx(type.getDimSize(d));
  return memref::DimOp::create(b, memref, d);
}

Value Emitter::loadVector(Value memref, ValueRange indices, int64_t width) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  // Aligned to the vector's bytes, at most 16 (callers guarantee it).
  int64_t bytes = width * element.getIntOrFloatBitWidth() / 8;
  return vector::LoadOp::create(b, VectorType::get({width}, element), memref,
                                indices, /*nontemporal=*/false,
                                llvm::MaybeAlign(std::min<int64_t>(bytes, 16)));
}
void Emitter::storeVector(Value v, Value memref, ValueRange indices) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  auto type = cast<VectorType>(v.getType());
  if (type.getElementType() != element)
    v = arith::TruncFOp::create(b, type.clone(element), v);
  // Aligned to the vector's bytes, at most 16, as loadVector.
  int64_t bytes = type.getNumElements() * element.getIntOrFloatBitWidth() / 8;
  vector::StoreOp::create(b, v, memref, indices, /*nontemporal=*/false,
                          llvm::MaybeAlign(std::min<int64_t>(bytes, 16)));
}
Value Emitter::toF32Vector(Value v) {
  auto type = cast<VectorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  return arith::ExtFOp::create(b, type.clone(b.getF32Type()), v);
}
Value Emitter::splat(Value scalar, int64_t width) {
  return vector::BroadcastOp::create(
      b, VectorType::get({width}, scalar.getType()), scalar);
}
Value Emitter::mapF32(Value v,
                      llvm::function_ref<Value(Value, int64_t)> fn) {
  v = toF32Vector(v);
  int64_t width = cast<VectorType>(v.getType()).getNumElements();
  SmallVector<Value> out;
  for (int64_t t = 0; t < width; ++t)
    out.push_back(fn(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{t}), t));
  return vector::FromElementsOp::create(b, cast<VectorType>(v.getType()), out);
}

Value Emitter::threadId() { return gpu::ThreadIdOp::create(b, gpu::Dimension::x); }
Value Emitter::blockId(gpu::Dimension d) { return gpu::BlockIdOp::create(b, d); }
Value Emitter::laneId() { return rem(threadId(), idx(32)); }
void Emitter::barrier() { gpu::BarrierOp::create(b); }
Value Emitter::warpInclusiveScan(Value v) {
  Value lane = laneId();
  Type i32 = b.getI32Type();
  Value width = arith::ConstantOp::create(b, b.getIntegerAttr(i32, 32));
  for (int32_t off = 1; off < 32; off *= 2) {
    Value offset = arith::ConstantOp::create(b, b.getIntegerAttr(i32, off));
    Value up = gpu::ShuffleOp::create(b, v, offset, width, gpu::ShuffleMode::UP)
                   .getShuffleResult();
    v = select(le(idx(off), lane), addf(v, up), v);
  }
  return v;
}
Value Emitter::warpShuffle(Value v, Value src) {
  Type i32 = b.getI32Type();
  Value width = arith::ConstantOp::create(b, b.getIntegerAttr(i32, 32));
  Value lane = arith::IndexCastOp::create(b, i32, src);
  return gpu::ShuffleOp::create(b, v, lane, width, gpu::ShuffleMode::IDX)
      .getShuffleResult();
}
Value Emitter::warpAll(Value pred) {
  Value everyLane = arith::ConstantIntOp::create(b, -1, 32);
  return NVVM::VoteSyncOp::create(b, b.getI1Type(), everyLane, pred,
                                  NVVM::VoteSyncKind::all);
}

SmallVector<Value> Emitter::forLoop(Value lb, Value ub, Value step,
                                    ValueRange init, LoopBody body) {
  auto loop = scf::ForOp::create(
      b, lb, ub, step, init,
      [&](OpBuilder &nested, Location, Value iv, ValueRange args) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(nested.getInsertionBlock());
        SmallVector<Value> results = body(iv, args);
        scf::YieldOp::create(b, results);
      });
  return SmallVector<Value>(loop.getResults());
}

void Emitter::forLoop(Value lb, Value ub, Value step,
                      llvm::function_ref<void(Value)> body) {
  forLoop(lb, ub, step, ValueRange{}, [&](Value iv, ValueRange) {
    body(iv);
    return SmallVector<Value>{};
  });
}

void Emitter::ifThen(Value cond, llvm::function_ref<void()> body) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  body();
}

void Emitter::ifThenElse(Value cond, llvm::function_ref<void()> thenBody,
                         llvm::function_ref<void()> elseBody) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/true);
  for (auto [block, body] : {std::pair{op.thenBlock(), thenBody},
                             std::pair{op.elseBlock(), elseBody}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(block->getTerminator());
    body();
  }
}

SmallVector<Value>
Emitter::ifElse(Value cond, TypeRange types,
                llvm::function_ref<SmallVector<Value>()> thenBody,
                llvm::function_ref<SmallVector<Value>()> elseBody) {
  auto op = scf::IfOp::create(b, types, cond, /*withElseRegion=*/true);
  for (auto [block, body] :
       {std::pair{op.thenBlock(), thenBody}, std::pair{op.elseBlock(), elseBody}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block);
    SmallVector<Value> results = body();
    scf::YieldOp::create(b, results);
  }
  return SmallVector<Value>(op.getResults());
}

} // namespace gpu_lowering
} // namespace ssd
