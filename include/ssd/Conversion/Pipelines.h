//===- Pipelines.h - end-to-end pass pipelines ------------------*- C++ -*-===//
#ifndef SSD_CONVERSION_PIPELINES_H
#define SSD_CONVERSION_PIPELINES_H

namespace mlir {
class OpPassManager;
} // namespace mlir

#include <cstdint>

namespace ssd {

/// Knobs of the CPU pipeline.
struct CPUPipelineOptions {
  /// Chunk size handed to ssd-decompose; 0 keeps each op's chunk_size.
  int64_t chunkSize = 0;
  /// Tile and vectorize the matrix products (off: plain loops, for
  /// debugging the lowering).
  bool vectorize = true;
  /// Run the chunk loops on threads through the MLIR async runtime; the
  /// executing process must load libmlir_async_runtime.so (ExecutionEngine
  /// sharedLibPaths, or mlir-runner -shared-libs).
  bool parallel = false;
  /// Worker threads the loop splitting assumes; 0 is the hardware
  /// concurrency of the compiling machine.
  int64_t threads = 0;
  /// Chunks per segment of ssd-split-sequence (the sequence as a loop over
  /// segments carrying the state, so that the intermediates are
  /// segment-sized); 0 runs the whole sequence at once.
  int64_t segmentChunks = 1;
  /// Layers shorter than a chunk computed at the smallest chunk size that
  /// holds them (ssd-fit-chunk-size; off: padded to the full chunk).
  bool fitChunkSize = true;
};

/// Appends to `pm` (anchored on builtin.module) the passes that take a module
/// of func.funcs over memrefs (inputs through bufferization.to_tensor, outputs
/// through bufferization.materialize_in_destination) holding ssd.combined or
/// the step ops, down to the LLVM dialect, ready for mlir::ExecutionEngine.
void buildCPUPipeline(mlir::OpPassManager &pm);
void buildCPUPipeline(mlir::OpPassManager &pm,
                      const CPUPipelineOptions &options);

/// Registers `ssd-cpu-pipeline` (the pipeline above) with the pass registry.
void registerCPUPipeline();

} // namespace ssd

#endif // SSD_CONVERSION_PIPELINES_H
