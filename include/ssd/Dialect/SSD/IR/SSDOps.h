//===- SSDOps.h - ssd dialect operations ------------------------*- C++ -*-===//
#ifndef SSD_DIALECT_SSD_IR_SSDOPS_H
#define SSD_DIALECT_SSD_IR_SSDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "ssd/Dialect/SSD/IR/SSDDialect.h"

#define GET_OP_CLASSES
#include "ssd/Dialect/SSD/IR/SSDOps.h.inc"

#endif // SSD_DIALECT_SSD_IR_SSDOPS_H
