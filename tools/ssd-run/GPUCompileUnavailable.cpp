//===- GPUCompileUnavailable.cpp - runtime-only ssd-run -------------------===//
//
// The runtime-only build has no compiler: --backend gpu needs --artifact.
//
//===----------------------------------------------------------------------===//
#include "GPUBackend.h"

using namespace ssd;

bool ssd::canCompileArtifacts() { return false; }

rt::Expected<std::string> ssd::compileArtifactForRun(const LayerSpec &,
                                                     const std::string &) {
  return rt::Status::error(
      "--backend gpu: this ssd-run is built without the compiler "
      "(SSD_BUILD_COMPILER=OFF); pass a precompiled --artifact DIR");
}
