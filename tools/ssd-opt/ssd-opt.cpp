//===- ssd-opt.cpp - the ssd pass driver ----------------------------------===//
//
// mlir-opt with the ssd dialect, the upstream dialects and passes, and every
// project pass registered.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "ssd/Conversion/SSDToGPU/Pipeline.h"
#include "ssd/InitAllDialects.h"
#include "ssd/InitAllPasses.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  ssd::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  ssd::registerAllDialects(registry);
  ssd::registerGPUPipelineDependencies(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "SSD-MLIR optimizer driver\n", registry));
}
