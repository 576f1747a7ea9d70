//===- Passes.h - ssd to gpu conversion passes ------------------*- C++ -*-===//
#ifndef SSD_CONVERSION_SSDTOGPU_PASSES_H
#define SSD_CONVERSION_SSDTOGPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace ssd {

#define GEN_PASS_DECL
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ssd/Conversion/SSDToGPU/Passes.h.inc"

} // namespace ssd

#endif // SSD_CONVERSION_SSDTOGPU_PASSES_H
