//===- RunConfig.h - what ssd-run computes and how --------------*- C++ -*-===//
#ifndef SSD_TOOLS_SSDRUN_RUNCONFIG_H
#define SSD_TOOLS_SSDRUN_RUNCONFIG_H

#include "ssd/Support/FloatBits.h"

#include <cstdint>
#include <vector>

namespace ssd {

/// The precision choices and the algorithm parameter of one run.
struct RunConfig {
  int64_t chunkSize = 64;
  /// The element type of x, B, C, z and y.
  DType dtype = DType::F32;
  /// The element type of initial_states and final_states (F32 or F16).
  DType stateDtype = DType::F32;
  /// Runs of the computation to time (the median is reported); 0 runs once
  /// without reporting a time.
  int64_t repeat = 0;
  /// CPU worker threads for the chunk loops; 0 runs on the calling thread.
  int64_t threads = 0;
  /// CPU: chunks per segment of the loop the sequence runs as (the
  /// intermediates are segment-sized); 0 runs the whole sequence at once.
  int64_t segmentChunks = 1;
};

/// The outputs of a run, widened to float32 whatever the compute dtype:
/// `y` shaped like x and `finalStates` like the case's state shape.
struct RunOutputs {
  std::vector<float> y;
  std::vector<float> finalStates;
  /// Wall time of each run of the computation, in milliseconds (compilation
  /// excluded); empty when the backend does not time itself.
  std::vector<double> runMs;
};

/// The error bound of golden/README.md for a configuration: 1e-4 in f32,
/// 1.5e-2 with bf16 inputs, 5e-3 with f16 inputs; an f16 state gets the
/// bf16 bound.
double errorBound(const RunConfig &config);

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_RUNCONFIG_H
