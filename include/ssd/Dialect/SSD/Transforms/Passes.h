//===- Passes.h - ssd dialect transformation passes -------------*- C++ -*-===//
#ifndef SSD_DIALECT_SSD_TRANSFORMS_PASSES_H
#define SSD_DIALECT_SSD_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "ssd/Dialect/SSD/IR/SSDDialect.h"

namespace mlir {
class RewritePatternSet;
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

#define GEN_PASS_REGISTRATION
#include "ssd/Dialect/SSD/Transforms/Passes.h.inc"

} // namespace ssd

#endif // SSD_DIALECT_SSD_TRANSFORMS_PASSES_H
