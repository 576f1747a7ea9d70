//===- ssd-capi.c - the C API of libSSDCAPI.so, end to end ----------------===//
//
// Links libSSDCAPI.so alone: registers the dialects and passes, parses and
// verifies IR, runs ssd-decompose through the pass manager, and reports
// parse, verifier and pipeline errors through the C callbacks.
//
//===----------------------------------------------------------------------===//

/* A block comment: the continued RUN line would trip -Wcomment in a // one.
 RUN: %cc %s -std=c11 -Wall -Wextra -Werror -I%ssd_src_root/include \
 RUN:   -I%mlir_include_dir -L%ssd_lib_dir -lSSDCAPI \
 RUN:   -Wl,-rpath,%ssd_lib_dir -o %t
 RUN: %t 2>&1 | FileCheck %s
*/

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "ssd-c/Dialects.h"
#include "ssd-c/IR.h"
#include "ssd-c/Passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Text written by MLIR callbacks, gathered so the test can print it after the
// call that produced it (and so its order in the output is deterministic).
typedef struct {
  char data[8192];
  size_t size;
} Buffer;

static void appendToBuffer(MlirStringRef text, void *userData) {
  Buffer *buffer = (Buffer *)userData;
  size_t room = sizeof(buffer->data) - buffer->size - 1;
  size_t length = text.length < room ? text.length : room;
  memcpy(buffer->data + buffer->size, text.data, length);
  buffer->size += length;
  buffer->data[buffer->size] = '\0';
}

static void clearBuffer(Buffer *buffer) {
  buffer->size = 0;
  buffer->data[0] = '\0';
}

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

// Records each diagnostic as "<location>: <message>" on its own line.
static MlirLogicalResult recordDiagnostic(MlirDiagnostic diagnostic,
                                          void *userData) {
  mlirLocationPrint(mlirDiagnosticGetLocation(diagnostic), appendToBuffer,
                    userData);
  appendToBuffer(mlirStringRefCreateFromCString(": "), userData);
  mlirDiagnosticPrint(diagnostic, appendToBuffer, userData);
  appendToBuffer(mlirStringRefCreateFromCString("\n"), userData);
  return mlirLogicalResultSuccess();
}

static void check(int condition, const char *what) {
  if (!condition) {
    fprintf(stdout, "FAILED: %s\n", what);
    exit(1);
  }
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  ssdRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  return context;
}

// The combined op with every optional input that a plain (not varlen) call
// takes, so the test sees each one forwarded to its step.
static const char *kCombined =
    "func.func @ssd(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,\n"
    "               %A: tensor<2xf32>, %B: tensor<1x64x1x8xf32>,\n"
    "               %C: tensor<1x64x1x8xf32>, %D: tensor<2xf32>,\n"
    "               %z: tensor<1x64x2x4xf32>, %db: tensor<2xf32>,\n"
    "               %init: tensor<1x2x4x8xf32>)\n"
    "    -> (tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>) {\n"
    "  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)\n"
    "      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<2xf32>)\n"
    "      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)\n"
    "      D(%D : tensor<2xf32>) z(%z : tensor<1x64x2x4xf32>)\n"
    "      dt_bias(%db : tensor<2xf32>)\n"
    "      initial_states(%init : tensor<1x2x4x8xf32>)\n"
    "      {chunk_size = 16 : i64, dt_softplus}\n"
    "      -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>\n"
    "  return %y, %fs : tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>\n"
    "}\n";

// `A` has 3 heads where `x` has 2: well-formed text, invalid IR.
static const char *kWrongHeads =
    "func.func @bad(%x: tensor<1x64x2x4xf32>, %dt: tensor<1x64x2xf32>,\n"
    "               %A: tensor<3xf32>, %B: tensor<1x64x1x8xf32>,\n"
    "               %C: tensor<1x64x1x8xf32>) -> tensor<1x64x2x4xf32> {\n"
    "  %y, %fs = ssd.combined x(%x : tensor<1x64x2x4xf32>)\n"
    "      dt(%dt : tensor<1x64x2xf32>) A(%A : tensor<3xf32>)\n"
    "      B(%B : tensor<1x64x1x8xf32>) C(%C : tensor<1x64x1x8xf32>)\n"
    "      {chunk_size = 16 : i64}\n"
    "      -> tensor<1x64x2x4xf32>, tensor<1x2x4x8xf32>\n"
    "  return %y : tensor<1x64x2x4xf32>\n"
    "}\n";

