//===- Passes.h - ssd dialect transformation passes -------------*- C++ -*-===//
#ifndef SSD_DIALECT_SSD_TRANSFORMS_PASSES_H
#define SSD_DIALECT_SSD_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "ssd/Dialect/SSD/IR/SSDDialect.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class RewritePatternSet;
class RewriterBase;
} // namespace mlir

namespace ssd {

#define GEN_PASS_DECL
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"

/// Patterns rewriting ssd.combined into the six step ops. A `chunkSize` of 0
/// keeps each op's chunk_size attribute; otherwise it must be a positive
/// power of two and replaces it.
void populateSSDDecomposePatterns(mlir::RewritePatternSet &patterns,
                                  int64_t chunkSize = 0);

/// Patterns fusing each complete chain of step ops into ssd.fused. With
/// `emitRemarks`, chains that do not match get a remark saying why. A
/// non-zero `pBlock` is recorded on the fused ops.
void populateSSDFusePatterns(mlir::RewritePatternSet &patterns,
                             bool emitRemarks = false, int64_t pBlock = 0);

/// Marks the scf.for over segments that ssd-split-sequence builds (the CPU
/// backend allocates its body's temporaries once, before it).
constexpr llvm::StringLiteral kSegmentLoopAttr = "ssd.segment_loop";

/// Marks the scf.for that ssd-split-sequence builds over the sequences of a
/// cu_seqlens layer or the rows of a dynamic batch (the CPU backend
/// allocates the temporaries of the segment loops in its body once, before
/// it).
constexpr llvm::StringLiteral kSequenceLoopAttr = "ssd.sequence_loop";

/// Marks each scf.if of ssd-fit-chunk-size's ladder on a dynamic length; its
/// value is the most tokens the layer in its then-branch holds (that rung's
/// chunk size). The CPU backend keeps the ops of a short rung on the
/// calling thread.
constexpr llvm::StringLiteral kFitRungAttr = "ssd.fit_rung";

/// Rewrites `op` into a loop over segments of `segmentChunks` chunks of
/// `chunkSize` tokens (0: the op's chunk_size) carrying the state, and one op
/// on the tokens after them; with cu_seqlens or a dynamic batch, into a loop
/// over the sequences or rows, each walked so (see ssd-split-sequence).
/// Fails, leaving `op` as it is, where the split would not be exact, a
/// dimension is empty, or a static op holds one segment.
mlir::LogicalResult splitSequence(mlir::RewriterBase &rewriter, CombinedOp op,
                                  int64_t chunkSize, int64_t segmentChunks);

#define GEN_PASS_REGISTRATION
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"

} // namespace ssd

#endif // SSD_DIALECT_SSD_TRANSFORMS_PASSES_H
