//===- CPUBackendUnavailable.cpp - runtime-only ssd-run -------------------===//
//
// The runtime-only build has no MLIR: the CPU backend is absent.
//
//===----------------------------------------------------------------------===//
#include "CPUBackend.h"

using namespace ssd;

bool ssd::cpuBackendAvailable() { return false; }

rt::Status ssd::printCaseModule(const SSDCase &, const RunConfig &, bool) {
  return rt::Status::error("--emit-mlir/--emit-lowered: this ssd-run is "
                           "built without MLIR (SSD_BUILD_COMPILER=OFF)");
}

rt::Expected<RunOutputs> ssd::runCPUBackend(const SSDCase &,
                                            const RunConfig &) {
  return rt::Status::error("--backend cpu: this ssd-run is built without "
                           "MLIR (SSD_BUILD_COMPILER=OFF)");
}
