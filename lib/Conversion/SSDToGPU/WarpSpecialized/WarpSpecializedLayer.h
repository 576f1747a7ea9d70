//===- WarpSpecializedLayer.h - the layer's warp-specialised kernel -*- C++ -*-===//
//
// The warp-specialised kernel (WarpSpecializedSSD.h) as one of the fused
// strategy's kernels: which layers it takes, its parameters in the
// manifest, and the derived symbol that launches it where batch x heads x
// p-blocks fill the GPU.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDLAYER_H
#define SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDLAYER_H

#include "../Kernels.h"

namespace ssd {
namespace gpu_lowering {
namespace warp_specialized {

/// The kernel's name and its derived launch symbol: 1 where a launch runs
/// it, 0 where the persistent kernel does.
inline constexpr llvm::StringLiteral kKernelName = "ssd_warp_specialized";
inline constexpr llvm::StringLiteral kLaunchSymbol = "warp_specialized";

/// Blocks per SM the grid must give (b x heads x p-blocks >= this x
/// num_sms) for the `auto` launch condition to take the kernel: on the
/// H100 it was 1.24x faster than the persistent kernel at 2.4 blocks a SM
/// (Mamba-2 2.7B, b4 16K) and 1.07x slower at 1.2 (b2), 1.04x at 0.6 (b1;
/// bench/results/2026-12-06-3d6fdde-h100-warp-specialized-product.json).
inline constexpr int64_t kAutoBlocksPerSM = 2;

/// Why the layer cannot take the kernel on `chip` (naming the feature, the
/// size or the type), e.g. "the layer has z"; empty when it can.
std::string unsupportedLayer(const SSDProblem &p, llvm::StringRef chip);

/// The launch condition of `auto`: the expression of kLaunchSymbol.
std::string autoLaunchCondition(const SSDProblem &p);

/// Appends `ssd_warp_specialized` for the layer (unsupportedLayer empty) to
/// `module`, launched where `when` holds.
KernelInfo buildLayerKernel(mlir::ImplicitLocOpBuilder &b,
                            mlir::gpu::GPUModuleOp module, const SSDProblem &p,
                            llvm::StringRef when);

} // namespace warp_specialized
} // namespace gpu_lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_WARPSPECIALIZED_WARPSPECIALIZEDLAYER_H
