//===- TmaByValue.cpp - TMA descriptors as grid-constant parameters -------===//
//
// ssd-tma-descriptors-by-value: after convert-gpu-to-nvvm, the descriptor
// pointers that the GPU lowerings named become byval grid-constant kernel
// parameters, so that the runtime passes the 128-byte descriptors in the
// launch's parameters rather than copying them into global memory first.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "ssd/Conversion/SSDToGPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace ssd {
#define GEN_PASS_DEF_SSDTMADESCRIPTORSBYVALUE
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"
} // namespace ssd

using namespace mlir;
using namespace ssd::gpu_lowering;

namespace {

/// The size and alignment of a CUtensorMap.
constexpr int64_t kDescriptorBytes = 128;
constexpr int64_t kDescriptorAlign = 64;

LogicalResult passByValue(LLVM::LLVMFuncOp func) {
  auto positions =
      func->getAttrOfType<DenseI64ArrayAttr>(kTmaDescriptorsAttrName);
  auto expected =
      func->getAttrOfType<IntegerAttr>(kLoweredArgCountAttrName);
  if (!positions && !expected)
    return success();
  if (!positions || !expected)
    return func.emitError() << "'" << kTmaDescriptorsAttrName << "' and '"
                            << kLoweredArgCountAttrName
                            << "' must be given together";
  int64_t count = func.getNumArguments();
  if (count != expected.getInt())
    return func.emitError()
           << "kernel '" << func.getSymName() << "' has " << count
           << " lowered arguments, " << kLoweredArgCountAttrName << " says "
           << expected.getInt()
           << " (the TMA descriptor positions were counted for memref "
              "arguments as expanded descriptors)";
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  auto bytes = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                        kDescriptorBytes);
  for (int64_t position : positions.asArrayRef()) {
    if (position < 0 || position >= count)
      return func.emitError()
             << "TMA descriptor position " << position << " is outside the "
             << count << " arguments of kernel '" << func.getSymName() << "'";
    Type type = func.getArgument(position).getType();
    auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
    if (!pointer || pointer.getAddressSpace() != 0)
      return func.emitError()
             << "TMA descriptor position " << position << " of kernel '"
             << func.getSymName() << "' is " << type
             << ", expected !llvm.ptr";
    unsigned index = static_cast<unsigned>(position);
    func.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(bytes));
    func.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                    b.getI64IntegerAttr(kDescriptorAlign));
    func.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                    b.getUnitAttr());
  }
  func->removeAttr(kTmaDescriptorsAttrName);
  func->removeAttr(kLoweredArgCountAttrName);
  return success();
}

struct SSDTmaDescriptorsByValuePass
    : ssd::impl::SSDTmaDescriptorsByValueBase<SSDTmaDescriptorsByValuePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (failed(passByValue(func)))
        return signalPassFailure();
  }
};

} // namespace
