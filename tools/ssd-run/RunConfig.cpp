//===- RunConfig.cpp - what ssd-run computes and how ----------------------===//
#include "RunConfig.h"

#include <algorithm>

using namespace ssd;

double ssd::errorBound(const RunConfig &config) {
  double bound = 1e-4;
  if (config.dtype == DType::BF16)
    bound = 1.5e-2;
  else if (config.dtype == DType::F16)
    bound = 5e-3;
  if (config.stateDtype == DType::F16)
    bound = std::max(bound, 1.5e-2);
  return bound;
}
