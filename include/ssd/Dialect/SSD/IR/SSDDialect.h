//===- SSDDialect.h - the ssd dialect ---------------------------*- C++ -*-===//
#ifndef SSD_DIALECT_SSD_IR_SSDDIALECT_H
#define SSD_DIALECT_SSD_IR_SSDDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ssd/Dialect/SSD/IR/SSDDialect.h.inc"

#endif // SSD_DIALECT_SSD_IR_SSDDIALECT_H
