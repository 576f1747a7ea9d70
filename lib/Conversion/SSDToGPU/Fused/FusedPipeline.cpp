//===- FusedPipeline.cpp - ssd-gpu-fused-pipeline -------------------------===//
//
// ssd-decompose -> ssd-fuse -> convert-ssd-fused-to-gpu -> the NVVM and
// binary tail shared with the unfused pipeline (buildGPUKernelsToBinary).
//
//===----------------------------------------------------------------------===//
#include "../PipelineCLOptions.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"
#include "ssd/Conversion/SSDToGPU/Pipeline.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct FusedPipelineCLOptions
    : ssd::GPUPipelineCLOptionsBase<FusedPipelineCLOptions> {
  Option<int64_t> pBlock{
      *this, "p-block",
      llvm::cl::desc("Headdim rows per work item, a power of two dividing "
                     "headdim (0: the lowering's choice)"),
      llvm::cl::init(0)};
  Option<std::string> stateChain{
      *this, "state-chain",
      llvm::cl::desc("auto (the default: a lookback kernel and a chunk kernel, "
                     "the runtime launching lookback where few chains run "
                     "at once), chunk (one chain step per chunk), lookback "
                     "(per chunk, a decoupled look-back over the chunk "
                     "states) or segment (the state carried on chip through "
                     "segments of chunks)"),
      llvm::cl::init("auto")};
  Option<std::string> mma{
      *this, "mma",
      llvm::cl::desc("Tensor-core instruction of the chain item's products: "
                     "mma.sync or wgmma (sm_90a)"),
      llvm::cl::init("mma.sync")};
  Option<std::string> stateMma{
      *this, "state-mma",
      llvm::cl::desc("Tensor-core instruction of the chunk-state product: "
                     "auto (wgmma with TMA rows and dstate 128, mma.sync "
                     "with cp.async rows, else as mma), mma.sync or wgmma "
                     "(sm_90a)"),
      llvm::cl::init("auto")};
  Option<std::string> copy{
      *this, "copy",
      llvm::cl::desc("How the chain item's x, B and C rows reach shared "
                     "memory: auto (tma on sm_90a), cp.async or tma"),
      llvm::cl::init("auto")};
  Option<int64_t> cluster{
      *this, "cluster",
      llvm::cl::desc("Blocks of a thread block cluster: 1 (none) or 2 "
                     "(sm_90a, TMA rows: B and C panels multicast to both "
                     "blocks of a pair of chain items)"),
      llvm::cl::init(1)};
  Option<int64_t> foldLoadsAhead{
      *this, "fold-loads-ahead",
      llvm::cl::desc("Pieces or vectors (see fold) a thread of the turn "
                     "chain's fold loads ahead of its stores, 1 to 8; 0: by "
                     "the fold (4 pieces for f32 states, 2 vectors for f16)"),
      llvm::cl::init(0)};
  Option<std::string> fold{
      *this, "fold",
      llvm::cl::desc("How the chain's fold (turns and look-back) walks the "
                     "state slots: auto "
                     "(pieces with f32 states, vectors with f16), pieces "
                     "(16-byte pieces in slot order) or vectors (the "
                     "chunk-state product's 8-column vectors)"),
      llvm::cl::init("auto")};
  Option<std::string> warpSpecialized{
      *this, "warp-specialized",
      llvm::cl::desc("The warp-specialised kernels instead of the "
                     "persistent one: auto (for the layers they take; the "
                     "default), always (an error for others) or never"),
      llvm::cl::init("auto")};
  Option<int64_t> warpSpecializedPieces{
      *this, "warp-specialized-pieces",
      llvm::cl::desc("Pieces the warp-specialised kernel cuts a sequence "
                     "into, 1 to 64; 0 (the default): chosen at launch"),
      llvm::cl::init(0)};
  Option<int64_t> warpSpecializedStages{
      *this, "warp-specialized-stages",
      llvm::cl::desc("Stages of the warp-specialised kernel's input ring, 2 "
                     "to 4; 0 (the default): 4"),
      llvm::cl::init(0)};
  Option<int64_t> warpSpecializedPublishedBuffers{
      *this, "warp-specialized-published-buffers",
      llvm::cl::desc("Published state buffers of the warp-specialised "
                     "kernel, 1 or 2; 0 (the default): 1"),
      llvm::cl::init(0)};
  Option<int64_t> warpSpecializedPieceHeads{
      *this, "warp-specialized-piece-heads",
      llvm::cl::desc("Heads a piece-states block of the warp-specialised "
                     "kernels walks, 1, 2 or 4; 0 (the default): kernels "
                     "of 1 and of 4 where 4 divide a group's heads, the "
                     "launch picking one, else 1"),
      llvm::cl::init(0)};
  Option<std::string> warpSpecializedY{
      *this, "warp-specialized-y",
      llvm::cl::desc("Where the warp-specialised kernel stages y: stage (in "
                     "the chunk's stage), tiles (of its own) or auto (the "
                     "default: stage)"),
      llvm::cl::init("auto")};
  Option<bool> warpSpecializedPanelMaps{
      *this, "warp-specialized-panel-maps",
      llvm::cl::desc("Copy C and B in one TMA box each through panel maps"),
      llvm::cl::init(false)};
  Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Record the clock at the phase boundaries of every "
                     "chain item in the chain_profile workspace"),
      llvm::cl::init(false)};

  ssd::FusedKernelOptions toKernelOptions() const {
    ssd::FusedKernelOptions kernel;
    kernel.pBlock = pBlock;
    kernel.stateChain = stateChain;
    kernel.mma = mma;
    kernel.stateMma = stateMma;
    kernel.copy = copy;
    kernel.profile = profile;
    kernel.cluster = cluster;
    kernel.foldLoadsAhead = foldLoadsAhead;
    kernel.fold = fold;
    kernel.warpSpecialized = warpSpecialized;
    kernel.warpSpecializedPieces = warpSpecializedPieces;
    kernel.warpSpecializedStages = warpSpecializedStages;
    kernel.warpSpecializedPublishedBuffers = warpSpecializedPublishedBuffers;
    kernel.warpSpecializedPieceHeads = warpSpecializedPieceHeads;
    kernel.warpSpecializedY = warpSpecializedY;
    kernel.warpSpecializedPanelMaps = warpSpecializedPanelMaps;
    return kernel;
  }
};

} // namespace

