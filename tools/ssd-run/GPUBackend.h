//===- GPUBackend.h - ssd-run --backend gpu ---------------------*- C++ -*-===//
//
// Runs a case on the GPU through the runtime: the artifact is precompiled
// (--artifact DIR) or compiled for the case on the spot where this ssd-run
// has the compiler. Plain C++ on the runtime: it builds without MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_TOOLS_SSDRUN_GPUBACKEND_H
#define SSD_TOOLS_SSDRUN_GPUBACKEND_H

#include "RunConfig.h"

#include "ssd/Runtime/Runtime.h"
#include "ssd/Support/Case.h"
#include "ssd/Support/LayerSpec.h"

#include <string>

namespace ssd {

/// The layer a run of `c` with `config` needs.
LayerSpec layerSpecOfRun(const SSDCase &c, const RunConfig &config);

/// Checks that an artifact's constants are those of `spec`; the error names
/// the first constant that differs.
rt::Status checkArtifactFits(const rt::Manifest &manifest,
                             const LayerSpec &spec);

/// Whether this ssd-run can compile an artifact itself (it has MLIR).
bool canCompileArtifacts();

/// Compiles `spec` for sm_90a with `strategy` (`unfused` or `fused`) into a
/// fresh temporary directory; returns it.
rt::Expected<std::string> compileArtifactForRun(const LayerSpec &spec,
                                                const std::string &strategy);

/// Uploads the case's inputs in the artifact's element types, launches the
/// artifact on the primary context of device 0, and returns the outputs
/// widened to float32.
rt::Expected<RunOutputs> runGPUBackend(const SSDCase &c,
                                       const rt::Artifact &artifact);

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_GPUBACKEND_H
