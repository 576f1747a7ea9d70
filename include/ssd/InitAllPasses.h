//===- InitAllPasses.h - register the project's passes ----------*- C++ -*-===//
#ifndef SSD_INITALLPASSES_H
#define SSD_INITALLPASSES_H

#include "ssd/Conversion/Passes.h"
#include "ssd/Conversion/Pipelines.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"
#include "ssd/Conversion/SSDToGPU/Pipeline.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

namespace ssd {

/// Registers every pass (and pass pipeline) of the project with the global
/// registry, so that they can be named on a command line or in a pipeline
/// string.
inline void registerAllPasses() {
  registerSSDPasses();
  registerSSDConversionPasses();
  registerCPUPipeline();
  registerSSDToGPUPasses();
  registerGPUUnfusedPipeline();
  registerGPUKernelsToBinaryPipeline();
  registerGPUFusedPipeline();
}

} // namespace ssd

#endif // SSD_INITALLPASSES_H