void ssd::buildGPUFusedPipeline(OpPassManager &pm,
                                const GPUPipelineOptions &options,
                                const FusedKernelOptions &kernel) {
  pm.addPass(createSSDDecompose(SSDDecomposeOptions{options.chunkSize}));
  SSDFuseOptions fuse;
  fuse.pBlock = kernel.pBlock;
  pm.addPass(createSSDFuse(fuse));
  ConvertSSDFusedToGPUOptions convert;
  convert.chip = options.chip;
  convert.features = options.features;
  convert.tensorCores = options.tensorCores;
  convert.stateChain = kernel.stateChain;
  convert.mma = kernel.mma;
  convert.stateMma = kernel.stateMma;
  convert.copy = kernel.copy;
  convert.profile = kernel.profile;
  convert.cluster = kernel.cluster;
  convert.foldLoadsAhead = kernel.foldLoadsAhead;
  convert.fold = kernel.fold;
  convert.warpSpecialized = kernel.warpSpecialized;
  convert.warpSpecializedPieces = kernel.warpSpecializedPieces;
  convert.warpSpecializedStages = kernel.warpSpecializedStages;
  convert.warpSpecializedPublishedBuffers =
      kernel.warpSpecializedPublishedBuffers;
  convert.warpSpecializedPieceHeads = kernel.warpSpecializedPieceHeads;
  convert.warpSpecializedY = kernel.warpSpecializedY;
  convert.warpSpecializedPanelMaps = kernel.warpSpecializedPanelMaps;
  pm.addPass(createConvertSSDFusedToGPU(convert));
  buildGPUKernelsToBinary(pm, options);
}

void ssd::registerGPUFusedPipeline() {
  PassPipelineRegistration<FusedPipelineCLOptions>(
      "ssd-gpu-fused-pipeline",
      "Compile a function with ssd.combined (or the step ops) to a gpu.binary "
      "of ONE persistent kernel (ssd.fused) and the ssd.launch description",
      [](OpPassManager &pm, const FusedPipelineCLOptions &cl) {
        ssd::buildGPUFusedPipeline(pm, cl.toOptions(), cl.toKernelOptions());
      });
}
