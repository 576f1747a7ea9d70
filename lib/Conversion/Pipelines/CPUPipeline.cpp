//===- CPUPipeline.cpp - ssd-cpu-pipeline ---------------------------------===//
//
// From ssd ops on tensors inside memref functions to the LLVM dialect:
//   ssd-split-sequence (segments of whole chunks carrying the state)
//   -> ssd-fit-chunk-size (a layer of one chunk without its padding)
//   -> ssd-decompose -> convert-ssd-to-linalg -> canonicalize/CSE
//   -> ssd-cpu-tile-vectorize: per-chunk fusion, register tiles for the
//      products, vector elementwise ops (on tensors)
//   -> empty-tensor elimination (y written in place into the output)
//   -> one-shot bufferize (function boundaries, identity layouts)
//   -> ssd-cpu-strided-gathers (gathers from slices indexed by strides)
//   -> the segment loop's temporaries allocated once, before it
//   -> ssd-cpu-lower-vectors (FMAs, polynomial exp/log1p), linalg to loops
//   -> buffer deallocation -> [parallel: scf.forall -> async runtime]
//   -> vector/scf/memref/math/arith/func/cf/ub to LLVM.
//
//===----------------------------------------------------------------------===//
#include "ssd/Conversion/Passes.h"
#include "ssd/Conversion/Pipelines.h"
#include "ssd/Dialect/SSD/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>
#include <thread>

using namespace mlir;

namespace {

struct CPUPipelineCLOptions : public PassPipelineOptions<CPUPipelineCLOptions> {
  Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Chunk size for ssd-decompose (0 keeps the op's)"),
      llvm::cl::init(0)};
  Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the chunk loops on threads (needs the MLIR async "
                     "runtime library at execution)"),
      llvm::cl::init(false)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Worker threads assumed by the parallel loops (0: the "
                     "hardware concurrency)"),
      llvm::cl::init(0)};
  Option<int64_t> segmentChunks{
      *this, "segment-chunks",
      llvm::cl::desc("Chunks per segment of ssd-split-sequence (0: the whole "
                     "sequence at once)"),
      llvm::cl::init(1)};
  Option<bool> fitChunkSize{
      *this, "fit-chunk-size",
      llvm::cl::desc("Compute layers shorter than a chunk at the smallest "
                     "chunk size that holds them (ssd-fit-chunk-size)"),
      llvm::cl::init(true)};
  Option<bool> vectorize{*this, "vectorize",
                         llvm::cl::desc("Tile and vectorize the contractions"),
                         llvm::cl::init(true)};
};

} // namespace

/// scf.forall -> scf.parallel -> async tasks on the MLIR async runtime
/// (libmlir_async_runtime.so must be loaded by whoever runs the code).
static void addAsyncParallelism(OpPassManager &pm, int64_t threads) {
  pm.addPass(createForallToParallelLoopPass());
  AsyncParallelForPassOptions async;
  async.numWorkerThreads =
      threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  // One forall iteration is a whole chunk (or token row) of work already.
  async.minTaskSize = 1;
  pm.addPass(createAsyncParallelForPass(async));
  pm.addPass(createAsyncToAsyncRuntimePass());
  pm.addPass(createAsyncRuntimeRefCountingPass());
  pm.addPass(createAsyncRuntimeRefCountingOptPass());
  pm.addPass(createConvertAsyncToLLVMPass());
}

void ssd::buildCPUPipeline(OpPassManager &pm,
                           const CPUPipelineOptions &options) {
  if (options.segmentChunks > 0)
    pm.addPass(createSSDSplitSequence(
        SSDSplitSequenceOptions{options.chunkSize, options.segmentChunks}));
  int64_t decomposeChunk = options.chunkSize;
  if (options.fitChunkSize) {
    SSDFitChunkSizeOptions fit;
    fit.chunkSize = options.chunkSize;
    pm.addPass(createSSDFitChunkSize(fit));
    // Every op now carries the chunk size it is to be computed with.
    decomposeChunk = 0;
  }
  pm.addPass(createSSDDecompose(SSDDecomposeOptions{decomposeChunk}));
  pm.addPass(createConvertSSDToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.vectorize || options.parallel) {
    SSDCPUTileAndVectorizeOptions tiling;
    tiling.parallel = options.parallel;
    if (!options.vectorize) {
      tiling.tileM = tiling.tileN = tiling.tileK = 0;
      tiling.vectorWidth = 0;
    }
    pm.addNestedPass<func::FuncOp>(createSSDCPUTileAndVectorize(tiling));
  }

  if (options.segmentChunks > 0)
    pm.addNestedPass<func::FuncOp>(createSSDCPUSinkSegmentUpdates());
  // y's tensor.empty becomes the output buffer it is materialized in, so the
  // layer writes y in place instead of into a temporary copied at the end.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A segment's final state is a new buffer that the segment loop yields.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  // Gathers from slices of larger buffers: lane offsets from the strides.
  pm.addNestedPass<func::FuncOp>(createSSDCPUStridedGathers());
  pm.addNestedPass<func::FuncOp>(createSSDCPUHoistSegmentBuffers());
  if (options.vectorize)
    pm.addNestedPass<func::FuncOp>(createSSDCPULowerVectors());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  if (options.parallel)
    addAsyncParallelism(pm, options.threads);

  pm.addPass(createLowerAffinePass());
  // Fully unrolled transfers: the partial lowering stages vectors through
  // allocas placed inside the loops, which overflows the stack on long runs.
  VectorTransferToSCFOptions transfers;
  transfers.enableFullUnroll();
  pm.addPass(createConvertVectorToSCFPass(transfers));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void ssd::buildCPUPipeline(OpPassManager &pm) {
  buildCPUPipeline(pm, CPUPipelineOptions());
}

void ssd::registerCPUPipeline() {
  PassPipelineRegistration<CPUPipelineCLOptions>(
      "ssd-cpu-pipeline",
      "Lower ssd ops in memref functions to the LLVM dialect for the CPU "
      "(ExecutionEngine / mlir-runner)",
      [](OpPassManager &pm, const CPUPipelineCLOptions &cl) {
        CPUPipelineOptions options;
        options.chunkSize = cl.chunkSize;
        options.vectorize = cl.vectorize;
        options.parallel = cl.parallel;
        options.threads = cl.threads;
        options.segmentChunks = cl.segmentChunks;
        options.fitChunkSize = cl.fitChunkSize;
        ssd::buildCPUPipeline(pm, options);
      });
}