static void testDialectHandle(void) {
  printf("testDialectHandle\n");
  MlirDialectHandle handle = mlirGetDialectHandle__ssd__();
  MlirContext context = mlirContextCreate();
  mlirDialectHandleRegisterDialect(handle, context);
  MlirDialect dialect = mlirDialectHandleLoadDialect(handle, context);
  check(!mlirDialectIsNull(dialect), "the ssd dialect loads from its handle");
  MlirStringRef name = mlirDialectGetNamespace(dialect);
  printf("namespace: %.*s\n", (int)name.length, name.data);
  mlirContextDestroy(context);
}
// CHECK-LABEL: testDialectHandle
// CHECK-NEXT:  namespace: ssd

static void testDecompose(void) {
  printf("testDecompose\n");
  MlirContext context = createContext();
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kCombined));
  check(!mlirModuleIsNull(module), "the combined op parses");
  MlirOperation moduleOp = mlirModuleGetOperation(module);
  printf("verified: %d\n", mlirOperationVerify(moduleOp));

  Buffer errors;
  clearBuffer(&errors);
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString("builtin.module(ssd-decompose)"),
      appendToBuffer, &errors);
  check(mlirLogicalResultIsSuccess(parsed), errors.data);
  printf("pipeline: ");
  mlirPrintPassPipeline(opm, printToStdout, NULL);
  printf("\n");

  MlirLogicalResult ran = mlirPassManagerRunOnOp(pm, moduleOp);
  printf("ran: %d\n", mlirLogicalResultIsSuccess(ran));
  printf("verified after: %d\n", mlirOperationVerify(moduleOp));
  mlirOperationPrint(moduleOp, printToStdout, NULL);
  printf("\n");

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
}
// clang-format off
// CHECK-LABEL: testDecompose
// CHECK-NEXT:  verified: 1
// CHECK-NEXT:  pipeline: builtin.module(ssd-decompose{chunk-size=0})
// CHECK-NEXT:  ran: 1
// CHECK-NEXT:  verified after: 1
// CHECK:       func.func @ssd(%[[X:[^:]+]]: {{[^,]+}}, %[[DT:[^:]+]]: {{[^,]+}}, %[[A:[^:]+]]: {{[^,]+}}, %[[B:[^:]+]]: {{[^,]+}}, %[[C:[^:]+]]: {{[^,]+}}, %[[D:[^:]+]]: {{[^,]+}}, %[[Z:[^:]+]]: {{[^,]+}}, %[[DB:[^:]+]]: {{[^,]+}}, %[[INIT:[^:]+]]: {{[^,)]+}})
// CHECK-NOT:   ssd.combined
// CHECK:       %[[DTO:.+]], %[[DA:.+]] = ssd.chunk_cumsum dt(%[[DT]] : tensor<1x64x2xf32>) A(%[[A]] : tensor<2xf32>) dt_bias(%[[DB]] : tensor<2xf32>) {dt_softplus} -> tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>
// CHECK-NEXT:  %[[CS:.+]] = ssd.chunk_state x(%[[X]] : {{.*}}) B(%[[B]] : {{.*}}) dt(%[[DTO]] : {{.*}}) dA_cumsum(%[[DA]] : {{.*}}) -> tensor<1x4x2x4x8xf32>
// CHECK-NEXT:  %[[OUT:.+]], %[[FS:.+]] = ssd.state_passing states(%[[CS]] : {{.*}}) dA_cumsum(%[[DA]] : {{.*}}) initial_states(%[[INIT]] : {{.*}}) -> tensor<1x4x2x4x8xf32>, tensor<1x2x4x8xf32>
// CHECK-NEXT:  %[[CB:.+]] = ssd.bmm C(%[[C]] : {{.*}}) B(%[[B]] : {{.*}}) -> tensor<1x4x1x16x16xf32>
// CHECK-NEXT:  %[[SEG:.+]] = ssd.segsum dA_cumsum(%[[DA]] : {{.*}}) -> tensor<1x2x4x16x16xf32>
// CHECK-NEXT:  %[[Y:.+]] = ssd.chunk_scan x(%[[X]] : {{.*}}) dt(%[[DTO]] : {{.*}}) dA_cumsum(%[[DA]] : {{.*}}) segsum(%[[SEG]] : {{.*}}) C(%[[C]] : {{.*}}) CB(%[[CB]] : {{.*}}) states(%[[OUT]] : {{.*}}) D(%[[D]] : {{.*}}) z(%[[Z]] : {{.*}}) -> tensor<1x64x2x4xf32>
// CHECK-NEXT:  return %[[Y]], %[[FS]]
// CHECK-NOT:   ssd.combined
// clang-format on

