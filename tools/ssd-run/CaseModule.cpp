//===- CaseModule.cpp - the MLIR function that computes one case ----------===//
#include "CaseModule.h"

#include "ssd/Dialect/SSD/IR/SSDOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringMap.h"

#include <limits>

using namespace mlir;
using namespace ssd;

static BufferKind bufferKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return BufferKind::F32;
  case ElementKind::BF16:
    return BufferKind::BF16;
  case ElementKind::F16:
    return BufferKind::F16;
  }
  return BufferKind::F32;
}

static Type elementType(MLIRContext &context, BufferKind kind) {
  switch (kind) {
  case BufferKind::F32:
    return Float32Type::get(&context);
  case BufferKind::BF16:
    return BFloat16Type::get(&context);
  case BufferKind::F16:
    return Float16Type::get(&context);
  case BufferKind::I32:
    return IntegerType::get(&context, 32);
  }
  return Type();
}

std::vector<KernelArg> ssd::caseKernelArgs(const SSDCase &c,
                                           const RunConfig &config) {
  std::vector<KernelArg> args;
  for (const std::string &name : c.inputNames()) {
    KernelArg arg;
    arg.name = name;
    if (name == "seq_idx" || name == "cu_seqlens") {
      arg.kind = BufferKind::I32;
      arg.shape = name == "seq_idx" ? c.seqIdx.shape : c.cuSeqlens.shape;
      args.push_back(std::move(arg));
      continue;
    }
    if (name == "x" || name == "B" || name == "C" || name == "z")
      arg.kind = bufferKind(config.dtype);
    else if (name == "initial_states")
      arg.kind = bufferKind(config.stateDtype);
    const FloatTensor *t = name == "x"                ? &c.x
                           : name == "dt"             ? &c.dt
                           : name == "A"              ? &c.A
                           : name == "B"              ? &c.B
                           : name == "C"              ? &c.C
                           : name == "D"              ? &c.D
                           : name == "z"              ? &c.z
                           : name == "dt_bias"        ? &c.dtBias
                                                      : &c.initialStates;
    arg.shape = t->shape;
    args.push_back(std::move(arg));
  }
  args.push_back({"y", c.tokenShape(), bufferKind(config.dtype), true});
  args.push_back(
      {"final_states", c.stateShape(), bufferKind(config.stateDtype), true});
  return args;
}

OwningOpRef<ModuleOp> ssd::buildCaseModule(MLIRContext &context,
                                           const SSDCase &c,
                                           const RunConfig &config) {
  context.loadDialect<ssd::SSDDialect, func::FuncDialect,
                      bufferization::BufferizationDialect>();
  Location loc = NameLoc::get(StringAttr::get(&context, c.name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());

  std::vector<KernelArg> args = caseKernelArgs(c, config);
  SmallVector<Type> argTypes;
  for (const KernelArg &arg : args)
    argTypes.push_back(MemRefType::get(arg.shape, elementType(context, arg.kind)));
  auto func = func::FuncOp::create(b, loc, kCaseFunctionName,
                                   b.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  llvm::StringMap<Value> inputs;
  SmallVector<Value> outputs;
  for (auto [i, arg] : llvm::enumerate(args)) {
    Value memref = entry->getArgument(i);
    if (arg.isOutput) {
      outputs.push_back(memref);
      continue;
    }
    auto tensorType = RankedTensorType::get(arg.shape, elementType(context, arg.kind));
    inputs[arg.name] = bufferization::ToTensorOp::create(
        b, loc, tensorType, memref, /*restrict=*/true);
  }
  auto optional = [&](StringRef name) { return inputs.lookup(name); };

  auto yType = RankedTensorType::get(c.tokenShape(),
                                     elementType(context, bufferKind(config.dtype)));
  Type stateElement = elementType(context, bufferKind(config.stateDtype));
  auto statesType = RankedTensorType::get(c.stateShape(), stateElement);
  DenseF64ArrayAttr dtLimit;
  if (c.dtLimitLo != 0.0 || c.dtLimitHi != std::numeric_limits<double>::infinity())
    dtLimit = b.getDenseF64ArrayAttr({c.dtLimitLo, c.dtLimitHi});
  TypeAttr stateType;
  if (config.stateDtype != ElementKind::F32)
    stateType = TypeAttr::get(stateElement);

  auto combined = CombinedOp::create(
      b, loc, yType, statesType, inputs["x"], inputs["dt"], inputs["A"],
      inputs["B"], inputs["C"], optional("D"), optional("z"),
      optional("dt_bias"), optional("initial_states"), optional("seq_idx"),
      optional("cu_seqlens"), b.getI64IntegerAttr(config.chunkSize),
      c.dtSoftplus ? b.getUnitAttr() : UnitAttr(), dtLimit, stateType);
  for (auto [result, out] : llvm::zip(combined->getResults(), outputs))
    bufferization::MaterializeInDestinationOp::create(
        b, loc, Type(), result, out, /*restrict=*/true, /*writable=*/true);
  func::ReturnOp::create(b, loc);
  return module;
}
