//===- LayerModule.h - the IR of one SSD layer ------------------*- C++ -*-===//
//
// Builds a module with one function that computes `ssd.combined` for a
// LayerSpec. Two calling conventions:
//
//  - Tensor (the GPU pipelines' input):
//      func.func @ssd_layer(%x: tensor<?x?xhxpxT>, ...) -> (y, final_states)
//    with dynamic b and L by default;
//  - Memref (the CPU JIT of ssd-run): memref arguments, outputs written
//    with bufferization.materialize_in_destination, llvm.emit_c_interface.
//
// Arguments come in case.json order (x, dt, A, B, C, D, z, dt_bias,
// initial_states, seq_idx, cu_seqlens), present ones only, then y and
// final_states in the Memref convention.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_COMPILE_LAYERMODULE_H
#define SSD_COMPILE_LAYERMODULE_H

#include "ssd/Support/LayerSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace ssd {

enum class LayerABI { Tensor, Memref };

/// The problem sizes the function is built for; ShapedType::kDynamic leaves a
/// size to run time.
struct LayerShape {
  int64_t batch = mlir::ShapedType::kDynamic;
  int64_t seqlen = mlir::ShapedType::kDynamic;
  /// The sequence count of varlen (cu_seqlens has numSeqs + 1 entries).
  int64_t numSeqs = mlir::ShapedType::kDynamic;
};

/// One argument of the generated function.
struct LayerArg {
  std::string name;        ///< case.json's name, or y / final_states
  std::vector<int64_t> shape;
  mlir::Type elementType;
  bool isOutput = false;
};

/// The arguments (inputs, then in the Memref convention the outputs).
std::vector<LayerArg> layerArgs(mlir::MLIRContext &context,
                                const LayerSpec &spec, const LayerShape &shape,
                                LayerABI abi);

/// The MLIR element type of a layer dtype (F32, BF16 or F16).
mlir::Type elementTypeNamed(mlir::MLIRContext &context, artifact::DType dtype);

/// Builds the module; loads the dialects it needs into `context`. `spec` must
/// be valid (validateLayerSpec).
mlir::OwningOpRef<mlir::ModuleOp>
buildLayerModule(mlir::MLIRContext &context, const LayerSpec &spec,
                 const LayerShape &shape, LayerABI abi,
                 llvm::StringRef functionName, mlir::Location loc);

} // namespace ssd

#endif // SSD_COMPILE_LAYERMODULE_H