static void testVerifierError(void) {
  printf("testVerifierError\n");
  MlirContext context = createContext();
  Buffer diagnostics;
  clearBuffer(&diagnostics);
  MlirDiagnosticHandlerID handler = mlirContextAttachDiagnosticHandler(
      context, recordDiagnostic, &diagnostics, NULL);

  // The verifying parser rejects the module outright...
  MlirModule rejected = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString(kWrongHeads));
  printf("parse with verifier: %s\n",
         mlirModuleIsNull(rejected) ? "null" : "module");
  printf("%s", diagnostics.data);

  // ...while mlirOperationVerify reports the same error on an unverified one.
  clearBuffer(&diagnostics);
  MlirModule module = ssdModuleCreateParseUnverified(
      context, mlirStringRefCreateFromCString(kWrongHeads));
  check(!mlirModuleIsNull(module), "well-formed text parses unverified");
  check(diagnostics.size == 0, "parsing unverified reports nothing");
  printf("verified: %d\n", mlirOperationVerify(mlirModuleGetOperation(module)));
  printf("%s", diagnostics.data);

  mlirModuleDestroy(module);
  mlirContextDetachDiagnosticHandler(context, handler);
  mlirContextDestroy(context);
}
// clang-format off
// CHECK-LABEL: testVerifierError
// CHECK-NEXT:  parse with verifier: null
// CHECK-NEXT:  loc("-":4:13): 'ssd.combined' op operand 'A' dimension 0 (h) is 3, expected 2 as in operand 'x'
// CHECK-NEXT:  verified: 0
// CHECK-NEXT:  loc("-":4:13): 'ssd.combined' op operand 'A' dimension 0 (h) is 3, expected 2 as in operand 'x'
// clang-format on

static void testParseError(void) {
  printf("testParseError\n");
  MlirContext context = createContext();
  Buffer diagnostics;
  clearBuffer(&diagnostics);
  MlirDiagnosticHandlerID handler = mlirContextAttachDiagnosticHandler(
      context, recordDiagnostic, &diagnostics, NULL);
  MlirModule module = mlirModuleCreateParse(
      context, mlirStringRefCreateFromCString("%y = ssd.nope() : () -> f32"));
  printf("parse: %s\n", mlirModuleIsNull(module) ? "null" : "module");
  printf("%s", diagnostics.data);
  mlirContextDetachDiagnosticHandler(context, handler);
  mlirContextDestroy(context);
}
// CHECK-LABEL: testParseError
// CHECK-NEXT:  parse: null
// CHECK-NEXT:  loc("-":1:6): custom op 'ssd.nope' is unknown

static void testBadPipeline(void) {
  printf("testBadPipeline\n");
  MlirContext context = createContext();
  Buffer errors;
  clearBuffer(&errors);
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(ssd-no-such-pass)"),
      appendToBuffer, &errors);
  printf("parsed: %d\n", mlirLogicalResultIsSuccess(parsed));
  printf("%s\n", errors.data);
  mlirPassManagerDestroy(pm);
  mlirContextDestroy(context);
}
// clang-format off
// CHECK-LABEL: testBadPipeline
// CHECK-NEXT:  parsed: 0
// CHECK-NEXT:  'ssd-no-such-pass' does not refer to a registered pass or pass pipeline
// clang-format on

int main(void) {
  ssdRegisterAllPasses();
  testDialectHandle();
  testDecompose();
  testVerifierError();
  testParseError();
  testBadPipeline();
  return 0;
}
