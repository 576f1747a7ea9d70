//===- Reference.h - the naive sequential SSD recurrence --------*- C++ -*-===//
//
// An independent reference for the whole SSD forward: the token-by-token
// recurrence of golden/README.md in double precision, with no chunking and
// no code shared with the MLIR lowering. It is slow (b*L*h*p*n steps) and
// meant for tests and cross-checks.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_REFERENCE_REFERENCE_H
#define SSD_REFERENCE_REFERENCE_H

#include "ssd/Support/Case.h"

#include <vector>

namespace ssd {

/// The outputs of the reference in float64, in C order: `y` shaped like `x`
/// and `finalStates` shaped like `SSDCase::stateShape()`.
struct ReferenceResult {
  std::vector<double> y;
  std::vector<double> finalStates;
};

/// The processed step size: `dt (+ dt_bias)`, softplus when enabled (the
/// identity above 20), clamped to [lo, hi].
double processDt(double dt, double bias, bool softplus, double lo, double hi);

/// Runs the recurrence on a validated case (see `validateCase`).
ReferenceResult runReference(const SSDCase &c);

} // namespace ssd

#endif // SSD_REFERENCE_REFERENCE_H
