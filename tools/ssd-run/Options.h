//===- Options.h - ssd-run's command line -----------------------*- C++ -*-===//
#ifndef SSD_TOOLS_SSDRUN_OPTIONS_H
#define SSD_TOOLS_SSDRUN_OPTIONS_H

#include "RunConfig.h"

#include "ssd/Runtime/Status.h"

#include <string>
#include <vector>

namespace ssd {

struct RunOptions {
  std::string caseDir;
  std::string backend = "cpu";
  std::string outDir;
  /// With --backend gpu: a precompiled artifact instead of compiling here.
  std::string artifactDir;
  /// With --backend gpu and no artifact: the GPU strategy to compile with.
  std::string strategy = "fused";
  RunConfig config;
  bool reference = false;   ///< run the independent reference instead
  bool nonfiniteInputs = false; ///< accept NaN and infinite inputs
  bool emitMLIR = false;    ///< print the module and stop
  bool emitLowered = false; ///< print the lowered module and stop
  bool help = false;
};

/// The usage text.
const char *runUsage();

/// Parses `args` (without the program name); errors describe the bad flag.
rt::Expected<RunOptions> parseRunOptions(const std::vector<std::string> &args);

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_OPTIONS_H
