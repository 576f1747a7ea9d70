/*===- ssd-c/IR.h - C API additions for reading IR ----------------*- C -*-===*\
|*                                                                            *|
|* Parsing without the verifier, so that an embedder can tell malformed text  *|
|* (a parse error) from well-formed but invalid IR (mlirOperationVerify).     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SSD_C_IR_H
#define SSD_C_IR_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Parses `source` into a module without running the verifier. Returns a null
/// module on a syntax error, after reporting it to the context's diagnostic
/// handlers; the caller owns a non-null result (mlirModuleDestroy).
/// mlirModuleCreateParse is the verifying variant.
MLIR_CAPI_EXPORTED MlirModule
ssdModuleCreateParseUnverified(MlirContext context, MlirStringRef source);

#ifdef __cplusplus
}
#endif

#endif // SSD_C_IR_H
