//===- PassOptions.h - option checks the ssd passes share ------*- C++ -*-===//
//
// Internal to lib/Dialect/SSD/Transforms.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_DIALECT_SSD_TRANSFORMS_PASSOPTIONS_H
#define SSD_LIB_DIALECT_SSD_TRANSFORMS_PASSOPTIONS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/MathExtras.h"

namespace ssd {

/// A pass's `chunk-size` option: 0 (each op's own) or a positive power of
/// two. Otherwise reports it at `anchor`'s location alone (the option is
/// wrong, not the IR), naming the pass.
inline mlir::LogicalResult checkChunkSizeOption(mlir::Operation *anchor,
                                                llvm::StringRef pass,
                                                int64_t chunkSize) {
  if (chunkSize == 0 ||
      (chunkSize > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(chunkSize))))
    return mlir::success();
  return mlir::emitError(anchor->getLoc())
         << pass << ": chunk-size must be a positive power of two or 0, got "
         << chunkSize;
}

} // namespace ssd

#endif // SSD_LIB_DIALECT_SSD_TRANSFORMS_PASSOPTIONS_H
