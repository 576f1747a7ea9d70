//===- SSDPlugin.cpp - the ssd dialect and passes as mlir-opt plugins -----===//
//
// One library answers both of MLIR's plugin entry points, so that
//   mlir-opt --load-dialect-plugin=libSSDPlugin.so \
//            --load-pass-plugin=libSSDPlugin.so
// reads ssd IR and runs every project pass and pipeline.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "ssd/Conversion/SSDToGPU/Pipeline.h"
#include "ssd/InitAllDialects.h"
#include "ssd/InitAllPasses.h"

namespace {

/// The dialect, and the interfaces the GPU pipelines need from upstream
/// dialects (as ssd-opt registers them).
void registerDialects(mlir::DialectRegistry *registry) {
  ssd::registerAllDialects(*registry);
  ssd::registerGPUPipelineDependencies(*registry);
}

/// Passes only here, not in the dialect callback as well: with both flags
/// given, they would be registered twice.
void registerPasses() { ssd::registerAllPasses(); }

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SSD", SSD_PLUGIN_VERSION,
          registerDialects};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SSDPasses", SSD_PLUGIN_VERSION,
          registerPasses};
}
