//===- consumer.cpp - a C++ program built on the installed SSD package ----===//
//
// Parses a layer written as one ssd.combined, runs ssd-decompose through a
// pass manager and checks the result: no ssd.combined left and each of the
// six step ops once. Exits non-zero, saying what is wrong, otherwise.
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"
#include "ssd/InitAllDialects.h"

#include <cstdio>

static const char *const layerSource = R"mlir(
func.func @layer(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,
                 %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>,
                 %C: tensor<1x64x1x8xf32>)
    -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {
  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)
      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>)
      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)
      {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>
}
)mlir";

/// The number of ops of type OpT in `module`.
template <typename OpT>
static int countOps(mlir::ModuleOp module) {
  int count = 0;
  module.walk([&](OpT) { ++count; });
  return count;
}

/// Reports `name` when it occurs `actual` times instead of `expected`.
static bool expectCount(const char *name, int actual, int expected) {
  if (actual == expected)
    return true;
  std::fprintf(stderr, "ssd-consumer: %s occurs %d times, expected %d\n", name,
               actual, expected);
  return false;
}

int main() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect>();
  ssd::registerAllDialects(registry);
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(layerSource, &context);
  if (!module) {
    std::fprintf(stderr, "ssd-consumer: the layer does not parse\n");
    return 1;
  }
  if (!expectCount("ssd.combined before the pass",
                   countOps<ssd::CombinedOp>(*module), 1))
    return 1;

  mlir::PassManager pm(&context);
  pm.addPass(ssd::createSSDDecompose());
  if (mlir::failed(pm.run(*module))) {
    std::fprintf(stderr, "ssd-consumer: ssd-decompose failed\n");
    return 1;
  }

  bool ok = expectCount("ssd.combined", countOps<ssd::CombinedOp>(*module), 0);
  ok &= expectCount("ssd.chunk_cumsum", countOps<ssd::ChunkCumsumOp>(*module),
                    1);
  ok &= expectCount("ssd.segsum", countOps<ssd::SegsumOp>(*module), 1);
  ok &= expectCount("ssd.bmm", countOps<ssd::BmmOp>(*module), 1);
  ok &= expectCount("ssd.chunk_state", countOps<ssd::ChunkStateOp>(*module),
                    1);
  ok &= expectCount("ssd.state_passing",
                    countOps<ssd::StatePassingOp>(*module), 1);
  ok &= expectCount("ssd.chunk_scan", countOps<ssd::ChunkScanOp>(*module), 1);
  if (!ok)
    return 1;
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "ssd-consumer: the decomposed layer does not verify\n");
    return 1;
  }
  std::printf("ssd-consumer: ssd-decompose gave the six step ops\n");
  return 0;
}
