//===- CPUCodegen.h - pieces of the CPU code generation strategy -*- C++
//-*-===//
//
// The transformations ssd-cpu-tile-vectorize applies to the linalg ops that
// convert-ssd-to-linalg produces, one file each: chunk loops (fusion and
// threads), register tiles for the contractions, vectorized elementwise ops.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_PIPELINES_CPUCODEGEN_H
#define SSD_LIB_CONVERSION_PIPELINES_CPUCODEGEN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace ssd {
namespace cpu {

/// Marks a contraction whose producers could not be fused into chunk loops,
/// while the fusion rounds run (removed afterwards).
constexpr llvm::StringLiteral kUnfusedAttr = "ssd.unfused";

/// Tiles the batch loops of the last top-level contraction of `func` by 1
/// and fuses its linalg producers into them (scf.forall with `parallel`).
/// Returns false when no top-level contraction is left.
bool fuseOneChunkLoop(mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
                      bool parallel);

/// Whether some loop of `op` has a static trip count of zero: it does no
/// work, and tiling it would divide by that zero, so the CPU code
/// generation leaves it as it is.
bool hasEmptyLoop(mlir::linalg::LinalgOp op);

/// Iterations (the product of an op's static loop ranges) below which an op
/// is not worth distributing over threads.
constexpr int64_t kMinParallelWork = 4096;

/// Layers of at most this many tokens (a rung of ssd-fit-chunk-size's
/// ladder) run on the calling thread: through the dynamic-shape kernels, 32
/// tokens of the Mamba-2 2.7B layer took 5.9 ms on two threads against
/// 2.8 ms on one, the forks and joins of its ops costing more than they
/// spread.
constexpr int64_t kMaxSerialRungTokens = 32;

/// Distributes the outermost non-unit parallel loop of `op` (of a known
/// range where there is one) over an scf.forall; returns the op inside it
/// (or `op`). Ops with fewer than kMinParallelWork iterations, and the ops
/// of a short layer (kMaxSerialRungTokens), stay as they are.
mlir::linalg::LinalgOp distribute(mlir::RewriterBase &rewriter,
                                  mlir::linalg::LinalgOp op);

/// Tiles a contraction to `m` x `n` register tiles with a `k` reduction step
/// and vectorizes each tile into a 2-D vector.contract. Leaves the op as it
/// is when the sizes do not divide its static loop ranges.
void tileContractionToRegisters(mlir::RewriterBase &rewriter,
                                mlir::linalg::LinalgOp op, int64_t m, int64_t n,
                                int64_t k);

/// Tiles an all-parallel generic to one vector of `width` along its
/// innermost loop and vectorizes it.
void tileAndVectorizeElementwise(mlir::RewriterBase &rewriter,
                                 mlir::linalg::GenericOp op, int64_t width);

} // namespace cpu
} // namespace ssd

#endif // SSD_LIB_CONVERSION_PIPELINES_CPUCODEGEN_H
