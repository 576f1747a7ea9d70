//===- Compare.h - the error measure of the golden cases --------*- C++ -*-===//
#ifndef SSD_SUPPORT_COMPARE_H
#define SSD_SUPPORT_COMPARE_H

#include "llvm/ADT/ArrayRef.h"

namespace ssd {

/// The error measure used everywhere: max|actual - expected| / max|expected|.
/// When `expected` is all zero the absolute error is returned; any NaN or
/// infinity in `actual`, or a size mismatch, gives +infinity.
double maxRelativeError(llvm::ArrayRef<float> actual,
                        llvm::ArrayRef<float> expected);
double maxRelativeError(llvm::ArrayRef<double> actual,
                        llvm::ArrayRef<float> expected);

} // namespace ssd

#endif // SSD_SUPPORT_COMPARE_H
