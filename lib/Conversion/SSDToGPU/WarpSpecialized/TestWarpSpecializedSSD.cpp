//===- TestWarpSpecializedSSD.cpp - the warp-specialised SSD alone --------===//
//
// ssd-test-warp-specialized-ssd builds the warp-specialised kernel
// (WarpSpecializedSSD.h) as `warp_specialized_ssd` from the pass's options
// alone, with the Mamba-2 layer's dt rule (softplus(dt + bias)), D and
// initial states, so that scripts/device/run_warp_specialized_ssd.py runs
// it on the GPU against a float64 reference, apart from the layer's
// compiler and runtime.
//
//===----------------------------------------------------------------------===//
#include "WarpSpecializedSSD.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace ssd {
#define GEN_PASS_DEF_TESTWARPSPECIALIZEDSSD
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;
namespace ws = ssd::gpu_lowering::warp_specialized;

namespace {

struct TestWarpSpecializedSSDPass
    : ssd::impl::TestWarpSpecializedSSDBase<TestWarpSpecializedSSDPass> {
  using Base::Base;

  ws::Shape shape() {
    ws::Shape s;
    // The kernels take bf16 x, B and C (the softplus form follows it).
    s.dtRule.elementType = BFloat16Type::get(&getContext());
    s.heads = heads;
    s.headDim = headdim;
    s.groups = groups;
    s.stages = stages;
    s.outputGroups = outputGroups;
    s.publishedBuffers = publishedBuffers;
    s.yInStage = yInStage;
    s.panelMaps = panelMaps;
    s.dtRule.softplus = true;
    s.dtRule.dtHigh = std::numeric_limits<double>::infinity();
    return s;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto bad = [&](const Twine &why) {
      module.emitError() << "ssd-test-warp-specialized-ssd: " << why;
      signalPassFailure();
    };
    if (batch < 1)
      return bad("batch must be positive, got " + Twine(batch));
    if (seqlen < 1)
      return bad("seqlen must be positive, got " + Twine(seqlen));
    std::string why = ws::unsupportedShape(shape());
    if (!why.empty())
      return bad(why);

    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    auto gpuModule = createKernelModule(b, module, "sm_90a", "+ptx80");
    // Four tensor maps (pointers to their CUtensorMaps in global memory,
    // dimensions as WarpSpecializedSSD.h says), A, dt's bias and D
    // [heads], the initial states [batch][heads][headdim][128] f32, y
    // [batch][seqlen][heads][headdim] bf16 and the final states f32.
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type f32 = b.getF32Type();
    auto headType = MemRefType::get({heads}, f32);
    auto yType =
        MemRefType::get({batch, seqlen, heads, headdim}, b.getBF16Type());
    auto statesType = MemRefType::get({batch, heads, headdim, ws::kState}, f32);
    ws::Shape s = shape();
    auto func = createTestKernel(b, gpuModule, "warp_specialized_ssd",
                                 {ptr, ptr, ptr, ptr, headType, headType,
                                  headType, statesType, yType, statesType},
                                 ws::blockThreads(s), /*setsMaxRegisters=*/true);
    KernelFunc kernel;
    kernel.func = func;
    auto arg = [&](unsigned i) { return func.getArgument(i); };
    ws::emitKernel(b, kernel, s,
                   {arg(0), arg(1), arg(2), arg(3), arg(4), arg(5), arg(6),
                    arg(7), arg(8), arg(9)});
    // On the module, where it outlives gpu-module-to-binary.
    module->setAttr("ssd.shared_memory",
                    b.getI64IntegerAttr(kernel.sharedBytes()));
  }
};

} // namespace
