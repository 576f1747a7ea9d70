//===- TestPipelinedProduct.cpp - a warp-specialised product (test pass) ===//
//
// ssd-test-pipelined-product builds the kernel `pipelined_product`, the
// main loop a warp-specialised kernel is made of, alone: warpgroup 0 is
// the producer (setmaxnreg down to 40), one of its threads copying A's and
// B's 64-deep K slices by TMA into a StageRing; warpgroups 1 .. m / 64 are
// the consumers (setmaxnreg up to 232), each multiplying its 64 rows of A
// by B on wgmma straight from the swizzled stages, one commit group per
// slice with one group left in flight (wait_group 1), releasing a slice's
// stage once the group that read it is done. So the copies, the tensor
// cores and the releases overlap, which no other kernel of the project does
// yet; it is FileChecked here and run on the GPU against a host product
// (scripts/device/run_pipelined_products.py).
//
//===----------------------------------------------------------------------===//
#include "StageRing.h"
#include "TmaCopy.h"
#include "Wgmma.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace ssd {
#define GEN_PASS_DEF_TESTPIPELINEDPRODUCT
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;

namespace {

constexpr int64_t kGroupThreads = 128;
constexpr int64_t kSliceDepth = kSwizzlePanel; // one 128-byte swizzled row
constexpr int64_t kRowBytes = 2 * kSliceDepth;
constexpr int64_t kProducerRegisters = 40, kConsumerRegisters = 232;
/// Shared memory a block may hold on sm_90 (227 KB).

struct TestPipelinedProductPass
    : ssd::impl::TestPipelinedProductBase<TestPipelinedProductPass> {
  using Base::Base;

  int64_t consumers() const { return m / 64; }
  int64_t threads() const { return kGroupThreads * (1 + consumers()); }
  /// One stage: A's m rows and B's n rows of one slice.
  int64_t stageBytes() const { return (m + n) * kRowBytes; }
  /// The arena: the stages (1024-aligned at run time) and the barriers.
  int64_t sharedBytes() const {
    return stages * stageBytes() + kSwizzleAlign + 16 * stages;
  }

  LogicalResult checkOptions(ModuleOp module) {
    auto bad = [&](const Twine &why) {
      return module.emitError() << "ssd-test-pipelined-product: " << why;
    };
    if (m != 64 && m != 128)
      return bad("m must be 64 or 128 (one consumer warpgroup per 64 rows), "
                 "got " +
                 Twine(m));
    if (n < 16 || n > 256 || n % 16)
      return bad("n must be a multiple of 16 from 16 to 256 (wgmma's N and "
                 "a TMA box's rows), got " +
                 Twine(n));
    if (k <= 0 || k % kSliceDepth)
      return bad("k must be a positive multiple of " + Twine(kSliceDepth) +
                 " (whole swizzled slices), got " + Twine(k));
    if (stages < 2 || stages > 8)
      return bad("stages must be 2 to 8, got " + Twine(stages));
    if (sharedBytes() > kMaxSharedBytesPerBlock)
      return bad(Twine(stages) + " stages of " + Twine(stageBytes()) +
                 " bytes need " + Twine(sharedBytes()) +
                 " bytes of shared memory, over the " +
                 Twine(kMaxSharedBytesPerBlock) + " a block may hold");
    return success();
  }

  /// Thread 0 of warpgroup 0: every slice of A and B into the ring.
  void produce(Emitter &e, StageRing &ring, Value aMap, Value bMap,
               Value tiles) {
    Value slices = e.idx(k / kSliceDepth);
    e.forLoop(e.idx(0), slices, e.idx(1), [&](Value i) {
      Value s = ring.acquire(i, stageBytes());
      Value k0 = e.mul(i, kSliceDepth);
      Value base = e.mul(s, stageBytes());
      Value aDst = elementPointer(e, tiles, {base}, /*space=*/3);
      Value bDst =
          elementPointer(e, tiles, {e.add(base, e.idx(m * kRowBytes))}, 3);
      // Coordinates innermost first: (k, row).
      copyTmaBox(e, aMap, aDst, ring.full(s), {k0, e.idx(0)});
      copyTmaBox(e, bMap, bDst, ring.full(s), {k0, e.idx(0)});
    });
  }

  /// Consumer warpgroup `group`: its 64 rows of A B^T, then C.
  void consume(Emitter &e, StageRing &ring, Value tiles, Value group, Value c) {
    Value d = wgmmaZeroAccumulators(e, n);
    Value tilesAt = memref::ExtractAlignedPointerAsIndexOp::create(e.b, tiles);
    auto shape = NVVM::MMAShapeAttr::get(e.b.getContext(), 64, n, 16);
    Value slices = e.idx(k / kSliceDepth);
    d = e.forLoop(e.idx(0), slices, e.idx(1), {d},
                  [&](Value i, ValueRange cur) -> SmallVector<Value> {
                    ring.waitFull(i);
                    Value base =
                        e.add(tilesAt, e.mul(ring.stage(i), stageBytes()));
                    Value aRows = e.add(base, e.mul(group, 64 * kRowBytes));
                    Value bRows = e.add(base, e.idx(m * kRowBytes));
                    Value acc = cur[0];
                    NVVM::WgmmaFenceAlignedOp::create(e.b);
                    for (int64_t ks = 0; ks < kSliceDepth; ks += 16) {
                      Value step = e.idx(2 * ks); // bytes of bf16 into the row
                      acc = NVVM::WgmmaMmaAsyncOp::create(
                          e.b, acc.getType(), acc,
                          swizzledKMajorDescriptor(e, e.add(aRows, step)),
                          swizzledKMajorDescriptor(e, e.add(bRows, step)),
                          shape, NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::bf16,
                          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
                          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
                          NVVM::MMALayout::row, NVVM::MMALayout::col,
                          /*satfinite=*/nullptr);
                    }
                    NVVM::WgmmaGroupSyncAlignedOp::create(e.b);
                    // The previous slice's group is done: its stage goes back.
                    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 1);
                    e.ifThen(e.lt(e.idx(0), i),
                             [&] { ring.release(e.sub(i, e.idx(1))); });
                    return {acc};
                  })[0];
    NVVM::WgmmaWaitGroupSyncOp::create(e.b, 0);

    // Warp w of the group holds rows 64 group + 16 (w % 4) ..
    Value lane = e.laneId();
    Value warp = e.rem(e.div(e.threadId(), e.idx(32)), e.idx(4));
    Value row0 =
        e.add(e.add(e.mul(group, 64), e.mul(warp, 16)), e.div(lane, e.idx(4)));
    Value col0 = e.mul(e.rem(lane, e.idx(4)), 2);
    SmallVector<Value> fragments = wgmmaFragments(e, d, n / 8);
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t col = 0; col < 2; ++col) {
          Value v = vector::ExtractOp::create(e.b, fragments[j],
                                              ArrayRef<int64_t>{r, col});
          e.store(v, c,
                  {e.add(row0, e.idx(8 * r)), e.add(col0, e.idx(8 * j + col))});
        }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions(module)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    auto gpuModule = createKernelModule(b, module, "sm_90a", "+ptx80");

