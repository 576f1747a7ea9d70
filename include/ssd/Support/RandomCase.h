//===- RandomCase.h - random SSD problems -----------------------*- C++ -*-===//
//
// Deterministic random inputs for a case of given sizes and features, for
// tests that need no shared data. Expected outputs are not filled in.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_SUPPORT_RANDOMCASE_H
#define SSD_SUPPORT_RANDOMCASE_H

#include "ssd/Support/Case.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace ssd {

struct RandomCaseOptions {
  int64_t batch = 1, seqlen = 64, nheads = 2, headdim = 4, ngroups = 1,
          dstate = 8;
  uint64_t seed = 0;

  bool D = false;        ///< D per head (h,)
  bool Dhp = false;      ///< D per channel (h, p); wins over `D`
  bool z = false;        ///< z gating
  bool dtBias = false;   ///< dt_bias
  bool softplus = false; ///< dt_softplus (dt is then drawn around -2)
  double dtLimitLo = 0.0;
  double dtLimitHi = std::numeric_limits<double>::infinity();
  bool initialStates = false;
  /// Token positions where seq_idx increments (on every batch row).
  std::vector<int64_t> seqIdxCuts;
  /// cu_seqlens; non-empty selects varlen (batch must be 1).
  std::vector<int32_t> cuSeqlens;

  /// Ranges of A (negative) and of the raw dt.
  double aMin = -4.0, aMax = -0.5;
  double dtMin = 0.01, dtMax = 0.5;
};

/// Builds a case with random inputs; `validateCase` decides if the options
/// are consistent.
SSDCase makeRandomCase(const RandomCaseOptions &options);

} // namespace ssd

#endif // SSD_SUPPORT_RANDOMCASE_H
