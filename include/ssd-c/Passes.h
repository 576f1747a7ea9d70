/*===- ssd-c/Passes.h - C API for the project's passes ------------*- C -*-===*\
|*                                                                            *|
|* Registration of the project's passes with MLIR's global pass registry, so  *|
|* that pipeline strings (mlirParsePassPipeline and                           *|
|* mlirOpPassManagerAddPipeline) can name them. The upstream passes register  *|
|* through mlirRegisterAllPasses().                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SSD_C_PASSES_H
#define SSD_C_PASSES_H

#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every pass and pass pipeline of the project (ssd-decompose, ...).
/// Calling it again is harmless.
MLIR_CAPI_EXPORTED void ssdRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif // SSD_C_PASSES_H
