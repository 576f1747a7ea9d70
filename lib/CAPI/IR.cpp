//===- IR.cpp - C API additions for reading IR ----------------------------===//
#include "ssd-c/IR.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

MlirModule ssdModuleCreateParseUnverified(MlirContext context,
                                          MlirStringRef source) {
  mlir::ParserConfig config(unwrap(context), /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(unwrap(source), config);
  if (!module)
    return MlirModule{nullptr};
  return wrap(module.release());
}
