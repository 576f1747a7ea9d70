//===- CPUBackend.h - ssd-run --backend cpu ---------------------*- C++ -*-===//
#ifndef SSD_TOOLS_SSDRUN_CPUBACKEND_H
#define SSD_TOOLS_SSDRUN_CPUBACKEND_H

#include "RunConfig.h"

#include "ssd/Support/Case.h"

#include "ssd/Runtime/Status.h"

namespace ssd {

/// Whether this build has the CPU lowering (ssd::buildCPUPipeline).
bool cpuBackendAvailable();

/// Prints the module that computes the case (before lowering), or after the
/// CPU pipeline when `lowered` is set, to standard output.
rt::Status printCaseModule(const SSDCase &c, const RunConfig &config,
                           bool lowered);

/// Builds the case's module, lowers it with the CPU pipeline, JIT-compiles
/// it with the MLIR ExecutionEngine and runs it on the case's inputs.
rt::Expected<RunOutputs> runCPUBackend(const SSDCase &c,
                                       const RunConfig &config);

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_CPUBACKEND_H
