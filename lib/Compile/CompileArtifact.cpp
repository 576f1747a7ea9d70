//===- CompileArtifact.cpp - lower an SSD layer and write the artifact ----===//
#include "ssd/Compile/Artifact.h"

#include "ssd/Compile/Context.h"
#include "ssd/Compile/LayerModule.h"

#include "mlir/IR/Verifier.h"
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

/// Writes the artifact's files: every one to a temporary first, then all
/// renamed into place, so a failed run leaves neither a half-written file
/// nor a cubin without its manifest (temporaries are removed on failure).
static std::optional<CompileError>
writeFiles(llvm::ArrayRef<std::pair<std::string, llvm::StringRef>> files) {
  std::vector<std::string> temporaries;
  auto failWith = [&](std::string message) {
    for (const std::string &t : temporaries)
      llvm::sys::fs::remove(t);
    return usage(std::move(message));
  };
  for (const auto &[path, bytes] : files) {
    std::string temporary = path + ".tmp";
    temporaries.push_back(temporary);
    std::error_code ec;
    llvm::raw_fd_ostream os(temporary, ec);
    if (ec)
      return failWith(temporary + ": cannot write: " + ec.message());
    os << bytes;
    os.close();
    if (os.has_error())
      return failWith(temporary + ": write failed: " + os.error().message());
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (std::error_code ec =
            llvm::sys::fs::rename(temporaries[i], files[i].first))
      return failWith(files[i].first + ": cannot write: " + ec.message());
  return std::nullopt;
}

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
  std::string pipelineOptions;
  if (!options.stateChain.empty()) {
    if (strategy != "fused")
      return usage("--state-chain applies to the fused strategy only");
    pipelineOptions = "state-chain=" + options.stateChain;
  }
  if (!options.mma.empty()) {
    if (strategy != "fused")
      return usage("--mma applies to the fused strategy only");
    pipelineOptions += (pipelineOptions.empty() ? "" : " ") +
                       std::string("mma=") + options.mma;
  }
  if (failed(pipeline->addToPipeline(pm, pipelineOptions,
                                     [&](const llvm::Twine &msg) {
        optionError = msg.str();
        return failure();
      })))
    return compilerError(name.str() + ": " + optionError);
  if (failed(pm.run(module)))
    return compilerError("the GPU lowering failed");
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
  return writeFiles(
      {{std::string(cubinPath), llvm::StringRef(cubin->data(), cubin->size())},
       {std::string(manifestPath), *manifest}});
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
