//===- TestTileProduct.cpp - one tile product alone (test pass) -----------===//
//
// ssd-test-tile-product builds the kernel `tile_product` around a single
// TileMatmul, so that a tensor-core path and an operand layout can be
// FileChecked and run on the GPU against a host product by themselves.
//
//===----------------------------------------------------------------------===//
#include "TileMatmul.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace ssd {
#define GEN_PASS_DEF_TESTTILEPRODUCT
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;

namespace {

constexpr int64_t kThreads = 256;

struct TestTileProductPass
    : ssd::impl::TestTileProductBase<TestTileProductPass> {
  using Base::Base;

  LogicalResult checkOptions(ModuleOp module) {
    auto bad = [&](const Twine &why) {
      return module.emitError() << "ssd-test-tile-product: " << why;
    };
    if (mma != "mma.sync" && mma != "wgmma")
      return bad("mma must be 'mma.sync' or 'wgmma', got '" + mma + "'");
    if (m <= 0 || n <= 0 || k <= 0 || depth <= 0)
      return bad("m, n, k and depth must be positive, got m=" + Twine(m) +
                 " n=" + Twine(n) + " k=" + Twine(k) +
                 " depth=" + Twine(depth));
    if (!TileMatmul::mmaFits(m, n, depth))
      return bad("a " + Twine(m) + "x" + Twine(n) + " tile with depth " +
                 Twine(depth) + " does not fit the tensor-core layout");
    if (m % kVectorWidth || n % kVectorWidth || k % depth ||
        (m * depth) % (kVectorWidth * 32) || (n * depth) % (kVectorWidth * 32))
      return bad("the vector fills need m, n multiples of 8, k a multiple "
                 "of depth and whole warps of vectors per slice");
    if (mma == "wgmma" && !TileMatmul::wgmmaFits(m, n, depth))
      return bad("wgmma takes 64-row tiles with n a multiple of 16, got " +
                 Twine(m) + "x" + Twine(n));
    if (aSource != "staged" && aSource != "registers" && aSource != "scaled" &&
        aSource != "causal")
      return bad("a-source must be 'staged', 'registers', 'scaled' or "
                 "'causal', got '" +
                 aSource + "'");
    if (aSource != "staged" && mma != "mma.sync")
      return bad("a-source '" + aSource + "' needs mma=mma.sync, got '" + mma +
                 "'");
    return success();
  }

  /// `matrix` (rows x cols) copied into shared memory as a resident
  /// operand is laid out, [1][rows][cols + pad]; the caller's barrier
  /// makes it visible.
  static Value copyToShared(Emitter &e, KernelFunc &kernel, Value matrix) {
    auto type = cast<MemRefType>(matrix.getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    Value buffer = kernel.sharedBuffer({1, rows, cols + kResidentPad},
                                       type.getElementType());
    e.forLoop(e.threadId(), e.idx(rows * cols), e.idx(kThreads), [&](Value el) {
      Value r = e.div(el, e.idx(cols)), c = e.rem(el, e.idx(cols));
      e.store(e.load(matrix, {r, c}), buffer, {e.idx(0), r, c});
    });
    return buffer;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions(module)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    auto gpuModule = createKernelModule(b, module, "sm_90a", "+ptx80");

    Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
    auto aType = MemRefType::get(
        aKContiguous ? ArrayRef<int64_t>{m, k} : ArrayRef<int64_t>{k, m}, bf16);
    auto bType = MemRefType::get(
        bKContiguous ? ArrayRef<int64_t>{n, k} : ArrayRef<int64_t>{k, n}, bf16);
    auto cType = MemRefType::get({m, n}, f32);
    auto func = createTestKernel(b, gpuModule, "tile_product",
                                 {aType, bType, cType}, kThreads,
                                 /*setsMaxRegisters=*/false);

    KernelFunc kernel;
    kernel.func = func;
    Value aArg = func.getArgument(0), bArg = func.getArgument(1),
          cArg = func.getArgument(2);
    Emitter e(b);
    TileMatmul mm(e, kernel, m, n, depth, bf16,
                  mma == "wgmma" ? MmaInstr::Wgmma : MmaInstr::MmaSync);
    // Operand X(kk, row) of a matrix stored row x k (k contiguous) or
    // k x row.
    auto operand = [&](Value matrix, bool kContiguous) {
      TileOperand op{[&e, matrix, kContiguous](Value kk, Value row) {
                       return kContiguous ? e.loadF32(matrix, {row, kk})
                                          : e.loadF32(matrix, {kk, row});
                     },
                     kContiguous};
      op.loadVector = [&e, matrix, kContiguous](Value kk, Value row) {
        return kContiguous ? e.loadVector(matrix, {row, kk}, kVectorWidth)
                           : e.loadVector(matrix, {kk, row}, kVectorWidth);
      };
      return op;
    };
    TileOperand a = operand(aArg, aKContiguous);
    TileOperand bOp = operand(bArg, bKContiguous);
    if (aSource != "staged") {
      // B read in place; A from registers, or in place and scaled.
      bOp.resident = copyToShared(e, kernel, bArg);
      if (aSource == "scaled")
        a.resident = copyToShared(e, kernel, aArg);
      e.barrier();
    }
    bool causal = aSource == "causal";
    if (aSource == "registers" || causal) {
      a.fragmentPair = [&e, aArg, causal, this](Value kk, Value row) {
        SmallVector<Value> pair;
        for (int64_t t = 0; t < 2; ++t) {
          Value kt = e.add(kk, e.idx(t));
          Value v = aKContiguous ? e.loadF32(aArg, {row, kt})
                                 : e.loadF32(aArg, {kt, row});
          pair.push_back(causal ? e.select(e.le(kt, row), v, e.f32(0.0)) : v);
        }
        return vector::FromElementsOp::create(
            e.b, VectorType::get({2}, e.b.getF32Type()), pair);
      };
      if (causal)
        a.diagonal = e.idx(0);
    } else if (aSource == "scaled") {
      // s(k) = 2^(k % 3 - 1): 0.5, 1, 2, exact in bf16.
      auto scale = [&e](Value kk) {
        Value r = e.rem(kk, e.idx(3));
        return e.select(e.eq(r, e.idx(0)), e.f32(0.5),
                        e.select(e.eq(r, e.idx(1)), e.f32(1.0), e.f32(2.0)));
      };
      a.kScalePair = [&e, scale](Value kk) {
        SmallVector<Value> pair = {scale(kk), scale(e.add(kk, e.idx(1)))};
        return vector::FromElementsOp::create(
            e.b, VectorType::get({2}, e.b.getF32Type()), pair);
      };
    }
    SmallVector<Value> acc =
        mm.accumulate(mm.zero(), e.idx(0), e.idx(k), a, bOp);
    mm.epilogue(acc, [&](Value row, Value col, Value v) {
      e.store(v, cArg, {row, col});
    });
    func->setAttr("ssd.mma",
                  b.getStringAttr(mm.usesWgmma() ? "wgmma" : "mma.sync"));
  }
};

} // namespace
