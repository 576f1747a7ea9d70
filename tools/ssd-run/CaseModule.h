//===- CaseModule.h - the MLIR function that computes one case --*- C++ -*-===//
//
// Builds
//
//   func.func @ssd_case(%x: memref<..>, ..., %y: memref<..>, %fs: memref<..>)
//       attributes {llvm.emit_c_interface} {
//     %xt = bufferization.to_tensor %x restrict : memref<..> to tensor<..>
//     ...
//     %y_t, %fs_t = ssd.combined x(%xt : ..) ... -> .., ..
//     bufferization.materialize_in_destination %y_t in restrict writable %y
//     bufferization.materialize_in_destination %fs_t in restrict writable %fs
//     return
//   }
//
// with static shapes from the case, the inputs present in case order, and
// element types from the run configuration.
//
//===----------------------------------------------------------------------===//
#ifndef SSD_TOOLS_SSDRUN_CASEMODULE_H
#define SSD_TOOLS_SSDRUN_CASEMODULE_H

#include "RunConfig.h"

#include "ssd/Support/Case.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace ssd {

/// The name of the generated function; its C interface is
/// `_mlir_ciface_ssd_case`.
inline constexpr llvm::StringLiteral kCaseFunctionName = "ssd_case";

/// One memref argument of the generated function.
struct KernelArg {
  std::string name; ///< the input name of case.json, or y / final_states
  std::vector<int64_t> shape;
  /// F32, BF16 or F16 (RunConfig's types), or I32 (seq_idx, cu_seqlens).
  DType dtype = DType::F32;
  bool isOutput = false;
};

/// The arguments of the generated function, in order: the inputs present,
/// then y and final_states.
std::vector<KernelArg> caseKernelArgs(const SSDCase &c,
                                      const RunConfig &config);

/// Builds the module; `context` must have the ssd, func, bufferization and
/// tensor dialects loaded or registered.
mlir::OwningOpRef<mlir::ModuleOp> buildCaseModule(mlir::MLIRContext &context,
                                                  const SSDCase &c,
                                                  const RunConfig &config);

} // namespace ssd

#endif // SSD_TOOLS_SSDRUN_CASEMODULE_H
