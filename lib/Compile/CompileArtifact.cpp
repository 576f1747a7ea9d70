//===- CompileArtifact.cpp - lower an SSD layer and write the artifact ----===//
#include "ssd/Compile/Artifact.h"

#include "ssd/Compile/Context.h"
#include "ssd/Compile/LayerModule.h"
#include "ssd/Support/FileBatch.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ssd;

/// The registered names of the GPU pipelines.
static constexpr llvm::StringLiteral kUnfusedPipeline = "ssd-gpu-unfused-pipeline";
static constexpr llvm::StringLiteral kFusedPipeline = "ssd-gpu-fused-pipeline";

static CompileError usage(std::string message) { return {std::move(message), true}; }
static CompileError compilerError(std::string message) {
  return {std::move(message), false};
}

namespace {
/// Notes whether a conversion to the GPU refused the layer. Those passes
/// fail only to refuse what they cannot lower (a size past a limit, an
/// option the layer cannot take), which is the request's problem; a later
/// pass's failure is the compiler's.
struct LoweringRefusal : PassInstrumentation {
  bool refused = false;
  void runAfterPassFailed(Pass *pass, Operation *) override {
    llvm::StringRef name = pass->getArgument();
    refused = refused || name == "convert-ssd-fused-to-gpu" ||
              name == "convert-ssd-to-gpu";
  }
};
} // namespace

static std::optional<CompileError> runPipeline(ModuleOp module,
                                               const CompileOptions &options) {
  llvm::StringRef strategy = options.strategy;
  llvm::StringRef name =
      strategy == "fused" ? kFusedPipeline : kUnfusedPipeline;
  const PassPipelineInfo *pipeline = PassPipelineInfo::lookup(name);
  if (!pipeline)
    return usage("--strategy " + strategy.str() + ": the GPU pipeline (" +
                 name.str() + ") is not built into this ssd-compile");
  PassManager pm(module->getContext());
  std::string optionError;
  // The fused pipeline's options, each given only where its flag was.
  std::string pipelineOptions;
  struct FusedFlag {
    bool given;
    const char *flag, *option;
    std::string value;
  } fusedFlags[] = {
      {!options.stateChain.empty(), "--state-chain", "state-chain",
       options.stateChain},
      {!options.mma.empty(), "--mma", "mma", options.mma},
      {!options.stateMma.empty(), "--state-mma", "state-mma", options.stateMma},
      {!options.copy.empty(), "--copy", "copy", options.copy},
      {options.pBlock != 0, "--p-block", "p-block",
       std::to_string(options.pBlock)},
      {options.profile, "--profile", "profile", "true"},
      {options.cluster != 0, "--cluster", "cluster",
       std::to_string(options.cluster)},
      {options.foldLoadsAhead != 0, "--fold-loads-ahead", "fold-loads-ahead",
       std::to_string(options.foldLoadsAhead)},
      {!options.fold.empty(), "--fold", "fold", options.fold},
      {!options.warpSpecialized.empty(), "--warp-specialized",
       "warp-specialized", options.warpSpecialized},
      {options.warpSpecializedPieces != 0, "--warp-specialized-pieces",
       "warp-specialized-pieces",
       std::to_string(options.warpSpecializedPieces)},
      {options.warpSpecializedStages != 0, "--warp-specialized-stages",
       "warp-specialized-stages",
       std::to_string(options.warpSpecializedStages)},
      {options.warpSpecializedPublishedBuffers != 0,
       "--warp-specialized-published-buffers",
       "warp-specialized-published-buffers",
       std::to_string(options.warpSpecializedPublishedBuffers)},
      {options.warpSpecializedPieceHeads != 0, "--warp-specialized-piece-heads",
       "warp-specialized-piece-heads",
       std::to_string(options.warpSpecializedPieceHeads)},
      {!options.warpSpecializedY.empty(), "--warp-specialized-y",
       "warp-specialized-y", options.warpSpecializedY},
      {options.warpSpecializedPanelMaps, "--warp-specialized-panel-maps",
       "warp-specialized-panel-maps", "true"},
  };
  for (const FusedFlag &flag : fusedFlags) {
    if (!flag.given)
      continue;
    if (strategy != "fused")
      return usage(std::string(flag.flag) +
                   " applies to the fused strategy only");
    pipelineOptions += (pipelineOptions.empty() ? "" : " ") +
                       std::string(flag.option) + "=" + flag.value;
  }
  if (failed(pipeline->addToPipeline(pm, pipelineOptions,
                                     [&](const llvm::Twine &msg) {
        optionError = msg.str();
        return failure();
      })))
    return compilerError(name.str() + ": " + optionError);
  auto refusal = std::make_unique<LoweringRefusal>();
  LoweringRefusal *watch = refusal.get();
  pm.addInstrumentation(std::move(refusal));
  if (failed(pm.run(module)))
    return watch->refused ? usage("the GPU lowering cannot take this layer")
                          : compilerError("the GPU lowering failed");
  return std::nullopt;
}

