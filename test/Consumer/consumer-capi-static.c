/*===- consumer-capi-static.c - a C program on libSSDCAPIStatic.a ---------===*\
|*                                                                            *|
|* Linked against the static C API archive of the installed package: parses   *|
|* a layer, runs ssd-decompose from a pipeline string, counts the ops by name *|
|* (no ssd.combined, each step op once), and checks that IR with a wrong head *|
|* count fails verification. Exits non-zero, saying what is wrong, otherwise. *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "ssd-c/Dialects.h"
#include "ssd-c/IR.h"
#include "ssd-c/Passes.h"

#include <stdio.h>
#include <string.h>

static const char *const layerSource =
    "func.func @layer(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,\n"
    "                 %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>,\n"
    "                 %C: tensor<1x64x1x8xf32>)\n"
    "    -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {\n"
    "  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)\n"
    "      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>)\n"
    "      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)\n"
    "      {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>\n"
    "  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>\n"
    "}\n";

/* `A` has 3 heads where `x` has 2: well-formed text, invalid IR. */
static const char *const wrongHeadsSource =
    "func.func @bad(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,\n"
    "               %A: tensor<3xf32>, %B: tensor<1x64x1x8xf32>,\n"
    "               %C: tensor<1x64x1x8xf32>) -> tensor<1x64x2x4xf32> {\n"
    "  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)\n"
    "      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<3xf32>)\n"
    "      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)\n"
    "      {chunk_size = 32 : i64} -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>\n"
    "  return %y : tensor<1x64x2x4xf32>\n"
    "}\n";

typedef struct {
  const char *name;
  int count;
} OpCount;

static MlirWalkResult countIfNamed(MlirOperation op, void *userData) {
  OpCount *wanted = (OpCount *)userData;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length == strlen(wanted->name) &&
      memcmp(name.data, wanted->name, name.length) == 0)
    ++wanted->count;
  return MlirWalkResultAdvance;
}

/* Returns 1 when `name` occurs `expected` times in `op`, else says so. */
static int expectCount(MlirOperation op, const char *name, int expected) {
  OpCount wanted = {name, 0};
  mlirOperationWalk(op, countIfNamed, &wanted, MlirWalkPreOrder);
  if (wanted.count == expected)
    return 1;
  fprintf(stderr, "ssd-consumer-capi-static: %s occurs %d times, expected %d\n",
          name, wanted.count, expected);
  return 0;
}

static void printToStderr(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stderr);
}

/* Silences the verifier error that the last check provokes on purpose. */
static MlirLogicalResult ignoreDiagnostic(MlirDiagnostic diagnostic,
                                          void *userData) {
  (void)diagnostic;
  (void)userData;
  return mlirLogicalResultSuccess();
}

static int checkDecompose(MlirContext context) {
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(layerSource));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "ssd-consumer-capi-static: the layer does not parse\n");
    return 0;
  }
  MlirOperation moduleOp = mlirModuleGetOperation(module);
  MlirPassManager pm = mlirPassManagerCreate(context);
  int ok = mlirLogicalResultIsSuccess(mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(ssd-decompose)"),
      printToStderr, NULL));
  if (!ok)
    fprintf(stderr, "\nssd-consumer-capi-static: the pipeline "
                    "builtin.module(ssd-decompose) does not parse\n");
  if (ok && !mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, moduleOp))) {
    fprintf(stderr, "ssd-consumer-capi-static: ssd-decompose failed\n");
    ok = 0;
  }
  if (ok) {
    ok &= expectCount(moduleOp, "ssd.combined", 0);
    ok &= expectCount(moduleOp, "ssd.chunk_cumsum", 1);
    ok &= expectCount(moduleOp, "ssd.segsum", 1);
    ok &= expectCount(moduleOp, "ssd.bmm", 1);
    ok &= expectCount(moduleOp, "ssd.chunk_state", 1);
    ok &= expectCount(moduleOp, "ssd.state_passing", 1);
    ok &= expectCount(moduleOp, "ssd.chunk_scan", 1);
  }
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  return ok;
}

static int checkVerifierRejects(MlirContext context) {
  MlirDiagnosticHandlerID handler = mlirContextAttachDiagnosticHandler(
      context, ignoreDiagnostic, NULL, NULL);
  MlirModule module = ssdModuleCreateParseUnverified(
      context, mlirStringRefCreateFromCString(wrongHeadsSource));
  int ok = !mlirModuleIsNull(module);
  if (!ok)
    fprintf(stderr, "ssd-consumer-capi-static: well-formed IR does not parse\n");
  if (ok && mlirOperationVerify(mlirModuleGetOperation(module))) {
    fprintf(stderr,
            "ssd-consumer-capi-static: 3 heads in A against 2 in x verified\n");
    ok = 0;
  }
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDetachDiagnosticHandler(context, handler);
  return ok;
}

int main(void) {
  ssdRegisterAllPasses();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  ssdRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);

  int ok = checkDecompose(context);
  ok &= checkVerifierRejects(context);
  mlirContextDestroy(context);
  if (!ok)
    return 1;
  printf("ssd-consumer-capi-static: ssd-decompose gave the six step ops, "
         "the verifier rejected the wrong head count\n");
  return 0;
}
