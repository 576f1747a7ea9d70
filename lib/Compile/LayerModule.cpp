//===- LayerModule.cpp - the IR of one SSD layer --------------------------===//
#include "ssd/Compile/LayerModule.h"

#include "ssd/Dialect/SSD/IR/SSDDialect.h"
#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace ssd;

Type ssd::elementTypeNamed(MLIRContext &context, artifact::DType dtype) {
  if (dtype == artifact::DType::BF16)
    return BFloat16Type::get(&context);
  if (dtype == artifact::DType::F16)
    return Float16Type::get(&context);
  return Float32Type::get(&context);
}

std::vector<LayerArg> ssd::layerArgs(MLIRContext &context,
                                     const LayerSpec &spec,
                                     const LayerShape &shape, LayerABI abi) {
  int64_t b = spec.has("varlen") ? 1 : shape.batch;
  int64_t L = shape.seqlen, h = spec.nheads, p = spec.headdim,
          n = spec.dstate, g = spec.ngroups;
  int64_t s = shape.numSeqs;
  Type f32 = Float32Type::get(&context);
  Type io = elementTypeNamed(context, spec.dtype);
  Type state = elementTypeNamed(context, spec.stateDtype);
  Type i32 = IntegerType::get(&context, 32);
  int64_t statesOuter = spec.has("varlen") ? s : b;

  std::vector<LayerArg> args = {{"x", {b, L, h, p}, io},
                                {"dt", {b, L, h}, f32},
                                {"A", {h}, f32},
                                {"B", {b, L, g, n}, io},
                                {"C", {b, L, g, n}, io}};
  if (spec.has("D"))
    args.push_back({"D", {h}, f32});
  if (spec.has("Dhp"))
    args.push_back({"D", {h, p}, f32});
  if (spec.has("z"))
    args.push_back({"z", {b, L, h, p}, io});
  if (spec.has("dt_bias"))
    args.push_back({"dt_bias", {h}, f32});
  if (spec.has("initial_states"))
    args.push_back({"initial_states", {statesOuter, h, p, n}, state});
  if (spec.has("seq_idx"))
    args.push_back({"seq_idx", {b, L}, i32});
  if (spec.has("varlen"))
    args.push_back({"cu_seqlens",
                    {ShapedType::isDynamic(s) ? s : s + 1}, i32});
  if (abi == LayerABI::Memref) {
    args.push_back({"y", {b, L, h, p}, io, true});
    args.push_back({"final_states", {statesOuter, h, p, n}, state, true});
  }
  return args;
}

OwningOpRef<ModuleOp> ssd::buildLayerModule(MLIRContext &context,
                                            const LayerSpec &spec,
                                            const LayerShape &shape,
                                            LayerABI abi,
                                            StringRef functionName,
                                            Location loc) {
  context.loadDialect<ssd::SSDDialect, func::FuncDialect,
                      bufferization::BufferizationDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());

  std::vector<LayerArg> args = layerArgs(context, spec, shape, abi);
  LayerShape outShape = shape;
  if (spec.has("varlen"))
    outShape.batch = 1;
  int64_t statesOuter = spec.has("varlen") ? shape.numSeqs : outShape.batch;
  std::vector<int64_t> tokenShape = {outShape.batch, shape.seqlen, spec.nheads,
                                     spec.headdim};
  std::vector<int64_t> stateShape = {statesOuter, spec.nheads, spec.headdim,
                                     spec.dstate};
  Type io = elementTypeNamed(context, spec.dtype);
  Type stateElement = elementTypeNamed(context, spec.stateDtype);
  auto yType = RankedTensorType::get(tokenShape, io);
  auto statesType = RankedTensorType::get(stateShape, stateElement);

  SmallVector<Type> argTypes, resultTypes;
  for (const LayerArg &arg : args) {
    if (abi == LayerABI::Memref)
      argTypes.push_back(MemRefType::get(arg.shape, arg.elementType));
    else
      argTypes.push_back(RankedTensorType::get(arg.shape, arg.elementType));
  }
  if (abi == LayerABI::Tensor)
    resultTypes = {yType, statesType};
  auto func = func::FuncOp::create(b, loc, functionName,
                                   b.getFunctionType(argTypes, resultTypes));
  if (abi == LayerABI::Memref)
    func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  llvm::StringMap<Value> inputs;
  SmallVector<Value> outputs;
  for (auto [i, arg] : llvm::enumerate(args)) {
    Value value = entry->getArgument(i);
    if (arg.isOutput) {
      outputs.push_back(value);
      continue;
    }
    if (abi == LayerABI::Memref)
      value = bufferization::ToTensorOp::create(
          b, loc, RankedTensorType::get(arg.shape, arg.elementType), value,
          /*restrict=*/true);
    inputs[arg.name] = value;
  }
  auto optional = [&](StringRef name) { return inputs.lookup(name); };

  DenseF64ArrayAttr dtLimit;
  if (spec.has("dt_limit"))
    dtLimit = b.getDenseF64ArrayAttr({spec.dtLimitLo, spec.dtLimitHi});
  TypeAttr stateType;
  if (spec.stateDtype != artifact::DType::F32)
    stateType = TypeAttr::get(stateElement);

  auto combined = CombinedOp::create(
      b, loc, yType, statesType, inputs["x"], inputs["dt"], inputs["A"],
      inputs["B"], inputs["C"], optional("D"), optional("z"),
      optional("dt_bias"), optional("initial_states"), optional("seq_idx"),
      optional("cu_seqlens"), b.getI64IntegerAttr(spec.chunkSize),
      spec.has("softplus") ? b.getUnitAttr() : UnitAttr(), dtLimit, stateType);
  if (abi == LayerABI::Tensor) {
    func::ReturnOp::create(b, loc, combined->getResults());
    return module;
  }
  for (auto [result, out] : llvm::zip(combined->getResults(), outputs))
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), result, out, /*restrict=*/true, /*writable=*/true);
  func::ReturnOp::create(b, loc);
  return module;
}
