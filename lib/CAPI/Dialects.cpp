//===- Dialects.cpp - C API for the ssd dialect ---------------------------===//
#include "ssd-c/Dialects.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "ssd/Dialect/SSD/IR/SSDDialect.h"
#include "ssd/InitAllDialects.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(SSD, ssd, ssd::SSDDialect)

void ssdRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::DialectRegistry &cppRegistry = *unwrap(registry);
  mlir::registerAllDialects(cppRegistry);
  mlir::registerAllExtensions(cppRegistry);
  ssd::registerAllDialects(cppRegistry);
}
