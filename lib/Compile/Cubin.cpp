//===- Cubin.cpp - the cubin of the lowered module ------------------------===//
#include "ssd/Compile/Artifact.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace ssd;

/// The symbol of the binary that holds the kernels.
static constexpr llvm::StringLiteral kBinaryName = "ssd_kernels";

static const char *formatName(gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Offload:
    return "offload (LLVM bitcode)";
  case gpu::CompilationTarget::Assembly:
    return "assembly (PTX)";
  case gpu::CompilationTarget::Binary:
    return "bin (cubin)";
  case gpu::CompilationTarget::Fatbin:
    return "fatbin";
  }
  return "unknown";
}

std::optional<std::vector<char>> ssd::extractCubin(ModuleOp module,
                                                   std::string &chip,
                                                   std::string &error) {
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kBinaryName);
  if (!binary) {
    error = "the lowered module has no 'gpu.binary @ssd_kernels' (the "
            "serialised kernels)";
    return std::nullopt;
  }
  ArrayAttr objects = binary.getObjects();
  if (objects.size() != 1) {
    error = "gpu.binary @ssd_kernels holds " + std::to_string(objects.size()) +
            " objects, expected exactly one";
    return std::nullopt;
  }
  auto object = cast<gpu::ObjectAttr>(objects[0]);
  auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
  if (!target) {
    error = "gpu.binary @ssd_kernels: the object's target is not #nvvm.target";
    return std::nullopt;
  }
  if (object.getFormat() != gpu::CompilationTarget::Binary) {
    error = std::string("gpu.binary @ssd_kernels: the object is ") +
            formatName(object.getFormat()) +
            ", expected a cubin (gpu-module-to-binary format=bin)";
    return std::nullopt;
  }
  StringRef bytes = object.getObject().getValue();
  if (!bytes.starts_with("\x7f" "ELF")) {
    error = "gpu.binary @ssd_kernels: the object is not an ELF cubin";
    return std::nullopt;
  }
  chip = target.getChip().str();
  return std::vector<char>(bytes.begin(), bytes.end());
}
