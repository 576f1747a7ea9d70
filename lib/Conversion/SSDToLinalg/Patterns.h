//===- Patterns.h - per-op ssd to linalg patterns ---------------*- C++ -*-===//
//
// One populate function per step op; each lives in its own file.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOLINALG_PATTERNS_H
#define SSD_LIB_CONVERSION_SSDTOLINALG_PATTERNS_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace ssd {
namespace lowering {

void populateChunkCumsumPatterns(mlir::RewritePatternSet &patterns);
void populateSegsumPatterns(mlir::RewritePatternSet &patterns);
void populateBmmPatterns(mlir::RewritePatternSet &patterns);
void populateChunkStatePatterns(mlir::RewritePatternSet &patterns);
void populateStatePassingPatterns(mlir::RewritePatternSet &patterns);
void populateChunkScanPatterns(mlir::RewritePatternSet &patterns);

} // namespace lowering
} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOLINALG_PATTERNS_H
