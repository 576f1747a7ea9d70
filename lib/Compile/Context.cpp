//===- Context.cpp - an MLIR context for compiling SSD layers -------------===//
#include "ssd/Compile/Context.h"

#include "ssd/InitAllDialects.h"
#include "ssd/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

using namespace mlir;
using namespace ssd;

static DialectRegistry makeRegistry() {
  // Pipelines are looked up by name, so every pass must be registered.
  static bool passesRegistered = [] {
    mlir::registerAllPasses();
    ssd::registerAllPasses();
    return true;
  }();
  (void)passesRegistered;
  DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  ssd::registerAllDialects(registry);
  return registry;
}

CompileContext::CompileContext() : context(makeRegistry()) {
  handler = std::make_unique<ScopedDiagnosticHandler>(
      &context, [this](Diagnostic &diag) {
        std::string text;
        llvm::raw_string_ostream os(text);
        Location loc = diag.getLocation();
        if (auto file = dyn_cast<FileLineColLoc>(loc))
          os << file.getFilename().getValue() << ":" << file.getLine() << ":"
             << file.getColumn();
        else
          os << loc;
        os << ": " << diag;
        // One line per diagnostic: messages may span lines.
        for (char &ch : text)
          if (ch == '\n')
            ch = ' ';
        if (diag.getSeverity() == DiagnosticSeverity::Error && first.empty())
          first = text;
        collected += text + "\n";
        return success();
      });
}

CompileContext::~CompileContext() = default;

std::string CompileContext::describe(const std::string &what) const {
  return first.empty() ? what : what + ": " + first;
}
