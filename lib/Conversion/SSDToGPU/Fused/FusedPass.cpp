//===- FusedPass.cpp - the convert-ssd-fused-to-gpu pass ------------------===//
//
// Fused strategy: analyse the function's ssd.fused, build the one
// persistent kernel `ssd_fused` into gpu.module @ssd_kernels, describe its
// launch in `ssd.launch`, erase the function.
//
//===----------------------------------------------------------------------===//
#include "FusedKernel.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

namespace ssd {
#define GEN_PASS_DEF_CONVERTSSDFUSEDTOGPU
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;

namespace {

struct ConvertSSDFusedToGPUPass
    : ssd::impl::ConvertSSDFusedToGPUBase<ConvertSSDFusedToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (pBlock <= 0 || !llvm::isPowerOf2_64(static_cast<uint64_t>(pBlock))) {
      module.emitError() << "convert-ssd-fused-to-gpu: p-block must be a "
                            "positive power of two, got "
                         << static_cast<int64_t>(pBlock);
      return signalPassFailure();
    }
    std::optional<fused::StateChain> chain = fused::parseStateChain(stateChain);
    if (!chain) {
      module.emitError() << "convert-ssd-fused-to-gpu: state-chain must be "
                            "'chunk', 'segment', 'lookback' or 'auto', got '"
                         << stateChain << "'";
      return signalPassFailure();
    }
    if (mma != "mma.sync" && mma != "wgmma") {
      module.emitError() << "convert-ssd-fused-to-gpu: mma must be "
                            "'mma.sync' or 'wgmma', got '"
                         << mma << "'";
      return signalPassFailure();
    }
    if (mma == "wgmma" && chip != "sm_90a") {
      module.emitError() << "convert-ssd-fused-to-gpu: mma=wgmma needs chip "
                            "sm_90a, got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (stateMma != "auto" && stateMma != "mma.sync" && stateMma != "wgmma") {
      module.emitError() << "convert-ssd-fused-to-gpu: state-mma must be "
                            "'auto', 'mma.sync' or 'wgmma', got '"
                         << stateMma << "'";
      return signalPassFailure();
    }
    if (stateMma == "wgmma" && chip != "sm_90a") {
      module.emitError() << "convert-ssd-fused-to-gpu: state-mma=wgmma needs "
                            "chip sm_90a, got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (copy != "auto" && copy != "cp.async" && copy != "tma") {
      module.emitError() << "convert-ssd-fused-to-gpu: copy must be "
                            "'auto', 'cp.async' or 'tma', got '"
                         << copy << "'";
      return signalPassFailure();
    }
    if (copy == "tma" && chip != "sm_90a") {
      module.emitError() << "convert-ssd-fused-to-gpu: copy=tma needs chip "
                            "sm_90a, got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (cluster != 1 && cluster != 2) {
      module.emitError() << "convert-ssd-fused-to-gpu: cluster must be 1 or "
                            "2, got "
                         << static_cast<int64_t>(cluster);
      return signalPassFailure();
    }
    if (cluster == 2 && chip != "sm_90a") {
      module.emitError() << "convert-ssd-fused-to-gpu: cluster=2 needs chip "
                            "sm_90a, got '"
                         << chip << "'";
      return signalPassFailure();
    }
    if (foldLoadsAhead < 0 || foldLoadsAhead > fused::kMaxFoldLoadsAhead) {
      module.emitError() << "convert-ssd-fused-to-gpu: fold-loads-ahead must "
                            "be 0 (the fold's default) or 1 to "
                         << fused::kMaxFoldLoadsAhead << ", got "
                         << static_cast<int64_t>(foldLoadsAhead);
      return signalPassFailure();
    }
    if (fold != "auto" && fold != "pieces" && fold != "vectors") {
      module.emitError() << "convert-ssd-fused-to-gpu: fold must be auto, "
                            "pieces or vectors, got '"
                         << fold << "'";
      return signalPassFailure();
    }
    if (profile && stateChain == "segment") {
      module.emitError() << "convert-ssd-fused-to-gpu: profile records the "
                            "per-chunk chain items: it needs state-chain "
                            "'chunk', got 'segment'";
      return signalPassFailure();
    }
    FailureOr<fused::FusedPlan> plan = fused::analyzeFused(module, pBlock);
    if (failed(plan))
      return signalPassFailure();
    plan->p.useMma = tensorCores;
    // Segments would straddle sequences in a varlen row.
    bool segmentsFit =
        *chain != fused::StateChain::Segment || !plan->p.isVarlen();
    plan->chain = segmentsFit ? *chain : fused::StateChain::Chunk;
    plan->mma = mma == "wgmma" ? MmaInstr::Wgmma : MmaInstr::MmaSync;
    if (stateMma != "auto")
      plan->stateMma =
          stateMma == "wgmma" ? MmaInstr::Wgmma : MmaInstr::MmaSync;
    // auto: TMA wherever the chip has it (measured 7-8% faster on the H200
    // at 16K and 128K tokens, outputs bitwise equal; bench/NOTES-fused-gpu.md).
    bool tma = copy == "tma" || (copy == "auto" && chip == "sm_90a");
    plan->copy = tma ? CopyInstr::Tma : CopyInstr::CpAsync;
    plan->cluster = cluster;
    plan->foldLoadsAhead = foldLoadsAhead;
    plan->fold = fold;
    std::string clusterProblem = fused::clusterUnsupported(*plan);
    if (!clusterProblem.empty()) {
      module.emitError() << "convert-ssd-fused-to-gpu: " << clusterProblem;
      return signalPassFailure();
    }
    fused::sizeStateSlots(*plan);
    if (fused::chooseKernelConfig(*plan).lookBack())
      fused::addLookBackWorkspaces(*plan);
    if (profile)
      fused::addProfileWorkspace(*plan);
    fused::dropUnreadCumsums(*plan);

    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(plan->p.func.getLoc(), ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto target = NVVM::NVVMTargetAttr::get(
        ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", chip, features);
    auto gpuModule =
        gpu::GPUModuleOp::create(b, "ssd_kernels", b.getArrayAttr({target}));
    SmallVector<KernelInfo> kernels =
        fused::buildFusedKernels(b, gpuModule, *plan);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    module->setAttr("ssd.launch",
                    fused::buildFusedLaunchAttr(ctx, *plan, kernels));
    if (!keepFunc)
      plan->p.func.erase();
  }
};

} // namespace
