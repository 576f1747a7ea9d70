//===- Context.h - an MLIR context for compiling SSD layers -----*- C++ -*-===//
#ifndef SSD_COMPILE_CONTEXT_H
#define SSD_COMPILE_CONTEXT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>
#include <string>

namespace ssd {

/// A context with every dialect, extension and LLVM IR translation the GPU
/// pipelines need, whose diagnostics are collected as text instead of
/// printed.
class CompileContext {
public:
  CompileContext();
  ~CompileContext();

  mlir::MLIRContext &get() { return context; }
  /// The diagnostics so far, one per line ("loc: message").
  const std::string &diagnostics() const { return collected; }
  /// `what`, followed by ": " and the first diagnostic when there is one.
  std::string describe(const std::string &what) const;

private:
  mlir::MLIRContext context;
  std::string collected;
  std::string first;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
};

} // namespace ssd

#endif // SSD_COMPILE_CONTEXT_H
