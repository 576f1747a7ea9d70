//===- RunConfig.cpp - what ssd-run computes and how ----------------------===//
#include "RunConfig.h"

#include <algorithm>

using namespace ssd;

const char *ssd::elementKindName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::F16:
    return "f16";
  }
  return "?";
}

double ssd::errorBound(const RunConfig &config) {
  double bound = 1e-4;
  if (config.dtype == ElementKind::BF16)
    bound = 1.5e-2;
  else if (config.dtype == ElementKind::F16)
    bound = 5e-3;
  if (config.stateDtype == ElementKind::F16)
    bound = std::max(bound, 1.5e-2);
  return bound;
}
