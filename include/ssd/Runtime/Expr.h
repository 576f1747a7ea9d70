//===- Expr.h - Launch expressions as the runtime names them ----*- C++ -*-===//
//
// The grammar and evaluator live in the artifact library.
//
//===----------------------------------------------------------------------===//

#ifndef SSD_RUNTIME_EXPR_H
#define SSD_RUNTIME_EXPR_H

#include "ssd/Artifact/Expr.h"
#include "ssd/Runtime/Status.h"

namespace ssd::rt {
using artifact::Expr;
using artifact::SymbolTable;
} // namespace ssd::rt

#endif // SSD_RUNTIME_EXPR_H
