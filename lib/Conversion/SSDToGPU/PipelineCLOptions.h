//===- PipelineCLOptions.h - command-line knobs of the GPU pipelines -*- C++
//-*-===//
//
// The options `ssd-gpu-unfused-pipeline` and `ssd-gpu-fused-pipeline` share,
// written once; each pipeline derives its own options struct from it.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_LIB_CONVERSION_SSDTOGPU_PIPELINECLOPTIONS_H
#define SSD_LIB_CONVERSION_SSDTOGPU_PIPELINECLOPTIONS_H

#include "ssd/Conversion/SSDToGPU/Pipeline.h"

#include "mlir/Pass/PassOptions.h"

namespace ssd {

template <typename Derived>
struct GPUPipelineCLOptionsBase : mlir::PassPipelineOptions<Derived> {
  using Base = mlir::PassPipelineOptions<Derived>;
  template <typename T> using Option = typename Base::template Option<T>;

  Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Chunk size for ssd-decompose (0 keeps the op's)"),
      llvm::cl::init(0)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: bin (cubin), isa (PTX), "
                     "fatbin, llvm; none stops before serialisation"),
      llvm::cl::init("bin")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("Optimisation level"),
                       llvm::cl::init(3)};
  Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("mma.sync for bf16/f16 matrix products"),
      llvm::cl::init(true)};

  /// The knobs as the pipeline builders take them.
  GPUPipelineOptions toOptions() const {
    GPUPipelineOptions options;
    options.chunkSize = chunkSize;
    options.chip = chip;
    options.features = features;
    options.format = format;
    options.optLevel = optLevel;
    options.tensorCores = tensorCores;
    return options;
  }
};

} // namespace ssd

#endif // SSD_LIB_CONVERSION_SSDTOGPU_PIPELINECLOPTIONS_H
