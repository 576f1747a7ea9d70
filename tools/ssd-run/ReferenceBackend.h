//===- ReferenceBackend.h - ssd-run --reference -----------------*- C++ -*-===//
#ifndef SSD_TOOLS_SSDRUN_REFERENCEBACKEND_H
#define SSD_TOOLS_SSDRUN_REFERENCEBACKEND_H

#include "RunConfig.h"

#include "ssd/Support/Case.h"

namespace ssd {

/// Runs the independent double-precision recurrence with the rounding of
/// `config` applied at the boundaries: x, B, C, z rounded to the dtype,
/// initial_states to the state dtype, and y and final_states rounded on the
/// way out. The chunk size plays no part.
RunOutputs runReferenceBackend(const SSDCase &c, const RunConfig &config);

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_REFERENCEBACKEND_H
