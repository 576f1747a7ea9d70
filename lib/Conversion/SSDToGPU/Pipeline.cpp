//===- Pipeline.cpp - ssd-gpu-unfused-pipeline ----------------------------===//
//
// ssd-decompose -> convert-ssd-to-gpu -> the NVVM lowering of the kernels
// (the device half of upstream's gpu-lower-to-nvvm-pipeline, in its order,
// with 64-bit index arithmetic) -> gpu-module-to-binary. There is no host
// half: the runtime launches the kernels from `ssd.launch`.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/SSDToGPU/Pipeline.h"
#include "PipelineCLOptions.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

struct GPUPipelineCLOptions
    : ssd::GPUPipelineCLOptionsBase<GPUPipelineCLOptions> {};

} // namespace

void ssd::buildGPUUnfusedPipeline(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  pm.addPass(createSSDDecompose(SSDDecomposeOptions{options.chunkSize}));
  ConvertSSDToGPUOptions convert;
  convert.chip = options.chip;
  convert.features = options.features;
  convert.tensorCores = options.tensorCores;
  pm.addPass(createConvertSSDToGPU(convert));
  buildGPUKernelsToBinary(pm, options);
}

void ssd::buildGPUKernelsToBinary(OpPassManager &pm,
                                  const GPUPipelineOptions &options) {
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertIndexToLLVMPassOptions index;
  index.indexBitwidth = 64;
  pm.addPass(createConvertIndexToLLVMPass(index));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 64;
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  device.addPass(createSSDTmaDescriptorsByValue());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  if (options.format.empty() || options.format == "none")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = "/usr/local/cuda";
  binary.cmdOptions = "-O" + std::to_string(options.optLevel);
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void ssd::registerGPUPipelineDependencies(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void ssd::registerGPUKernelsToBinaryPipeline() {
  PassPipelineRegistration<GPUPipelineCLOptions>(
      "ssd-gpu-kernels-to-binary",
      "The tail of the GPU pipelines alone: the NVVM lowering of gpu.module "
      "@ssd_kernels and gpu-module-to-binary (for modules whose kernels are "
      "built already, e.g. by ssd-test-tile-product)",
      [](OpPassManager &pm, const GPUPipelineCLOptions &cl) {
        ssd::buildGPUKernelsToBinary(pm, cl.toOptions());
      });
}

void ssd::registerGPUUnfusedPipeline() {
  PassPipelineRegistration<GPUPipelineCLOptions>(
      "ssd-gpu-unfused-pipeline",
      "Compile a function with ssd.combined (or the step ops) to a gpu.binary "
      "of five kernels (one per step) and the ssd.launch description",
      [](OpPassManager &pm, const GPUPipelineCLOptions &cl) {
        ssd::buildGPUUnfusedPipeline(pm, cl.toOptions());
      });
}
