//===- CpuJit.h - a layer's function compiled for the host CPU --*- C++ -*-===//
//
// The one way the project runs a layer on the CPU in process: the CPU
// pipeline lowers the layer's memref function (LayerModule.h), MLIR's
// ExecutionEngine compiles it at -O3 with the runtime helpers it may call,
// and each call runs on a thread with a large stack. ssd-run's CPU backend
// and the C API's CPU kernels (ssd-c/Layer.h) are both built on it.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_CPUJIT_CPUJIT_H
#define SSD_CPUJIT_CPUJIT_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "ssd/Conversion/Pipelines.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace ssd {

/// The dialects and LLVM IR translations a JIT-compiled layer needs, from
/// its construction through the CPU pipeline to LLVM IR.
mlir::DialectRegistry cpuJitRegistry();

/// Lowers `module` in place with the CPU pipeline; `threads` > 0 runs the
/// chunk loops on that many threads of MLIR's async runtime, and the
/// sequence runs as a loop over segments of `segmentChunks` chunks (0: at
/// once; CPUPipelineOptions::segmentChunks). On failure the module's
/// context has reported why.
mlir::LogicalResult
lowerForCpu(mlir::ModuleOp module, int32_t threads,
            int64_t segmentChunks = CPUPipelineOptions().segmentChunks);

/// Compiles a lowered module for this machine at -O3, loading MLIR's C
/// runner utilities and, for `threads` > 0, its async runtime; the error
/// names a missing library or the JIT's failure.
llvm::Expected<std::unique_ptr<mlir::ExecutionEngine>>
compileForCpu(mlir::ModuleOp lowered, int32_t threads);

/// Runs `body` on a thread whose stack is large enough for the temporaries
/// the lowering keeps there: compiled layers are called from it. Returns once
/// no thread of MLIR's async runtime still runs code of those calls, so that
/// their engine may be destroyed right after.
void runOnKernelStack(llvm::function_ref<void()> body);

} // namespace ssd

#endif // SSD_CPUJIT_CPUJIT_H
