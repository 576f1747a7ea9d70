//===- SSDToLinalg.h - ssd step ops to linalg -------------------*- C++ -*-===//
#ifndef SSD_CONVERSION_SSDTOLINALG_H
#define SSD_CONVERSION_SSDTOLINALG_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class Operation;
class RewritePatternSet;
} // namespace mlir

namespace ssd {

/// Unit attribute on a linalg contraction whose terms are zero when the
/// innermost reduction index exceeds the innermost M (output row) index, as
/// in the causal intra-chunk product of chunk_scan. Tilings may bound the
/// reduction by the row tile; dropping the attribute only costs time.
constexpr llvm::StringLiteral kLowerTriangularAttr = "ssd.lower_triangular";

/// Adds the patterns lowering the six ssd step ops (chunk_cumsum, segsum,
/// bmm, chunk_state, state_passing, chunk_scan) to linalg, tensor, arith,
/// math and scf on tensors. ssd.combined is not covered (decompose it first).
void populateSSDToLinalgConversionPatterns(mlir::RewritePatternSet &patterns);

/// Checks that `op` (an ssd op) can be lowered by the patterns above and
/// emits an error naming the reason when it cannot. Returns success for ops
/// of other dialects.
mlir::LogicalResult checkSSDToLinalgLowerable(mlir::Operation *op);

} // namespace ssd

#endif // SSD_CONVERSION_SSDTOLINALG_H