std::optional<CompileError>
ssd::compileModule(ModuleOp module, std::optional<LayerSpec> spec,
                   const CompileOptions &options, const std::string &outDir) {
  if (options.target == "cpu")
    return usage("--target cpu: not supported yet (ssd-run --backend cpu "
                 "compiles for the CPU on the spot)");
  if (options.target != "sm_90a")
    return usage("--target: unknown target '" + options.target +
                 "' (expected sm_90a or cpu)");
  if (options.strategy != "unfused" && options.strategy != "fused")
    return usage("--strategy: unknown strategy '" + options.strategy +
                 "' (expected fused or unfused)");

  if (!spec) {
    std::string error;
    spec = layerSpecOfModule(module, error);
    if (!spec)
      return usage(error);
  }
  if (std::string error = validateLayerSpec(*spec); !error.empty())
    return usage(error);
  // The fuse pass falls back to its own choice for a p-block that does not
  // divide headdim; a block asked for by name must not be dropped silently.
  if (options.pBlock && spec->headdim % options.pBlock != 0)
    return usage("--p-block " + std::to_string(options.pBlock) +
                 " does not divide headdim " + std::to_string(spec->headdim));

  if (!options.fromLowered) {
    if (failed(verify(module)))
      return usage("the input module does not verify");
    if (std::optional<CompileError> err = runPipeline(module, options))
      return err;
  }

  std::string error, chip;
  std::optional<std::vector<char>> cubin = extractCubin(module, chip, error);
  if (!cubin)
    return compilerError(error);
  if (chip != options.target)
    return compilerError("the kernels were compiled for " + chip + ", not for " +
                   options.target);
  std::optional<std::string> manifest =
      writeManifest(module, *spec, options, chip, error);
  if (!manifest)
    return compilerError(error);

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return usage(outDir + ": cannot create directory: " + ec.message());
  llvm::SmallString<256> cubinPath(outDir), manifestPath(outDir);
  llvm::sys::path::append(cubinPath, "kernels.cubin");
  llvm::sys::path::append(manifestPath, "manifest.json");
  // Both files or neither: no cubin without its manifest.
  FileBatch files;
  files.add(std::string(cubinPath),
            std::vector<uint8_t>(cubin->begin(), cubin->end()));
  files.add(std::string(manifestPath),
            std::vector<uint8_t>(manifest->begin(), manifest->end()));
  std::string failed;
  if (!files.commit(failed, error))
    return usage(failed + ": " + error);
  return std::nullopt;
}

std::optional<CompileError> ssd::compileLayer(const LayerSpec &spec,
                                              const CompileOptions &options,
                                              const std::string &outDir) {
  if (std::string error = validateLayerSpec(spec); !error.empty())
    return usage(error);
  CompileContext context;
  OwningOpRef<ModuleOp> module = buildLayerModule(
      context.get(), spec, LayerShape(), LayerABI::Tensor, "ssd_layer",
      UnknownLoc::get(&context.get()));
  std::optional<CompileError> err =
      compileModule(*module, spec, options, outDir);
  if (err)
    err->message = context.describe(err->message);
  return err;
}

std::string ssd::compileArtifact(const LayerSpec &spec,
                                 const CompileOptions &options,
                                 const std::string &outDir) {
  std::optional<CompileError> err = compileLayer(spec, options, outDir);
  return err ? err->message : "";
}