    // A (m x k) and B (n x k) by tensor maps (pointers to their 128-byte
    // CUtensorMap in global memory; boxes of 64 k x all rows, 128-byte
    // swizzle), C (m x n) f32.
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto cType = MemRefType::get({m, n}, b.getF32Type());
    auto func = createTestKernel(b, gpuModule, "pipelined_product",
                                 {ptr, ptr, cType}, threads(),
                                 /*setsMaxRegisters=*/true);

    KernelFunc kernel;
    kernel.func = func;
    kernel.useSharedArena();
    Emitter e(b);
    Value tiles =
        kernel.sharedBufferAligned(stages * stageBytes(), kSwizzleAlign);
    StageRing ring(e, kernel, stages, kGroupThreads * consumers());
    Value tid = e.threadId();
    e.ifThen(e.eq(tid, e.idx(0)), [&] { ring.init(); });
    e.barrier();

    Value group = e.div(tid, e.idx(kGroupThreads));
    Value aMap = func.getArgument(0), bMap = func.getArgument(1);
    Value producer = e.eq(group, e.idx(0));
    e.ifThen(producer, [&] {
      NVVM::SetMaxRegisterOp::create(e.b, kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
      e.ifThen(e.eq(tid, e.idx(0)),
               [&] { produce(e, ring, aMap, bMap, tiles); });
    });
    e.ifThen(e.lt(e.idx(0), group), [&] {
      NVVM::SetMaxRegisterOp::create(e.b, kConsumerRegisters,
                                     NVVM::SetMaxRegisterAction::increase);
      consume(e, ring, tiles, e.sub(group, e.idx(1)), func.getArgument(2));
    });
    // On the module, where it outlives gpu-module-to-binary.
    module->setAttr("ssd.shared_memory",
                    b.getI64IntegerAttr(kernel.sharedBytes()));
  }
};

} // namespace
