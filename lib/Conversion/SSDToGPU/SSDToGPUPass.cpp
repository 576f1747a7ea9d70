//===- SSDToGPUPass.cpp - the convert-ssd-to-gpu pass ---------------------===//
//
// Unfused strategy: analyse the function, build one kernel per step into
// gpu.module @ssd_kernels (in launch order), describe the launches in
// `ssd.launch`, erase the function.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace ssd {
#define GEN_PASS_DEF_CONVERTSSDTOGPU
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;

namespace {

struct ConvertSSDToGPUPass
    : ssd::impl::ConvertSSDToGPUBase<ConvertSSDToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<SSDProblem> problem = analyzeProblem(module);
    if (failed(problem))
      return signalPassFailure();
    problem->useMma = tensorCores;

    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(problem->func.getLoc(), ctx);
    auto gpuModule = createKernelModule(b, module, chip, features);
    SmallVector<KernelInfo> kernels = {
        buildChunkCumsumKernel(b, gpuModule, *problem),
        buildBmmKernel(b, gpuModule, *problem),
        buildChunkStateKernel(b, gpuModule, *problem),
        buildStatePassingKernel(b, gpuModule, *problem),
        buildChunkScanKernel(b, gpuModule, *problem)};
    module->setAttr("ssd.launch", buildLaunchAttr(ctx, *problem, kernels));
    if (!keepFunc)
      problem->func.erase();
  }
};

} // namespace
