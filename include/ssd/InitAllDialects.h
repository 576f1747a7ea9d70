//===- InitAllDialects.h - register the project's dialects ------*- C++ -*-===//
#ifndef SSD_INITALLDIALECTS_H
#define SSD_INITALLDIALECTS_H

#include "mlir/IR/DialectRegistry.h"
#include "ssd/Dialect/SSD/IR/SSDDialect.h"

namespace ssd {

/// Adds every dialect defined by the project to `registry`.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<ssd::SSDDialect>();
}

} // namespace ssd

#endif // SSD_INITALLDIALECTS_H
