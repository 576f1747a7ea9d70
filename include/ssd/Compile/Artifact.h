//===- Artifact.h - the AOT compiler behind ssd-compile ---------*- C++ -*-===//
//
// Compiles an SSD layer into an artifact directory (docs/runtime.md):
// `kernels.cubin` and `manifest.json` for a GPU target. Embedders call
// compileArtifact; ssd-compile is a thin command line over it.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_COMPILE_ARTIFACT_H
#define SSD_COMPILE_ARTIFACT_H

#include "ssd/Support/LayerSpec.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace ssd {

/// The version ssd-compile writes into manifests.
inline constexpr const char *kCompilerVersion = "0.1.0";

struct CompileOptions {
  std::string target = "sm_90a"; ///< sm_90a or cpu
  std::string strategy = "fused";
  /// The fused kernel's state-chain (chunk, lookback, auto or segment); empty: the
  /// pipeline's default.
  std::string stateChain;
  /// The fused kernel's tensor-core instruction (mma.sync or wgmma); empty:
  /// the pipeline's default.
  std::string mma;
  /// The chunk-state product's instruction (auto, mma.sync or wgmma);
  /// empty: the pipeline's default (auto).
  std::string stateMma;
  /// How the fused kernel copies x, B and C rows (auto, cp.async or tma);
  /// empty: the pipeline's default (auto: tma on sm_90a).
  std::string copy;
  /// Headdim rows of one fused work item (a power of two dividing headdim);
  /// 0: the pipeline's choice.
  int64_t pBlock = 0;
  /// Blocks of the fused kernel's thread block clusters (1 or 2); 0: the
  /// pipeline's default (1).
  int64_t cluster = 0;
  /// The fused kernel's fold-loads-ahead (1 to 8); 0: the pipeline's
  /// default for the fold (4 pieces with f32 states, 2 vectors with f16).
  int64_t foldLoadsAhead = 0;
  /// How the fused kernel's turn chain folds (auto, pieces or vectors);
  /// empty: the pipeline's default (auto).
  std::string fold;
  /// Whether the fused strategy adds its warp-specialised kernel (auto,
  /// always or never); empty: the pipeline's default (auto).
  std::string warpSpecialized;
  /// Pieces a sequence for the warp-specialised kernel (1 to 64); 0: the
  /// pipeline's default (chosen at launch).
  int64_t warpSpecializedPieces = 0;
  /// The warp-specialised kernel's pipeline (0, empty and false: the
  /// pipeline's defaults): stages of its input ring (2 to 4), published
  /// state buffers (1 or 2), where y is staged (stage or tiles), C and B
  /// through panel maps.
  int64_t warpSpecializedStages = 0;
  int64_t warpSpecializedPublishedBuffers = 0;
  /// Heads a block of the piece states' kernel walks (1, 2 or 4; 0: the
  /// layer's choice).
  int64_t warpSpecializedPieceHeads = 0;
  std::string warpSpecializedY;
  bool warpSpecializedPanelMaps = false;
  /// The fused kernel records its chain items' phase clocks in the
  /// `chain_profile` workspace (a diagnostic build; state-chain chunk).
  bool profile = false;
  /// The input already holds `gpu.binary @ssd_kernels` and `ssd.launch`:
  /// skip the pipeline and only write the artifact (tests).
  bool fromLowered = false;
};

/// What a failed compilation says; `isUsageError` marks problems with the
/// request (bad sizes, unknown strategy, invalid IR) as opposed to failures
/// of the compiler itself.
struct CompileError {
  std::string message;
  bool isUsageError = true;
};

/// Builds the IR of `spec` (dynamic b and L), lowers it for the target and
/// writes the artifact to `outDir` (created when missing). Returns the error
/// message, or "" on success.
std::string compileArtifact(const LayerSpec &spec, const CompileOptions &options,
                            const std::string &outDir);

/// compileArtifact, saying whether the request or the compiler failed.
std::optional<CompileError> compileLayer(const LayerSpec &spec,
                                         const CompileOptions &options,
                                         const std::string &outDir);

/// The same from a module that holds one function computing `ssd.combined`
/// (or, with options.fromLowered, the lowered module). `spec` gives the
/// manifest's constants; when empty they are read from the ssd.combined op.
/// Diagnostics go to the module's context; CompileContext::describe adds
/// the first one to the returned message.
std::optional<CompileError>
compileModule(mlir::ModuleOp module, std::optional<LayerSpec> spec,
              const CompileOptions &options, const std::string &outDir);

/// The layer an `ssd.combined` op computes (its static sizes, chunk size,
/// element types and present inputs).
std::optional<LayerSpec> layerSpecOfModule(mlir::ModuleOp module,
                                           std::string &error);

/// The manifest text for the lowered module: format header, target,
/// compiler, constants of `spec`, then the `ssd.launch` content.
/// Deterministic: fixed key order at the top, dictionary order below.
std::optional<std::string> writeManifest(mlir::ModuleOp module,
                                         const LayerSpec &spec,
                                         const CompileOptions &options,
                                         const std::string &target,
                                         std::string &error);

/// The cubin of `gpu.binary @ssd_kernels` and the chip it targets.
std::optional<std::vector<char>> extractCubin(mlir::ModuleOp module,
                                              std::string &chip,
                                              std::string &error);

} // namespace ssd

#endif // SSD_COMPILE_ARTIFACT_H
