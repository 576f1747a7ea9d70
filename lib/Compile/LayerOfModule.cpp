//===- LayerOfModule.cpp - the layer an ssd.combined op computes ----------===//
#include "ssd/Compile/Artifact.h"

#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace ssd;

static std::string typeName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (type.isF32())
    return "f32";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static int64_t dim(Value v, unsigned i) {
  return cast<ShapedType>(v.getType()).getDimSize(i);
}

std::optional<LayerSpec> ssd::layerSpecOfModule(ModuleOp module,
                                                std::string &error) {
  SmallVector<CombinedOp> ops;
  module.walk([&](CombinedOp op) { ops.push_back(op); });
  if (ops.size() != 1) {
    error = "the input must compute exactly one ssd.combined, found " +
            std::to_string(ops.size());
    return std::nullopt;
  }
  CombinedOp op = ops.front();
  LayerSpec spec;
  spec.nheads = dim(op.getX(), 2);
  spec.headdim = dim(op.getX(), 3);
  spec.ngroups = dim(op.getB(), 2);
  spec.dstate = dim(op.getB(), 3);
  for (auto [name, value] : {std::pair<const char *, int64_t>{"nheads", spec.nheads},
                             {"headdim", spec.headdim},
                             {"ngroups", spec.ngroups},
                             {"dstate", spec.dstate}})
    if (ShapedType::isDynamic(value)) {
      error = std::string("ssd.combined: ") + name +
              " must be static (kernels are specialised on it)";
      return std::nullopt;
    }
  spec.chunkSize = op.getChunkSize();
  // Types the enum does not name are refused with validateLayerSpec's words.
  Type x = getElementTypeOrSelf(op.getX().getType());
  std::optional<artifact::DType> dtype = artifact::parseDType(typeName(x));
  if (!dtype) {
    error = "dtype '" + typeName(x) + "' is not one of f32, bf16, f16";
    return std::nullopt;
  }
  Type state = op.getStateElementType();
  std::optional<artifact::DType> stateDtype =
      artifact::parseDType(typeName(state));
  if (!stateDtype) {
    error = "state dtype '" + typeName(state) + "' is not one of f32, f16";
    return std::nullopt;
  }
  spec.dtype = *dtype;
  spec.stateDtype = *stateDtype;
  if (Value d = op.getD())
    spec.add(cast<ShapedType>(d.getType()).getRank() == 2 ? "Dhp" : "D");
  if (op.getZ())
    spec.add("z");
  if (op.getDtBias())
    spec.add("dt_bias");
  if (op.getDtSoftplus())
    spec.add("softplus");
  if (op.getDtLimit()) {
    spec.add("dt_limit");
    std::tie(spec.dtLimitLo, spec.dtLimitHi) = op.getDtLimitOrDefault();
  }
  if (op.getInitialStates())
    spec.add("initial_states");
  if (op.getSeqIdx())
    spec.add("seq_idx");
  if (op.getCuSeqlens())
    spec.add("varlen");
  return spec;
}
