//===- Compare.cpp - the error measure of the golden cases ----------------===//
#include "ssd/Support/Compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace ssd;

template <typename T>
static double maxRelErr(const std::vector<T> &actual,
                        const std::vector<float> &expected) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (actual.size() != expected.size())
    return kInf;
  double maxDiff = 0.0, maxRef = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    if (!std::isfinite(a))
      return kInf;
    maxDiff = std::max(maxDiff, std::fabs(a - e));
    maxRef = std::max(maxRef, std::fabs(e));
  }
  return maxRef > 0.0 ? maxDiff / maxRef : maxDiff;
}

double ssd::maxRelativeError(const std::vector<float> &actual,
                             const std::vector<float> &expected) {
  return maxRelErr(actual, expected);
}

double ssd::maxRelativeError(const std::vector<double> &actual,
                             const std::vector<float> &expected) {
  return maxRelErr(actual, expected);
}
