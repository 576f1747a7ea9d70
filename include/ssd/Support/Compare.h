//===- Compare.h - the error measure of the golden cases --------*- C++ -*-===//
#ifndef SSD_SUPPORT_COMPARE_H
#define SSD_SUPPORT_COMPARE_H

#include <vector>

namespace ssd {

/// The error measure used everywhere: max|actual - expected| / max|expected|.
/// When `expected` is all zero the absolute error is returned; any NaN or
/// infinity in `actual`, or a size mismatch, gives +infinity.
double maxRelativeError(const std::vector<float> &actual,
                        const std::vector<float> &expected);
double maxRelativeError(const std::vector<double> &actual,
                        const std::vector<float> &expected);

} // namespace ssd

#endif // SSD_SUPPORT_COMPARE_H
