//===- SSDDialect.cpp - the ssd dialect -----------------------------------===//
#include "ssd/Dialect/SSD/IR/SSDDialect.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

using namespace mlir;
using namespace ssd;

#include "ssd/Dialect/SSD/IR/SSDDialect.cpp.inc"

void SSDDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ssd/Dialect/SSD/IR/SSDOps.cpp.inc"
      >();
}
