//===- WarpSpecializedLayer.h - the layer's warp-specialised kernel -*- C++
//-*-===//
//
// The warp-specialised kernels (WarpSpecializedSSD.h) as the fused
// strategy's kernels for the layers they take: which layers, their
// parameters and workspaces in the manifest, and the derived symbols that
// cut each sequence into pieces where batch x heads x p-blocks leave SMs
// idle.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDLAYER_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDLAYER_H

#include "../Kernels.h"

#include "ssd/Conversion/SSDToGPU/Pipeline.h"

#include <optional>

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

/// The kernels' names (a piece-states kernel of more than one head a block
/// is named with its heads: `..._piece_states_heads4`), the derived symbol
/// of the pieces a sequence is cut into and, where the artifact holds two
/// piece-states kernels, the model's packed choice and whether the launch
/// runs the wide one (1) or the one-head one (0).
inline constexpr llvm::StringLiteral kKernelName = kWarpSpecializedKernelName;
inline constexpr llvm::StringLiteral kPieceStatesKernelName =
    "ssd_warp_specialized_piece_states";
inline constexpr llvm::StringLiteral kPiecesSymbol = "ws_pieces";
inline constexpr llvm::StringLiteral kChoiceSymbol = "ws_choice";
inline constexpr llvm::StringLiteral kWideSymbol = "ws_wide";

/// The heads a block of the wide piece-states kernel walks, which the
/// layer's artifact holds beside the one-head kernel where they divide a
/// group's heads.
inline constexpr int64_t kWidePieceHeads = 4;

/// The model `auto` picks the pieces (and the piece-states kernel) by,
/// fitted on the H100 (Mamba-2 2.7B, b 1 to 8, 2K to 128K tokens, 1 to 8
/// pieces; bench/NOTES-fused-gpu.md): pieces 1 to kMaxPieces; a wave of the
/// piece states' blocks costs kPieceWaveCostPercent (a head a block, two
/// blocks a SM) or kWidePieceWaveCostPercent (two or four heads a block:
/// four heads a SM) of one of the SSD kernel's over the same tokens, and
/// each piece about as much as kPieceCostTokens more tokens of a chain (6
/// us on the H100). The kernels' own times put the two waves at 59-73% and
/// 103-120% of an SSD wave, a ratio of 1.7 against the model's 1.6; the
/// model's picks were measured at b1 16K to 128K and b2, b4, b8 16K.
inline constexpr int64_t kMaxPieces = 8;
inline constexpr int64_t kPieceWaveCostPercent = 50;
inline constexpr int64_t kWidePieceWaveCostPercent = 80;
inline constexpr int64_t kPieceCostTokens = 223;

/// The layer kernel's pipeline as the pass options give it; zeros, no
/// value and false take the layer's defaults (4 stages, one published
/// state buffer, y in the stages, a copy a panel, piece-states kernels of
/// one head a block and of kWidePieceHeads).
struct LayerLayout {
  int64_t stages = 0;
  int64_t publishedBuffers = 0;
  std::optional<bool> yInStage;
  bool panelMaps = false;
  /// Heads a piece-states block walks (0: both kernels, one head and
  /// kWidePieceHeads where they divide a group's heads, picked at launch).
  int64_t pieceHeads = 0;
};

/// Why `layout` cannot be built whatever the layer (a value out of range,
/// the shared memory it needs over a block's), naming the option; empty
/// when it can.
std::string unsupportedLayout(const LayerLayout &layout);

/// Why the layer cannot take the kernel on `chip` (naming the feature, the
/// size or the type), e.g. "the layer has z"; empty when it can.
std::string unsupportedLayer(const SSDProblem &p, llvm::StringRef chip,
                             const LayerLayout &layout);

/// Why the piece heads `layout` gives cannot walk the layer (they must
/// divide a group's heads), naming both; empty when none are given or they
/// can.
std::string unsupportedPieceHeads(const SSDProblem &p,
                                  const LayerLayout &layout);

/// Adds the derived symbol kPiecesSymbol and the workspaces piece_states
/// and piece_decays to the layer: `pieces` pieces where positive, else
/// the count of 1 .. kMaxPieces that a model of the kernels' waves says is
/// fastest for the launch's batch, L and SM count; with two piece-states
/// kernels (layout.pieceHeads 0), kWideSymbol too: the one the model says
/// is faster at those pieces.
void addPieceWorkspaces(SSDProblem &p, int64_t pieces,
                        const LayerLayout &layout);

/// Appends the piece states' kernels (one launched where there are two
/// pieces or more) and `ssd_warp_specialized` for the layer (unsupportedLayer
/// empty, addPieceWorkspaces done) to `module`, in launch order.
llvm::SmallVector<KernelInfo> buildLayerKernels(mlir::ImplicitLocOpBuilder &b,
                                                mlir::gpu::GPUModuleOp module,
                                                const SSDProblem &p,
                                                const LayerLayout &layout);

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDLAYER_H
