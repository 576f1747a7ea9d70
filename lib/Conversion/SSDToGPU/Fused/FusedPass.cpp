//===- FusedPass.cpp - the convert-ssd-fused-to-gpu pass ------------------===//
//
// Fused strategy: analyse the function's ssd.fused, build the one
// persistent kernel `ssd_fused` into gpu.module @ssd_kernels, describe its
// launch in `ssd.launch`, erase the function.
//
//===----------------------------------------------------------------------===//
#include "../WarpSpecialized/WarpSpecializedLayer.h"
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

  /// Whether the option `name` holds one of `choices`; reports it if not.
  static bool isOneOf(ModuleOp module, StringRef name, StringRef value,
                      ArrayRef<StringRef> choices) {
    if (llvm::is_contained(choices, value))
      return true;
    InFlightDiagnostic diag = module.emitError();
    diag << "convert-ssd-fused-to-gpu: " << name << " must be ";
    for (auto [i, choice] : llvm::enumerate(choices))
      diag << (i == 0                    ? ""
               : i + 1 == choices.size() ? " or "
                                         : ", ")
           << "'" << choice << "'";
    diag << ", got '" << value << "'";
    return false;
  }

  /// Whether the chip is sm_90a, which `setting` needs; reports it if not.
  bool onHopper(ModuleOp module, StringRef setting) {
    if (chip == "sm_90a")
      return true;
    module.emitError() << "convert-ssd-fused-to-gpu: " << setting
                       << " needs chip sm_90a, got '" << chip << "'";
    return false;
  }

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
    if (!isOneOf(module, "mma", mma, {"mma.sync", "wgmma"}) ||
        (mma == "wgmma" && !onHopper(module, "mma=wgmma")) ||
        !isOneOf(module, "state-mma", stateMma,
                 {"auto", "mma.sync", "wgmma"}) ||
        (stateMma == "wgmma" && !onHopper(module, "state-mma=wgmma")) ||
        !isOneOf(module, "copy", copy, {"auto", "cp.async", "tma"}) ||
        (copy == "tma" && !onHopper(module, "copy=tma")))
      return signalPassFailure();
    if (cluster != 1 && cluster != 2) {
      module.emitError() << "convert-ssd-fused-to-gpu: cluster must be 1 or "
                            "2, got "
                         << static_cast<int64_t>(cluster);
      return signalPassFailure();
    }
    if (cluster == 2 && !onHopper(module, "cluster=2"))
      return signalPassFailure();
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
    if (!isOneOf(module, "warp-specialized", warpSpecialized,
                 {"auto", "always", "never"}) ||
        !isOneOf(module, "warp-specialized-y", warpSpecializedY,
                 {"auto", "stage", "tiles"}))
      return signalPassFailure();
    if (warpSpecializedPieces < 0 || warpSpecializedPieces > 64) {
      module.emitError() << "convert-ssd-fused-to-gpu: warp-specialized-pieces "
                            "must be 0 (chosen at launch) to 64, got "
                         << static_cast<int64_t>(warpSpecializedPieces);
      return signalPassFailure();
    }
    warp_specialized::LayerLayout layout{
        warpSpecializedStages, warpSpecializedPublishedBuffers,
        warpSpecializedY == "auto"
            ? std::nullopt
            : std::optional<bool>(warpSpecializedY == "stage"),
        warpSpecializedPanelMaps, warpSpecializedPieceHeads};
    if (std::string problem = warp_specialized::unsupportedLayout(layout);
        !problem.empty()) {
      module.emitError() << "convert-ssd-fused-to-gpu: " << problem;
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
    // The warp-specialised kernels instead of the persistent one, where
    // the layer allows them and they are asked for (not with profile,
    // which records the persistent kernel's items): with pieces they were
    // faster at every shape measured (bench/NOTES-fused-gpu.md).
    std::string wsUnsupported =
        warp_specialized::unsupportedLayer(plan->p, chip, layout);
    if (warpSpecialized == "always" && !wsUnsupported.empty()) {
      module.emitError() << "convert-ssd-fused-to-gpu: warp-specialized="
                            "always, but the warp-specialised kernel cannot "
                            "take the layer: "
                         << wsUnsupported;
      return signalPassFailure();
    }
    // Packed sequences (cu_seqlens) too: 2.0x to 3.2x faster than the
    // persistent kernel at one sequence of 16K tokens and eight of 2K and
    // 16K on the H100 (bench/NOTES-fused-gpu.md).
    bool asked = warpSpecialized != "never";
    bool warpSpecializedOnly = asked && !profile && wsUnsupported.empty();
    if (std::string why =
            warp_specialized::unsupportedPieceHeads(plan->p, layout);
        warpSpecializedOnly && !why.empty()) {
      module.emitError() << "convert-ssd-fused-to-gpu: " << why;
      return signalPassFailure();
    }

    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder b(plan->p.func.getLoc(), ctx);
    auto gpuModule = createKernelModule(b, module, chip, features);
    SmallVector<KernelInfo> kernels;
    if (warpSpecializedOnly) {
      // None of the persistent kernel's workspaces, counters or derived
      // symbols (its state chain's; the tensors' sizes are b and L alone
      // without cu_seqlens).
      llvm::erase_if(plan->p.buffers,
                     [](const BufferSpec &s) { return s.isWorkspace; });
      plan->zeroInit.clear();
      plan->p.derived.clear();
      warp_specialized::addPieceWorkspaces(plan->p, warpSpecializedPieces,
                                           layout);
      kernels =
          warp_specialized::buildLayerKernels(b, gpuModule, plan->p, layout);
    } else {
      kernels = fused::buildFusedKernels(b, gpuModule, *plan);
    }
    module->setAttr("ssd.launch",
                    fused::buildFusedLaunchAttr(ctx, *plan, kernels));
    if (!keepFunc)
      plan->p.func.erase();
  }
};

} // namespace
