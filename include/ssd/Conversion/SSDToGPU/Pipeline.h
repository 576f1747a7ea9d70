//===- Pipeline.h - the unfused GPU pipeline --------------------*- C++ -*-===//
#ifndef SSD_CONVERSION_SSDTOGPU_PIPELINE_H
#define SSD_CONVERSION_SSDTOGPU_PIPELINE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace ssd {

/// The name of the warp-specialised SSD kernel the fused pipeline gives
/// the layers it takes (the manifest's writer tells the two kernels apart
/// by it).
inline constexpr llvm::StringLiteral kWarpSpecializedKernelName =
    "ssd_warp_specialized";

/// Knobs of the GPU pipelines.
struct GPUPipelineOptions {
  /// Chunk size handed to ssd-decompose; 0 keeps each op's chunk_size.
  int64_t chunkSize = 0;
  std::string chip = "sm_90a";
  std::string features = "+ptx80";
  /// gpu-module-to-binary format: "bin" (cubin through ptxas), "isa" (PTX),
  /// "fatbin", "llvm"; empty stops after the NVVM lowering (no gpu.binary).
  std::string format = "bin";
  /// ptxas / LLVM optimisation level.
  int optLevel = 3;
  /// mma.sync tensor cores for bf16/f16 inputs.
  bool tensorCores = true;
};

/// Appends to `pm` (anchored on builtin.module) the passes from a module
/// holding one func.func with ssd.combined (or the step ops) to a module
/// holding `gpu.binary @ssd_kernels` and the `ssd.launch` attribute:
/// ssd-decompose, convert-ssd-to-gpu, the NVVM lowering of the kernels and
/// gpu-module-to-binary.
void buildGPUUnfusedPipeline(mlir::OpPassManager &pm,
                             const GPUPipelineOptions &options);

/// Appends the passes shared by the GPU pipelines after their convert-ssd-*
/// pass: the NVVM lowering of gpu.module @ssd_kernels (64-bit indices) and
/// gpu-module-to-binary in `options.format`.
void buildGPUKernelsToBinary(mlir::OpPassManager &pm,
                             const GPUPipelineOptions &options);

/// The fused kernel's choices, as convert-ssd-fused-to-gpu's options of the
/// same names (its documentation in Passes.td).
struct FusedKernelOptions {
  /// Headdim rows of a work item (ssd-fuse's p-block; 0: the lowering's
  /// choice).
  int64_t pBlock = 0;
  std::string stateChain = "auto"; // chunk, lookback, auto or segment
  std::string mma = "mma.sync";    // mma.sync or wgmma
  std::string stateMma =
      "auto"; // the chunk-state product's: auto, mma.sync or wgmma
  std::string copy = "auto";       // auto, cp.async or tma
  bool profile = false;            // the chain items' phase clocks
  int64_t cluster = 1;             // blocks of a thread block cluster
  // The turn chain fold's walk (auto, pieces or vectors) and its loads
  // ahead (0: the fold's default).
  std::string fold = "auto";
  // The warp-specialised kernel beside the persistent one: auto, always or
  // never.
  std::string warpSpecialized = "auto";
  // Pieces a sequence the warp-specialised kernel takes (0: at launch).
  int64_t warpSpecializedPieces = 0;
  // The warp-specialised kernel's pipeline (0, auto and false: its
  // defaults): stages of the input ring, published state buffers, where y
  // is staged (stage, tiles), C and B through panel maps.
  int64_t warpSpecializedStages = 0;
  int64_t warpSpecializedPublishedBuffers = 0;
  // Heads a piece-states block walks (0: the layer's choice).
  int64_t warpSpecializedPieceHeads = 0;
  std::string warpSpecializedY = "auto";
  bool warpSpecializedPanelMaps = false;
  int64_t foldLoadsAhead = 0;
};

/// Appends ssd-decompose, ssd-fuse, convert-ssd-fused-to-gpu (one
/// persistent kernel, built as `kernel` says) and the shared NVVM/binary
/// tail.
void buildGPUFusedPipeline(mlir::OpPassManager &pm,
                           const GPUPipelineOptions &options,
                           const FusedKernelOptions &kernel = {});

/// Registers `ssd-gpu-fused-pipeline` with the pass registry.
void registerGPUFusedPipeline();

/// Adds what gpu-module-to-binary needs to the registry of a tool running
/// the pipeline: the LLVM IR translations of the llvm, nvvm and gpu dialects
/// and the #nvvm.target serialisation interface.
void registerGPUPipelineDependencies(mlir::DialectRegistry &registry);

/// Registers `ssd-gpu-unfused-pipeline` with the pass registry.
void registerGPUUnfusedPipeline();

/// Registers `ssd-gpu-kernels-to-binary` (buildGPUKernelsToBinary alone).
void registerGPUKernelsToBinaryPipeline();

} // namespace ssd

#endif // SSD_CONVERSION_SSDTOGPU_PIPELINE_H
