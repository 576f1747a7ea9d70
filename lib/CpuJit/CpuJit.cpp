//===- CpuJit.cpp - a layer's function compiled for the host CPU ----------===//
#include "ssd/CpuJit/CpuJit.h"

#include "ssd/Conversion/Pipelines.h"
#include "ssd/InitAllDialects.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/thread.h"

#include <functional>
#include <optional>
#include <string>

using namespace mlir;

namespace {
/// The stack of the thread that runs compiled code: the address space is
/// reserved, not committed, so a generous size costs nothing.
constexpr unsigned kKernelStackSize = 1u << 30;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

DialectRegistry ssd::cpuJitRegistry() {
  DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  ssd::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  return registry;
}

LogicalResult ssd::lowerForCpu(ModuleOp module, int32_t threads) {
  PassManager pm(module.getContext());
  CPUPipelineOptions options;
  options.parallel = threads > 0;
  options.threads = threads;
  buildCPUPipeline(pm, options);
  return pm.run(module);
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
ssd::compileForCpu(ModuleOp lowered, int32_t threads) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // ExecutionEngineOptions::transformer is a function_ref: keep the function.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  // MLIR's runtime helpers (memrefCopy for non-contiguous copies, ...).
  SmallVector<StringRef> libs;
#ifdef SSD_MLIR_C_RUNNER_UTILS
  if (llvm::sys::fs::exists(SSD_MLIR_C_RUNNER_UTILS))
    libs.push_back(SSD_MLIR_C_RUNNER_UTILS);
#endif
  if (threads > 0) {
#ifdef SSD_MLIR_ASYNC_RUNTIME
    if (!llvm::sys::fs::exists(SSD_MLIR_ASYNC_RUNTIME))
      return error("threads > 0 needs " SSD_MLIR_ASYNC_RUNTIME);
    libs.push_back(SSD_MLIR_ASYNC_RUNTIME);
#else
    return error("threads > 0: MLIR's async runtime library was not found "
                 "when the project was built");
#endif
  }
  options.sharedLibPaths = libs;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(lowered, options);
  if (!engine)
    return error("JIT compilation failed: " +
                 llvm::toString(engine.takeError()));
  return std::move(*engine);
}

void ssd::runOnKernelStack(llvm::function_ref<void()> body) {
  llvm::thread worker(std::optional<unsigned>(kKernelStackSize),
                      [&] { body(); });
  worker.join();
}
