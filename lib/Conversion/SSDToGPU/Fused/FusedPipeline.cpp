//===- FusedPipeline.cpp - ssd-gpu-fused-pipeline -------------------------===//
//
// ssd-decompose -> ssd-fuse -> convert-ssd-fused-to-gpu -> the NVVM and
// binary tail shared with the unfused pipeline (buildGPUKernelsToBinary).
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/SSDToGPU/Passes.h"
#include "ssd/Conversion/SSDToGPU/Pipeline.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct FusedPipelineCLOptions
    : public PassPipelineOptions<FusedPipelineCLOptions> {
  Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Chunk size for ssd-decompose (0 keeps the op's)"),
      llvm::cl::init(0)};
  Option<int64_t> pBlock{
      *this, "p-block",
      llvm::cl::desc("Headdim rows per work item, a power of two dividing "
                     "headdim (0: the lowering's choice)"),
      llvm::cl::init(0)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: bin (cubin), isa (PTX), "
                     "fatbin, llvm; none stops before serialisation"),
      llvm::cl::init("bin")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("Optimisation level"),
                       llvm::cl::init(3)};
  Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("mma.sync for bf16/f16 matrix products"),
      llvm::cl::init(true)};
};

} // namespace

void ssd::buildGPUFusedPipeline(OpPassManager &pm,
                                const GPUPipelineOptions &options,
                                int64_t pBlock) {
  pm.addPass(createSSDDecompose(SSDDecomposeOptions{options.chunkSize}));
  SSDFuseOptions fuse;
  fuse.pBlock = pBlock;
  pm.addPass(createSSDFuse(fuse));
  ConvertSSDFusedToGPUOptions convert;
  convert.chip = options.chip;
  convert.features = options.features;
  convert.tensorCores = options.tensorCores;
  pm.addPass(createConvertSSDFusedToGPU(convert));
  buildGPUKernelsToBinary(pm, options);
}

void ssd::registerGPUFusedPipeline() {
  PassPipelineRegistration<FusedPipelineCLOptions>(
      "ssd-gpu-fused-pipeline",
      "Compile a function with ssd.combined (or the step ops) to a gpu.binary "
      "of ONE persistent kernel (ssd.fused) and the ssd.launch description",
      [](OpPassManager &pm, const FusedPipelineCLOptions &cl) {
        GPUPipelineOptions options;
        options.chunkSize = cl.chunkSize;
        options.chip = cl.chip;
        options.features = cl.features;
        options.format = cl.format;
        options.optLevel = cl.optLevel;
        options.tensorCores = cl.tensorCores;
        ssd::buildGPUFusedPipeline(pm, options, cl.pBlock);
      });
}
