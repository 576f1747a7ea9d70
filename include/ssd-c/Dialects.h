/*===- ssd-c/Dialects.h - C API for the ssd dialect ---------------*- C -*-===*\
|*                                                                            *|
|* Registration of the ssd dialect, alone or with every upstream dialect      *|
|* that ssd-opt accepts. Link libSSDCAPI.so, which also exports the upstream  *|
|* MLIR C API (mlir-c/IR.h, mlir-c/Pass.h, mlir-c/RegisterEverything.h).      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SSD_C_DIALECTS_H
#define SSD_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/RegisterEverything.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The ssd dialect alone: mlirGetDialectHandle__ssd__().
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(SSD, ssd);

/// Adds the ssd dialect and every upstream dialect and dialect extension to
/// `registry`: the same set as ssd-opt, so any IR ssd-opt reads parses in a
/// context created with this registry.
MLIR_CAPI_EXPORTED void ssdRegisterAllDialects(MlirDialectRegistry registry);

#ifdef __cplusplus
}
#endif

#endif // SSD_C_DIALECTS_H
